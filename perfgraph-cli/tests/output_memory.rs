//! perfgraph's outputs under an address-space limit (`ulimit -v`): with OTLP sending every call as a span
//! to a collector here, Prometheus and a Perfetto trace all on, `examples/span_storm` (2 threads, 800,000
//! calls) exits 0 in 5 of 5 runs, and its exit line says what the spans lost and why, each cause counted.
//! Before the outputs' memory budget and OTLP's bounded requests, such runs aborted (exit 134) in 2 of 3
//! (5 of 5 with twice the calls): one request held every span of a drain (docs/performance.md).
//!
//! The limit is measured, not guessed: the program's own `VmPeak` without outputs, plus [`MARGIN`].

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use common::example;

/// Address space above the program's own need without outputs: what the outputs may take, and the
/// margin at which every run aborted before (docs/performance.md).
const MARGIN: u64 = 56 << 20;

/// A collector that takes every request (`200`, the body read and thrown away), on its own threads.
fn collector() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; length];
                if reader.read_exact(&mut body).is_ok() {
                    let _ = reader.get_mut().write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            });
        }
    });
    port
}

/// `span_storm` with `env`, under an address-space limit of `limit` bytes if given.
fn storm(env: &[(&str, String)], limit: Option<u64>) -> Output {
    let dir = common::scratch("perfgraph-output-memory", &format!("{limit:?}"));
    let mut cmd = Command::new(example("span_storm"));
    for name in perfgraph_core::Config::VARIABLE_NAMES {
        cmd.env_remove(name);
    }
    cmd.env("XDG_RUNTIME_DIR", &dir)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off")
        .env("THREADS", "2")
        .env("CALLS", "200000")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    if let Some(limit) = limit {
        // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
    }
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The `VmPeak` the program printed, bytes.
fn vm_peak(out: &Output) -> u64 {
    let text = String::from_utf8_lossy(&out.stdout);
    let kb: u64 = text
        .split("VmPeak: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no VmPeak in {text:?}"));
    kb * 1024
}

#[test]
fn all_spans_prometheus_and_a_trace_never_abort_under_an_address_space_limit() {
    let quiet = storm(&[], None);
    assert!(quiet.status.success(), "{quiet:?}");
    let limit = vm_peak(&quiet) + MARGIN;
    let port = collector();
    let dir = common::scratch("perfgraph-output-memory", "trace");
    let trace = dir.join("storm.pftrace");
    let env = [
        ("PERFGRAPH_OTLP", format!("http://127.0.0.1:{port}")),
        ("PERFGRAPH_OTLP_SPANS", "all".to_owned()),
        ("PERFGRAPH_PROMETHEUS", "127.0.0.1:0".to_owned()),
        ("PERFGRAPH_TRACE", trace.to_str().unwrap().to_owned()),
    ];
    for run in 1..=5 {
        let out = storm(&env, Some(limit));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {run} of 5 under {limit} bytes: {stderr}"
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("storm: "),
            "run {run}: {out:?}"
        );
        // 800,000 spans do not all fit: the line says how many were not delivered, and each cause with its
        // count.
        let line = stderr
            .lines()
            .find(|l| l.starts_with("perfgraph: warning: PERFGRAPH_OTLP: "))
            .unwrap_or_else(|| panic!("run {run}: no OTLP line in {stderr}"));
        let lost: u64 = line
            .trim_start_matches("perfgraph: warning: PERFGRAPH_OTLP: ")
            .split(" of ")
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("run {run}: {line}"));
        assert!(line.contains(" of 800000 spans not delivered ("), "{line}");
        let causes = &line[line.find("delivered (").unwrap() + "delivered (".len()..];
        let counted: u64 = causes
            .split("; ")
            .map(|c| {
                c.split(' ')
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or_else(|| panic!("run {run}: a cause without its count: {line}"))
            })
            .sum();
        assert_eq!(
            counted, lost,
            "run {run}: the causes count the loss: {line}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
