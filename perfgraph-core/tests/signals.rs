//! Signals end to end: this test binary runs itself as a child process (`SIGNALS_CHILD=<scenario>`) that
//! sits in a long live section, waits until the section's live line is on the child's stderr, then sends
//! the child a signal and checks what it wrote and how it died.
//!
//! It has its own `main` (`harness = false`) so the child's work runs on its real main thread, as in a
//! user's program. The child's section waits on its stdin, which the parent keeps open, so nothing here
//! sleeps for time to pass; the bounds only catch hangs.

mod common;

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perfgraph_core::timed;

/// A child that runs longer than this is hung.
const HANG: Duration = Duration::from_secs(30);
/// The live line the child's section prints (after `PERFGRAPH_TIME_LIMIT=0.1`).
const LIVE: &str = "Long work";
/// The graph report's heading.
const GRAPH: &str = "Performance Graph:";

// ---- the child --------------------------------------------------------------------------------------------

/// Waits until the parent writes a line or closes the child's stdin.
#[timed(live = "Long work", dots)]
fn long_work() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// Waits for a line on stdin, then aborts the process inside the section.
#[timed(live = "Long work", dots)]
fn long_work_then_abort() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    std::process::abort();
}

/// Loops until `flag` is set (by the program's own SIGTERM handler), then returns.
#[timed(live = "Long work", dots)]
fn long_work_until(flag: &AtomicBool) {
    let deadline = Instant::now() + HANG;
    while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn child(scenario: &str) {
    match scenario {
        // Ends by a signal, or returns when stdin closes.
        "long" => long_work(),
        // perfgraph starts, then the program installs its own SIGTERM handler, as a tokio program would
        // (tokio registers through signal-hook-registry too).
        "own handler" => {
            let _ = perfgraph_core::config();
            let flag = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&flag)).unwrap();
            println!("handler installed");
            long_work_until(&flag);
            writeln!(perfgraph_core::stderr(), "the program handled SIGTERM").unwrap();
        }
        "abort" => long_work_then_abort(),
        // A thread blocked for good on a lock the main thread holds through its long section.
        "lock" => {
            let queue = Arc::new(perfgraph_core::sync::Mutex::new("queue", 0));
            let held = queue.lock().unwrap();
            let waiting = Arc::clone(&queue);
            std::thread::Builder::new()
                .name("worker".into())
                .spawn(move || drop(waiting.lock()))
                .unwrap();
            long_work();
            drop(held);
        }
        _ => panic!("unknown scenario {scenario}"),
    }
    println!("child done");
}

// ---- running a child --------------------------------------------------------------------------------------

/// What a child did.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ctx(&self) -> String {
        format!(
            "status {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A running child, its stderr arriving on a channel.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    chunks: mpsc::Receiver<Vec<u8>>,
    stderr: Vec<u8>,
    started: Instant,
}

