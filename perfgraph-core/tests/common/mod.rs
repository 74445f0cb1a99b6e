//! Helpers shared by the integration tests.
#![allow(dead_code)] // reason: each test binary uses a different subset.

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Waits until the background thread has completed `n` more passes (each drains every ring once). The bound
/// only catches a hang; it is not a timing assertion.
pub fn wait_passes(n: u64) {
    perfgraph_core::__private::pause_draining(false);
    let target = perfgraph_core::__private::passes() + n + 1;
    let deadline = Instant::now() + Duration::from_secs(30);
    while perfgraph_core::__private::passes() < target {
        assert!(
            Instant::now() < deadline,
            "background thread made no progress in 30 s"
        );
        std::thread::yield_now();
    }
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
