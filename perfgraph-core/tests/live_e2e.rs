//! Live print end to end: this test binary runs itself as a child process with
//! `PERFGRAPH_TIME_LIMIT=0.2` and the parent checks the child's stderr line by line, and that it exits
//! promptly with stderr closed or a pipe nobody reads. Timing checks are generous (they catch hangs only).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};

#[timed(live = "Outer work")]
fn outer() {
    inner();
    std::thread::sleep(Duration::from_millis(50));
}

#[timed(live = "Inner work", dots)]
fn inner() {
    std::thread::sleep(Duration::from_millis(650));
}

#[timed(name = "worker job", live = "Worker job")]
fn worker_job() {
    std::thread::sleep(Duration::from_millis(350));
}

fn child_main(mode: &str) {
    match mode {
        "nested" => {
            let worker = std::thread::Builder::new()
                .name("worker".into())
                .spawn(|| {
                    std::thread::sleep(Duration::from_millis(300));
                    worker_job()
                })
                .unwrap();
            outer();
            worker.join().unwrap();
            perfgraph_core::suspend(|| eprintln!("program output"));
        }
        "flood" => {
            // Live-all prints every section: far more than a pipe holds.
            for _ in 0..20_000 {
                time_section!("flood step");
            }
            inner();
        }
        _ => panic!("unknown child mode {mode}"),
    }
    println!("child done");
}

fn child(mode: &str) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("LIVE_CHILD", mode)
        .env("PERFGRAPH_TIME_LIMIT", "0.2")
        .env_remove("PERFGRAPH_LIVE")
        .env_remove("NO_COLOR");
    cmd
}

#[test]
fn child_entry() {
    if let Ok(mode) = std::env::var("LIVE_CHILD") {
        child_main(&mode);
    }
}

/// Waits for the child at most `limit`, killing it if it hangs.
fn wait(mut process: std::process::Child, limit: Duration) -> (bool, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = process.try_wait().unwrap() {
            return (status.success(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = process.kill();
            panic!("child still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts `cmd` and reads its stdout to the end (stderr is left as `cmd` set it: closed, or an unread pipe).
fn spawn_reading_stdout(cmd: &mut Command) -> (std::process::Child, String) {
    let mut process = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = String::new();
    let mut pipe = process.stdout.take().unwrap();
    pipe.read_to_string(&mut stdout).unwrap();
    (process, stdout)
}

#[test]
fn nested_sections_print_like_moose() {
    let out = child("nested").output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("running") && !l.is_empty())
        .collect();
    let find = |prefix: &str| {
        lines
            .iter()
            .copied()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{stderr}"))
    };
    // The child's "main" work runs on libtest's thread named after the test: a thread prefix like any other.
    assert_eq!(
        find("child_entry: Outer work"),
        "child_entry: Outer work",
        "context line, alone"
    );
    let inner = find("child_entry:   Inner work");
    assert!(
        stderr.contains("Inner work.") || stderr.contains("Still Inner work"),
        "dots on the inner line, or a Still line after the worker's line:\n{stderr}"
    );
    // Its stats: on its own line if nothing came between, else on a Finished line.
    let inner = match lines
        .iter()
        .find(|l| l.contains("Inner work") && l.contains(" ["))
    {
        Some(line) => *line,
        None => panic!("no stats for Inner work (first line {inner:?}):\n{stderr}"),
    };
    let worker = find("worker: ");
    assert!(worker.starts_with("worker: Worker job"), "{worker:?}");
    let finished = find("child_entry: Finished Outer work");
    for line in [inner, finished] {
        let column = line.find(" [").map(|c| c + 1);
        assert_eq!(column, Some(89), "stats column in {line:?}");
        let stats = &line[89..];
        assert!(
            stats.len() == 21
                && stats.starts_with('[')
                && stats.contains(" s] [")
                && stats.ends_with(" MB]"),
            "stats format in {line:?}"
        );
    }
    assert!(lines.contains(&"program output"));
    assert!(!stderr.contains('\x1b'), "no colour in a pipe");
}

#[test]
fn stderr_closed_never_hurts_the_program() {
    let mut cmd = child("nested");
    // SAFETY: `close` is async-signal-safe, and runs in the forked child before exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::close(2);
            Ok(())
        });
    }
    let (process, stdout) = spawn_reading_stdout(&mut cmd);
    let (ok, _) = wait(process, Duration::from_secs(30));
    assert!(ok);
    assert!(stdout.contains("child done"));
}

#[test]
fn stderr_pipe_nobody_reads_never_stalls_exit() {
    let mut cmd = child("flood");
    cmd.env("PERFGRAPH_LIVE", "all").stderr(Stdio::piped());
    let (mut process, stdout) = spawn_reading_stdout(&mut cmd);
    // stderr is never read while the child runs: its pipe fills up.
    let _stderr = process.stderr.take();
    let (ok, took) = wait(process, Duration::from_secs(30));
    assert!(ok);
    assert!(stdout.contains("child done"));
    eprintln!("child with a full stderr pipe exited after {took:?}");
}
