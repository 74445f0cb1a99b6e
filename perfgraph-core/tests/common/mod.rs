//! Helpers shared by the integration tests.
#![allow(dead_code)] // reason: each test binary uses a different subset.

pub mod scratch;

#[allow(unused_imports)] // reason: a test binary that makes no directory uses neither.
pub use scratch::{Scratch, names, scratch};

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Waits until the background thread has completed `n` more passes (each drains every ring once). The bound
/// only catches a hang; it is not a timing assertion.
pub fn wait_passes(n: u64) {
    perfgraph_core::__test_hooks::pause_draining(false);
    let target = perfgraph_core::__test_hooks::passes() + n + 1;
    let deadline = Instant::now() + Duration::from_secs(30);
    while perfgraph_core::__test_hooks::passes() < target {
        assert!(
            Instant::now() < deadline,
            "background thread made no progress in 30 s"
        );
        std::thread::yield_now();
    }
}

/// Whether the long tests run at full size (`TESTS_FULL=1`, as `.ci/run` sets): more runs, larger sizes,
/// deeper model checks. The default `cargo test` runs every case at a smaller size. (Not a `PERFGRAPH_*`
/// name: perfgraph warns about those it does not know.)
pub fn full() -> bool {
    std::env::var("TESTS_FULL").is_ok_and(|v| v == "1")
}

/// The snapshot of the thread named `name`.
pub fn thread_named(name: &str) -> perfgraph_core::ThreadSnapshot {
    perfgraph_core::threads()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no thread named {name}"))
}

/// A `Command` for `program` (usually `std::env::current_exe()`: the test binary itself) with stdin null
/// and without any variable perfgraph reads, so only what the test sets reaches the child: a developer's
/// exported `PERFGRAPH_REPORT=all` cannot change a test's result.
pub fn child_command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    // Every `PERFGRAPH_*` setting, `NO_COLOR` (the one other variable the live printer reads), and any
    // other `PERFGRAPH_*` name (a misspelling gets a warning line on the child's stderr).
    let misspelled = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .filter(|name| name.starts_with("PERFGRAPH_"));
    for var in perfgraph_core::Config::VARIABLE_NAMES
        .into_iter()
        .chain(["NO_COLOR"])
        .map(str::to_owned)
        .chain(misspelled)
    {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Spawns `f` on a new thread named `name`. Join it with `.join().unwrap()`, or use [`on_thread`] to run
/// `f` to the end at once.
pub fn spawn_named<R: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> JoinHandle<R> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .unwrap()
}

/// Runs `f` on a new thread named `name` and joins it: returns `f`'s result, or re-raises its panic here.
pub fn on_thread<R: Send + 'static>(name: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    spawn_named(name, f)
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Reads `reader` to its end (a pseudo-terminal's master ends with EIO once every slave is closed).
pub fn read_all(mut reader: impl Read) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return bytes,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return bytes,
        }
    }
}

/// A pseudo-terminal: `(master, slave)`, its window 100 columns by 40 rows.
pub fn open_pty() -> (std::fs::File, OwnedFd) {
    // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r act on the master just opened; `name` is a
    // writable buffer of the length passed, which ptsname_r NUL-terminates; open takes that path.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(slave >= 0);
        let master = std::fs::File::from_raw_fd(master);
        set_size(&master, 100, 40);
        (master, OwnedFd::from_raw_fd(slave))
    }
}

pub fn set_size(master: &std::fs::File, cols: u16, rows: u16) {
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize from `ws`.
    let set = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
    assert_eq!(set, 0);
}

/// A named test for [`run_tests`].
pub type Test = (&'static str, Box<dyn Fn() + Send + Sync>);

/// A minimal harness for test binaries with their own `main` (`harness = false`): runs the tests whose name
/// contains the first argument that is not a flag (`cargo test -- <filter>`), `batch` at a time side by side
/// (their children mostly sleep), prints libtest's lines, and exits with 1 if any failed.
pub fn run_tests(tests: Vec<Test>, batch: usize) {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let selected: &'static [Test] = Vec::leak(
        tests
            .into_iter()
            .filter(|(name, _)| filter.as_ref().is_none_or(|f| name.contains(f.as_str())))
            .collect(),
    );
    println!("\nrunning {} tests", selected.len());
    let mut failed = Vec::new();
    for batch in selected.chunks(batch.max(1)) {
        let handles: Vec<_> = batch
            .iter()
            .map(|(name, test)| (*name, std::thread::spawn(test)))
            .collect();
        for (name, handle) in handles {
            let ok = handle.join().is_ok();
            println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
            if !ok {
                failed.push(name);
            }
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        selected.len() - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        std::process::exit(1);
    }
}

/// Waits for `process` (started at `start`) to exit; kills it and fails the test if it still runs after
/// `hang` (a bound that only catches a hang).
pub fn wait_or_kill(
    process: &mut std::process::Child,
    start: std::time::Instant,
    hang: Duration,
) -> std::process::ExitStatus {
    loop {
        if let Some(status) = process.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > hang {
            let _ = process.kill();
            panic!("child still running after {hang:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The settings of a child that shows live print within a test's time: live print on (stderr is a pipe),
/// a 0.05 s time limit, capture off.
pub const FAST_LIVE_PRINT: &[(&str, &str)] = &[
    ("PERFGRAPH_TIME_LIMIT", "0.05"),
    ("PERFGRAPH_CAPTURE", "off"),
    ("PERFGRAPH_LIVE", "on"),
];

/// Whether this process is the child [`test_child_stderr`] started for `test`.
pub fn is_test_child(test: &str) -> bool {
    std::env::var("CHILD_CASE").is_ok_and(|c| c == test)
}

/// Runs this test binary again as a child running only `test` (with `CHILD_CASE` set: see
/// [`is_test_child`]), `NO_COLOR` and `env`, stdout discarded; returns its stderr once it exited with
/// success (a minute catches a hang).
pub fn test_child_stderr(test: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = child_command(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("CHILD_CASE", test)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader =
        std::thread::spawn(move || String::from_utf8_lossy(&read_all(stderr)).into_owned());
    let status = wait_or_kill(&mut child, start, Duration::from_secs(60));
    let text = reader.join().unwrap();
    assert!(status.success(), "child failed: {text}");
    text
}
