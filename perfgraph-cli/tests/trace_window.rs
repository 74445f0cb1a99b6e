//! A trace window (`perfgraph trace <pid> --seconds N`) ends when its client goes away, not at its end
//! time: `examples/service` (recording all the time, or still after 100 calls, so that nothing is written
//! to the window for long) is traced for a day, the client is killed, and a new `perfgraph trace` is taken
//! within seconds instead of being turned away `busy` until the day is over. Each test has a private
//! `XDG_RUNTIME_DIR`.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{PATIENCE, Reaped, example};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// Loose: only catches a window that outlives its client (it used to run its whole time, here a day).
const GONE_WITHIN: Duration = Duration::from_secs(20);

fn cli(runtime: &Path, args: &[&str]) -> Output {
    Command::new(CLI)
        .env("XDG_RUNTIME_DIR", runtime)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `examples/service` listening in `runtime`, quiet; `calls`: `SERVICE_CALLS` (none: it records until it
/// is stopped). Returns once its socket takes connections.
fn service(runtime: &Path, calls: Option<&str>) -> Child {
    let mut cmd = Command::new(example("service"));
    cmd.env("XDG_RUNTIME_DIR", runtime)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off")
        .env_remove("PERFGRAPH_LISTEN")
        .env_remove("PERFGRAPH_TRACE")
        .env_remove("SERVICE_CALLS")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(n) = calls {
        cmd.env("SERVICE_CALLS", n);
    }
    let child = cmd.spawn().unwrap();
    let socket = runtime
        .join("perfgraph")
        .join(format!("{}.sock", child.id()));
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(start.elapsed() < PATIENCE, "the service never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Whether `dir` holds a file whose name contains `name` (the trace, or its temporary file).
fn has_file(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains(name))
}

fn a_killed_client_ends_its_window(test: &str, calls: Option<&str>) {
    let runtime = common::scratch("perfgraph-window", test);
    let service = Reaped(service(&runtime, calls));
    let pid = service.0.id().to_string();
    let day = runtime.join("day.json");

    // A day's window; open once its client has the trace's first bytes (its file is made then).
    let client = Command::new(CLI)
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["trace", &pid, "--seconds", "86400", "-o"])
        .arg(&day)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut client = Reaped(client);
    let start = Instant::now();
    while !has_file(&runtime, "day.json") {
        assert!(
            client.0.try_wait().unwrap().is_none(),
            "the day's trace ended"
        );
        assert!(start.elapsed() < PATIENCE, "the day's window never opened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let next = runtime.join("next.json");
    let next = next.to_str().unwrap();
    let busy = cli(&runtime, &["trace", &pid, "--seconds", "0.2", "-o", next]);
    assert!(
        !busy.status.success() && text(&busy.stderr).contains("busy"),
        "a second window while the first is open: {busy:?}"
    );

    client.0.kill().unwrap();
    client.0.wait().unwrap();
    let killed = Instant::now();
    loop {
        let t = cli(&runtime, &["trace", &pid, "--seconds", "0.2", "-o", next]);
        if t.status.success() {
            break;
        }
        assert!(text(&t.stderr).contains("busy"), "{t:?}");
        assert!(
            killed.elapsed() < GONE_WITHIN,
            "still busy {:?} after the client was killed: {t:?}",
            killed.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    println!(
        "{test}: a new trace was taken {:?} after the client was killed",
        killed.elapsed()
    );
    // ... and whole: its closing event last.
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(next).unwrap())
        .expect("the new window's trace is JSON");
    let end = v.as_array().and_then(|events| events.last());
    assert!(
        end.is_some_and(|e| e["name"] == "perfgraph trace end" && e["args"]["complete"] == true),
        "{end:?}"
    );

    // The service is unharmed: it stops when told, and said nothing.
    let mut service = service;
    drop(service.0.stdin.take());
    let mut stderr = String::new();
    service
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(service.0.wait().unwrap().success());
    assert_eq!(stderr, "", "the service's stderr");
}

#[test]
fn a_window_whose_client_is_killed_ends_while_the_program_records() {
    a_killed_client_ends_its_window("recording", None);
}

#[test]
fn a_window_whose_client_is_killed_ends_while_nothing_is_written() {
    a_killed_client_ends_its_window("still", Some("100"));
}