/// The child for `scenario`, with `PERFGRAPH_TIME_LIMIT=0.1` and `env`. SIGINT, SIGTERM, SIGHUP and SIGABRT
/// start at their default action whatever the test runner left them at (a shell's background job ignores
/// SIGINT), except those named in `ignored`; no core file is written.
fn spawn(scenario: &str, env: &[(&str, &str)], ignored: &'static [i32]) -> Running {
    let mut cmd: Command = common::child_command(std::env::current_exe().unwrap());
    cmd.env("SIGNALS_CHILD", scenario)
        .env("PERFGRAPH_TIME_LIMIT", "0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe functions
    // (`signal`, `setrlimit`) on valid arguments.
    unsafe {
        cmd.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGABRT] {
                let action = if ignored.contains(&sig) {
                    libc::SIG_IGN
                } else {
                    libc::SIG_DFL
                };
                libc::signal(sig, action);
            }
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stderr.take().unwrap();
    let (tx, chunks) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    Running {
        stdin: child.stdin.take(),
        child,
        chunks,
        stderr: Vec::new(),
        started: Instant::now(),
    }
}

impl Running {
    /// Reads the child's stderr until it contains `text`.
    fn wait_for(&mut self, text: &str) {
        while !String::from_utf8_lossy(&self.stderr).contains(text) {
            let left = HANG.saturating_sub(self.started.elapsed());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.stderr.extend_from_slice(&chunk),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "no {text:?} on the child's stderr:\n{}",
                        String::from_utf8_lossy(&self.stderr)
                    );
                }
            }
        }
    }

    /// Sends `sig` to the child.
    fn signal(&self, sig: i32) {
        // SAFETY: kill has no memory-safety preconditions; the pid is our own child, not yet reaped.
        let sent = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(sent, 0, "kill failed");
    }

    /// Waits until one of the child's threads is blocked opening a named pipe for writing (the kernel's
    /// `wait_for_partner`, in its `/proc` wchan): where an exit writing a file to a pipe nobody reads is
    /// stuck. The report printed before it says only that the exit got as far as the tables.
    fn wait_blocked_on_a_pipe(&mut self) {
        let tasks = format!("/proc/{}/task", self.child.id());
        loop {
            let blocked = std::fs::read_dir(&tasks)
                .into_iter()
                .flatten()
                .flatten()
                .any(|t| {
                    std::fs::read_to_string(t.path().join("wchan"))
                        .is_ok_and(|w| w == "wait_for_partner")
                });
            if blocked {
                return;
            }
            if self.started.elapsed() > HANG {
                let _ = self.child.kill();
                panic!("the child never blocked opening the pipe");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Writes one line to the child's stdin.
    fn line(&mut self) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the child's stdin, reads the rest of its output and waits for it to end.
    fn finish(mut self) -> Run {
        drop(self.stdin.take());
        self.finish_open()
    }

    /// Reads the rest of the child's output and waits for it to end, its stdin still open (a child that
    /// does not end by itself is killed as hung).
    fn finish_open(mut self) -> Run {
        loop {
            let left = HANG.saturating_sub(self.started.elapsed());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.stderr.extend_from_slice(&chunk),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!(
                        "child still running after {HANG:?}:\n{}",
                        String::from_utf8_lossy(&self.stderr)
                    );
                }
            }
        }
        let mut stdout = String::new();
        if let Some(mut out) = self.child.stdout.take() {
            out.read_to_string(&mut stdout).unwrap();
        }
        let status = self.child.wait().unwrap();
        Run {
            status,
            stdout,
            stderr: String::from_utf8(self.stderr).expect("stderr is UTF-8"),
        }
    }
}

/// A fresh path for the child's `PERFGRAPH_JSON`, in a directory of its own (removed when dropped).
fn json_path(tag: &str) -> (common::Scratch, PathBuf) {
    let dir = common::scratch(&format!("signals-{tag}"));
    let path = dir.join("run.json");
    (dir, path)
}

/// The lines of `stderr` that hold the live section's message.
fn live_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(LIVE)).collect()
}

// ---- the tests ----------------------------------------------------------------------------------------------

/// SIGINT, SIGTERM and SIGHUP in a printed live section: the live line ends with its stats, the report and
/// the JSON file are written, and the child dies of the signal.
fn a_signal_writes_everything_then_kills_by_it(sig: i32, name: &str) {
    let (_dir, json) = json_path(name);
    let json_str = json.to_str().unwrap();
    let mut child = spawn(
        "long",
        &[("PERFGRAPH_REPORT", "graph"), ("PERFGRAPH_JSON", json_str)],
        &[],
    );
    child.wait_for(LIVE);
    child.signal(sig);
    let r = child.finish_open();
    let ctx = r.ctx();
    assert_eq!(r.status.signal(), Some(sig), "died of {name}: {ctx}");
    assert!(!r.stdout.contains("child done"), "{ctx}");
    // The live line got its stats and ended before the report.
    let live = live_lines(&r.stderr);
    assert_eq!(live.len(), 1, "{ctx}");
    assert!(
        live[0].starts_with(LIVE) && live[0].ends_with(" MB]"),
        "{ctx}"
    );
    let graph = r
        .stderr
        .find(GRAPH)
        .unwrap_or_else(|| panic!("no report: {ctx}"));
    assert!(r.stderr.find(LIVE).unwrap() < graph, "{ctx}");
    assert!(
        r.stderr.lines().any(|l| l.starts_with("|   long_work ")),
        "{ctx}"
    );
    assert!(r.stderr.ends_with('\n'), "{ctx}");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{json_str}: {e}: {ctx}"));
    let tree: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{json_str} is not JSON: {e}"));
    assert!(tree.is_object(), "{text}");
    assert!(text.contains("long_work"), "{text}");
}

