//! `fork()` while other threads record, report and merge: every child records a section and exits at once
//! (`_exit`, or `std::process::exit` through perfgraph's exit handler), never hangs on a lock it inherited
//! held, prints no perfgraph line, writes none of the parent's files, and holds none of the parent's
//! control-socket descriptors.
//!
//! It has its own `main` (`harness = false`): the parent is a child process of the test, with settings of
//! its own, that forks `FORK_COUNT` (default 200) children and prints one summary line:
//! `forks N hangs H errors E mean_us M max_us X`. `cargo test -p perfgraph-core --test fork -- --nocapture`
//! shows it.

mod common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfgraph_core::timed;

/// Longest a child may take to exit: catches a hang (a lock inherited held), not a slow machine.
const HANG: Duration = Duration::from_secs(10);
/// A child that exits through the exit handler must not wait for a background thread it does not have
/// (that wait was 2 s): generous, far below it.
const PROMPT: Duration = Duration::from_secs(1);

#[timed(name = "fork::parent_step")]
fn parent_step(i: u64) -> u64 {
    std::hint::black_box(i.wrapping_mul(31))
}

#[timed(name = "fork::recorder", live = "Recording")]
fn recorder(stop: &AtomicBool) {
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        parent_step(i);
        i += 1;
    }
}

#[timed(name = "fork::child_work")]
fn child_work() -> u64 {
    (0..100).map(parent_step).sum()
}

/// What a child does after the fork: records, reads what it recorded, and exits; any failure is a line on
/// its stderr (`fd`, a pipe the parent reads) and status 3.
fn child(index: usize, err_fd: i32) -> ! {
    // SAFETY: `err_fd` is the write end of a pipe this process owns; fd 2 is replaced by a copy of it.
    unsafe { libc::dup2(err_fd, 2) };
    // The parent's control socket, its Prometheus endpoint and their clients' connections are closed in
    // the child.
    let sockets = std::fs::read_dir("/proc/self/fd").map_or(0, |d| {
        d.flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
            })
            .count()
    });
    if sockets > 0 {
        eprintln!("child {index}: {sockets} socket descriptors inherited from the parent");
        // SAFETY: `_exit` ends the process at once; nothing of this process is needed any more.
        unsafe { libc::_exit(3) };
    }
    child_work();
    if index % 4 == 1 {
        // A thread that recorded nothing in the parent registers itself (the thread list's lock).
        std::thread::spawn(child_work).join().unwrap();
    }
    let tree = perfgraph_core::combined();
    let ok = tree
        .find(&["fork::child_work"])
        .is_some_and(|n| n.calls >= 1);
    if !ok {
        eprintln!("child {index}: fork::child_work is not in the child's merged tree");
        // SAFETY: `_exit` ends the process at once; nothing of this process is needed any more.
        unsafe { libc::_exit(3) };
    }
    if index.is_multiple_of(2) {
        // SAFETY: as above.
        unsafe { libc::_exit(0) }
    }
    // Through the exit handlers, perfgraph's among them.
    std::process::exit(0)
}

/// Forks child `index` (from the calling thread) and waits for it. Returns (time to exit, stderr, status),
/// or `None` if it hung (then it is killed).
fn fork_one(index: usize) -> Option<(Duration, String, i32)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let started = Instant::now();
    // SAFETY: the child makes only the calls `child` makes and then exits; perfgraph's fork handlers keep
    // the locks it takes consistent.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        child(index, fds[1]);
    }
    // SAFETY: the two descriptors are ours, each owned once from here.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(write);
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid place for its status.
        let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if got == pid {
            break;
        }
        if started.elapsed() > HANG {
            // SAFETY: `pid` is our own child, not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&common::read_all(std::fs::File::from(read))).into_owned();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Some((took, stderr, code))
}

