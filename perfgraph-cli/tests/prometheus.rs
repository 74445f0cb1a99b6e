//! `PERFGRAPH_PROMETHEUS` against a real Prometheus server (Debian's `prometheus` package, which `.ci/run`
//! installs): it scrapes a running program (`examples/service`, 5,000 `residual` calls on each of two
//! threads, then still), and its HTTP API must give the program's exact count for
//! `perfgraph_section_calls_total` and the histogram's `_count`. Without the server the test says loudly
//! that it did not run. The endpoint itself, without a server: port 0 says which port it bound, and a
//! request head too long is answered 431, not reset.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{PATIENCE, Reaped, example};
use serde_json::Value;

/// A port free on 127.0.0.1 now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:`port`: the status line and the body.
fn get(port: u16, path: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_owned(), body.to_owned()))
}

/// The value Prometheus holds for `query` (an instant vector of one series), once it has one.
fn query(port: u16, query: &str) -> Option<String> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (status, body) = get(port, &format!("/api/v1/query?query={encoded}"))?;
    if !status.contains("200") {
        return None;
    }
    let v: Value = serde_json::from_str(&body).ok()?;
    Some(v["data"]["result"][0]["value"][1].as_str()?.to_owned())
}

#[test]
fn prometheus_scrapes_the_exact_counts() {
    let Ok(prometheus) = which("prometheus") else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: prometheus_scrapes_the_exact_counts did NOT run: no `prometheus` server on PATH \
             (Debian's package `prometheus`; .ci/run installs it)"
        );
        return;
    };
    let dir = common::scratch("perfgraph-prometheus", "scrape");
    let (metrics, web) = (free_port(), free_port());
    let mut service = Command::new(example("service"))
        .env("XDG_RUNTIME_DIR", &dir)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_PROMETHEUS", format!("127.0.0.1:{metrics}"))
        .env("SERVICE_CALLS", "5000")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = service.stdin.take();
    let service = Reaped(service);
    // The endpoint itself: only GET /metrics.
    let start = Instant::now();
    let text = loop {
        if let Some((status, body)) = get(metrics, "/metrics")
            && status.contains("200")
            && body.contains("perfgraph_section_calls_total{section=\"residual\"} 10000")
        {
            break body;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no /metrics with the 10,000 calls"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(text.contains("# TYPE perfgraph_section_duration_seconds histogram"));
    assert!(get(metrics, "/").unwrap().0.contains("404"));

    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: perfgraph\n    \
             static_configs:\n      - targets: ['127.0.0.1:{metrics}']\n"
        ),
    )
    .unwrap();
    let server = Reaped(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    for (q, want) in [
        (
            "perfgraph_section_calls_total{section=\"residual\"}",
            "10000",
        ),
        (
            "perfgraph_section_duration_seconds_count{section=\"residual\"}",
            "10000",
        ),
        ("perfgraph_threads", "2"),
    ] {
        loop {
            let got = query(web, q);
            if got.as_deref() == Some(want) {
                break;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "Prometheus never had {q} = {want} (last: {got:?})"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    drop(server);
    drop(stdin);
    let mut service = service;
    let status = service.0.wait().unwrap();
    let mut err = String::new();
    service
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success());
    assert_eq!(err, "", "stderr");
}

/// `name` on PATH.
fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join(name))
                .find(|p| Path::new(p).is_file())
        })
        .ok_or(())
}

/// `examples/service` serving `PERFGRAPH_PROMETHEUS=addr`, quiet otherwise: the child, its stdin (closing
/// it stops the service) and its stderr, line by line.
fn serve(addr: &str) -> (Reaped, ChildStdin, mpsc::Receiver<String>) {
    // No control socket (these tests need none): nothing is left outside the test's own files.
    let mut child = Command::new(example("service"))
        .env("PERFGRAPH_LISTEN", "off")
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off")
        .env("PERFGRAPH_PROMETHEUS", addr)
        .env("SERVICE_CALLS", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (Reaped(child), stdin, lines)
}

/// What is left on the service's stderr once it stopped (its stdin closed).
fn stop(service: Reaped, stdin: ChildStdin, lines: &mpsc::Receiver<String>) -> Vec<String> {
    drop(stdin);
    let mut service = service;
    assert!(service.0.wait().unwrap().success());
    lines
        .recv_timeout(PATIENCE)
        .into_iter()
        .chain(lines.try_iter())
        .collect()
}

/// The port the service's `perfgraph: Prometheus metrics at http://127.0.0.1:PORT/metrics` line names.
fn announced_port(lines: &mpsc::Receiver<String>) -> u16 {
    let line = lines
        .recv_timeout(PATIENCE)
        .expect("no line naming the port bound");
    line.strip_prefix("perfgraph: Prometheus metrics at http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("not the line naming the port: {line:?}"))
}

#[test]
fn port_0_says_which_port_it_bound_and_a_port_asked_for_says_nothing() {
    let (service, stdin, lines) = serve("127.0.0.1:0");
    let port = announced_port(&lines);
    assert_ne!(port, 0);
    let (status, body) = get(port, "/metrics").expect("no answer at the port announced");
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("perfgraph_section_calls_total"), "{body}");
    let rest = stop(service, stdin, &lines);
    assert!(rest.is_empty(), "more on stderr: {rest:?}");

    // A port of its own choosing is known to whoever chose it: nothing said.
    let port = free_port();
    let (service, stdin, lines) = serve(&format!("127.0.0.1:{port}"));
    let start = Instant::now();
    while get(port, "/metrics").is_none() {
        assert!(start.elapsed() < PATIENCE, "never served at {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let rest = stop(service, stdin, &lines);
    assert!(rest.is_empty(), "stderr: {rest:?}");
}

#[test]
fn a_request_head_too_long_is_answered_431_not_reset() {
    let (service, stdin, lines) = serve("127.0.0.1:0");
    let port = announced_port(&lines);
    // Past the endpoint's 8 KiB, a little and a lot: the client sends its whole head, then reads.
    for size in [9_000, 64 << 10, 256 << 10] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.set_write_timeout(Some(PATIENCE)).unwrap();
        let mut head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ".to_vec();
        head.resize(head.len() + size, b'a');
        let sent = s.write_all(&head);
        let mut answer = String::new();
        let read = s.read_to_string(&mut answer);
        assert!(
            read.is_ok() && answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "a head of {size} bytes: sent {sent:?}, read {read:?}: {answer:?}"
        );
    }
    // And it serves on.
    let (status, _) = get(port, "/metrics").expect("no answer after the long heads");
    assert!(status.contains("200"), "{status}");
    let rest = stop(service, stdin, &lines);
    assert!(rest.is_empty(), "stderr: {rest:?}");
}