fn sigterm_sigint_sighup_write_everything() {
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        a_signal_writes_everything_then_kills_by_it(sig, name);
    }
}

/// `PERFGRAPH_SIGNALS=off`: SIGTERM kills at once, nothing is written.
fn signals_off_leaves_sigterm_alone() {
    let (_dir, json) = json_path("off");
    let mut child = spawn(
        "long",
        &[
            ("PERFGRAPH_REPORT", "graph"),
            ("PERFGRAPH_JSON", json.to_str().unwrap()),
            ("PERFGRAPH_SIGNALS", "off"),
        ],
        &[],
    );
    child.wait_for(LIVE);
    child.signal(libc::SIGTERM);
    let r = child.finish_open();
    let ctx = r.ctx();
    assert_eq!(r.status.signal(), Some(libc::SIGTERM), "{ctx}");
    assert!(!r.stderr.contains(GRAPH), "{ctx}");
    assert!(!json.exists(), "{ctx}");
}

/// A signal ignored when perfgraph started stays ignored: SIGTERM does nothing, and the run ends normally.
fn an_ignored_signal_stays_ignored() {
    let mut child = spawn("long", &[("PERFGRAPH_REPORT", "graph")], &[libc::SIGTERM]);
    child.wait_for(LIVE);
    child.signal(libc::SIGTERM);
    // Nothing to wait for: the signal is discarded by the kernel. The section ends when stdin closes.
    let r = child.finish();
    let ctx = r.ctx();
    assert!(r.status.success(), "{ctx}");
    assert_eq!(r.stdout, "child done\n", "{ctx}");
    assert_eq!(r.stderr.matches(GRAPH).count(), 1, "{ctx}");
}

/// The program installs its own SIGTERM handler after perfgraph started (one that calls the handler it
/// replaced, as signal-hook's registry does): the program's handler wins, and perfgraph writes nothing at
/// the signal; the reports come at the program's normal exit, after its own line.
fn a_handler_the_program_installs_later_wins() {
    let mut child = spawn("own handler", &[("PERFGRAPH_REPORT", "graph")], &[]);
    child.wait_for(LIVE);
    child.signal(libc::SIGTERM);
    let r = child.finish_open();
    let ctx = r.ctx();
    assert!(r.status.success(), "{ctx}");
    assert_eq!(r.stdout, "handler installed\nchild done\n", "{ctx}");
    let handled = r
        .stderr
        .find("the program handled SIGTERM")
        .unwrap_or_else(|| panic!("{ctx}"));
    assert_eq!(r.stderr.matches(GRAPH).count(), 1, "{ctx}");
    assert!(handled < r.stderr.find(GRAPH).unwrap(), "{ctx}");
}