/// The parent: threads record, report and merge without pause while it forks.
fn parent() {
    let count: usize = std::env::var("FORK_COUNT").map_or(200, |n| n.parse().unwrap());
    // perfgraph starts before the first fork. Otherwise the first children may be forked before any thread
    // reached perfgraph (each is then a fresh process that starts perfgraph for itself and prints its own
    // report at exit), or while a recorder's first section is starting it, before its fork handlers exist:
    // the one race docs/user-guide.md ("fork") says is not covered, where the child inherits the start half
    // done and waits for it for good. Both happened here, 1 run in about 40 on a loaded machine.
    perfgraph_core::threads();
    // The control socket is open before the first fork: the children must not hold it (a build without
    // the `listen` feature has none).
    if cfg!(feature = "listen") {
        let socket =
            perfgraph_core::attach::directory().join(format!("{}.sock", std::process::id()));
        let start = Instant::now();
        while !socket.exists() && start.elapsed() < HANG {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(socket.exists(), "no control socket at {}", socket.display());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut helpers = Vec::new();
    for name in ["recorder-a", "recorder-b"] {
        let stop = Arc::clone(&stop);
        helpers.push(common::spawn_named(name, move || recorder(&stop)));
    }
    let hammer_stop = Arc::clone(&stop);
    helpers.push(common::spawn_named("hammer", move || {
        while !hammer_stop.load(Ordering::Relaxed) {
            std::hint::black_box(perfgraph_core::combined());
            std::hint::black_box(perfgraph_core::report());
        }
    }));
    let (mut hangs, mut errors, mut total, mut max) = (0, 0, Duration::ZERO, Duration::ZERO);
    for index in 0..count {
        // Half from the main thread (which recorded), half from a new thread (which did not).
        let result = if index % 2 == 0 {
            fork_one(index)
        } else {
            common::on_thread(&format!("forker-{index}"), move || fork_one(index))
        };
        let Some((took, stderr, code)) = result else {
            hangs += 1;
            eprintln!("child {index} hung");
            continue;
        };
        total += took;
        max = max.max(took);
        if code != 0 || !stderr.is_empty() {
            errors += 1;
            eprintln!("child {index}: status {code}, stderr {stderr:?}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    for h in helpers {
        h.join().unwrap();
    }
    println!(
        "forks {count} hangs {hangs} errors {errors} mean_us {} max_us {}",
        total.as_micros() / count.max(1) as u128,
        max.as_micros()
    );
}

fn forks_while_others_record_report_and_merge() {
    let dir = common::scratch("fork");
    let json = dir.join("run.json");
    let mut command = common::child_command(std::env::current_exe().unwrap());
    command
        .env("FORK_PARENT", "1")
        .env("PERFGRAPH_JSON", &json)
        .env("PERFGRAPH_REPORT", "graph")
        .env("PERFGRAPH_TIME_LIMIT", "0.05")
        .env("XDG_RUNTIME_DIR", &dir);
    if cfg!(feature = "prometheus") {
        // The Prometheus endpoint's listener too (an ephemeral port): a child holds none of it.
        command.env("PERFGRAPH_PROMETHEUS", "127.0.0.1:0");
    }
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(out.status.success(), "{ctx}");
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("forks "))
        .unwrap_or_else(|| panic!("no summary line: {ctx}"));
    println!("{summary}");
    let field = |name: &str| -> u128 {
        let words: Vec<&str> = summary.split(' ').collect();
        let at = words.iter().position(|w| *w == name).unwrap();
        words[at + 1].parse().unwrap()
    };
    assert_eq!(field("hangs"), 0, "{ctx}");
    assert_eq!(field("errors"), 0, "{ctx}");
    assert!(
        field("max_us") < PROMPT.as_micros(),
        "a child took {} us to exit: {ctx}",
        field("max_us")
    );
    assert!(
        !stderr.contains("perfgraph: error"),
        "no perfgraph error: {ctx}"
    );
    // The parent's file, written once by the parent: no child wrote its own tree over it.
    let written = std::fs::read_to_string(&json).unwrap();
    assert!(written.contains("fork::recorder"), "{written}");
    assert!(stderr.contains("Performance Graph:"), "{ctx}");
    // No child removed the parent's socket early, and the parent removed it at its exit.
    if cfg!(feature = "listen") {
        let left: Vec<_> = std::fs::read_dir(dir.join("perfgraph")).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

fn main() {
    if std::env::var_os("FORK_PARENT").is_some() {
        parent();
        return;
    }
    println!("\nrunning 1 test");
    forks_while_others_record_report_and_merge();
    println!("test forks_while_others_record_report_and_merge ... ok");
    println!("\ntest result: ok. 1 passed; 0 failed\n");
}