/// The program has returned from `main` and its exit is writing `PERFGRAPH_JSON` to a named pipe nobody
/// reads, which would take the whole give-up wait: a SIGTERM, SIGINT or SIGHUP (a supervisor's) then cuts
/// the final pass short at once, with one line, and the process dies of it.
fn a_signal_during_a_stuck_exit_ends_it_at_once() {
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let (_dir, fifo) = json_path(&format!("fifo-{name}"));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string, a plain system call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut child = spawn(
            "long",
            &[
                ("PERFGRAPH_REPORT", "graph"),
                ("PERFGRAPH_JSON", fifo.to_str().unwrap()),
            ],
            &[],
        );
        child.wait_for(LIVE);
        // The section ends, `main` returns, and the exit's final pass prints the report, then opens the pipe.
        drop(child.stdin.take());
        child.wait_for(GRAPH);
        child.wait_for("|   long_work ");
        // The tables are out; the signal must come once the exit is stuck on the pipe, not before it
        // opens it (then the line names no file: it once did, in CI).
        child.wait_blocked_on_a_pipe();
        child.signal(sig);
        let r = child.finish_open();
        let ctx = r.ctx();
        assert_eq!(r.status.signal(), Some(sig), "died of {name}: {ctx}");
        assert_eq!(r.stdout, "child done\n", "{ctx}");
        let line = format!(
            "perfgraph: error: exit: {name} while writing PERFGRAPH_JSON file {:?}; gave up, and the \
             outputs after it are not written",
            fifo.display().to_string()
        );
        assert!(r.stderr.lines().any(|l| l == line), "no {line:?}: {ctx}");
        assert!(!r.stderr.contains("made no progress"), "{ctx}");
        assert!(r.stderr.ends_with('\n'), "{ctx}");
    }
}

/// SIGTERM while a thread waits for a lock it never gets: the wait's final line does not say `Finished` (the
/// wait did not end) but `Still ... (not acquired)`, timed up to the exit, as a section's is.
fn a_wait_cut_short_by_a_signal_does_not_say_finished() {
    const WAIT: &str = "worker: Waiting for queue (held by main)";
    let mut child = spawn("lock", &[], &[]);
    child.wait_for(WAIT);
    child.signal(libc::SIGTERM);
    let r = child.finish_open();
    let ctx = r.ctx();
    assert_eq!(r.status.signal(), Some(libc::SIGTERM), "{ctx}");
    assert!(!r.stderr.contains("Finished Waiting for"), "{ctx}");
    let last = r
        .stderr
        .lines()
        .rfind(|l| l.contains("Waiting for queue"))
        .unwrap_or_else(|| panic!("no wait line: {ctx}"));
    assert!(
        last.starts_with("worker: Still Waiting for queue (held by main) (not acquired) ")
            && last.ends_with(" MB]"),
        "{ctx}"
    );
}

/// `std::process::abort()` inside a printed live section: the open live line is ended.
fn abort_ends_the_live_line() {
    let mut child = spawn("abort", &[("PERFGRAPH_REPORT", "graph")], &[]);
    child.wait_for(LIVE);
    child.line();
    let r = child.finish_open();
    let ctx = r.ctx();
    assert_eq!(r.status.signal(), Some(libc::SIGABRT), "{ctx}");
    assert!(r.stderr.starts_with(LIVE), "{ctx}");
    assert!(r.stderr.ends_with('\n'), "{:?}", r.stderr);
    assert_eq!(live_lines(&r.stderr).len(), 1, "{ctx}");
    assert!(
        !r.stderr.contains(GRAPH),
        "an abort writes no report: {ctx}"
    );
}

fn main() {
    if let Ok(scenario) = std::env::var("SIGNALS_CHILD") {
        child(&scenario);
        return;
    }
    let tests: [(&str, fn()); 7] = [
        (
            "sigterm_sigint_sighup_write_everything",
            sigterm_sigint_sighup_write_everything,
        ),
        (
            "signals_off_leaves_sigterm_alone",
            signals_off_leaves_sigterm_alone,
        ),
        (
            "an_ignored_signal_stays_ignored",
            an_ignored_signal_stays_ignored,
        ),
        (
            "a_handler_the_program_installs_later_wins",
            a_handler_the_program_installs_later_wins,
        ),
        ("abort_ends_the_live_line", abort_ends_the_live_line),
        (
            "a_wait_cut_short_by_a_signal_does_not_say_finished",
            a_wait_cut_short_by_a_signal_does_not_say_finished,
        ),
        (
            "a_signal_during_a_stuck_exit_ends_it_at_once",
            a_signal_during_a_stuck_exit_ends_it_at_once,
        ),
    ];
    let tests = tests
        .iter()
        .map(|&(name, test)| (name, Box::new(test) as Box<dyn Fn() + Send + Sync>))
        .collect();
    // The children mostly wait: run them side by side.
    common::run_tests(tests, usize::MAX);
}
