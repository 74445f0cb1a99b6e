//! Live print end to end: this test binary runs itself as a child process (with `LIVE_CHILD=<scenario>` and
//! `PERFGRAPH_TIME_LIMIT=0.2`) and checks the child's stderr line by line, and that it exits promptly, also
//! with stderr closed or a pipe nobody reads.
//!
//! It has its own `main` (`harness = false`) so the child's work runs on the process's real main thread,
//! whose lines carry no prefix, as in a user's program. Checks are about structure (which lines, in which
//! order, the stats' column and format); numbers that depend on scheduling are matched loosely, and time
//! bounds are generous: they catch hangs, not slowness.

#[path = "live_e2e/cases.rs"]
mod cases;
mod common;

use cases::*;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perfgraph_core::timed;

/// The stats' `[` column (0-based), MOOSE's layout.
const COLUMN: usize = 89;
/// A child that runs longer than this is hung.
const HANG: Duration = Duration::from_secs(20);

// ---- the child's scenarios (limit 0.2 s) -------------------------------------------------------------------

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

/// MOOSE's `nested_sections` test, at a fifth of its time scale (limit 0.2 s instead of 1 s).
mod moose {
    use super::*;

    #[timed(live = "Executing")]
    pub fn executing() {
        testing_slowness();
        sleep_ms(50);
    }

    #[timed(live = "Testing Slowness", dots)]
    fn testing_slowness() {
        testing_nested_slowness();
        sleep_ms(800);
    }

    #[timed(live = "Testing Nested Slowness", dots)]
    fn testing_nested_slowness() {
        sleep_ms(900);
    }
}

#[timed(live = "Worker job", dots)]
fn worker_job() {
    sleep_ms(500);
}

#[timed(live = "Unnamed job")]
fn unnamed_job() {
    sleep_ms(300);
}

#[timed(live = "Executing")]
fn executing_with_output() {
    writeln!(
        perfgraph_core::stderr(),
        "Timed section just started, printing something though"
    )
    .unwrap();
    sleep_ms(400);
}

#[timed(live = "Solving", dots)]
fn solving_with_output() {
    sleep_ms(300);
    writeln!(perfgraph_core::stderr(), "log line").unwrap();
    sleep_ms(400);
}

#[timed(live = "Allocating")]
fn allocating(mb: usize) -> Vec<u8> {
    let mut v = vec![0u8; mb * 1_000_000];
    for page in v.chunks_mut(4096) {
        page[0] = 1;
    }
    // Longer than a few memory samples (20 ms apart), far shorter than the time limit.
    sleep_ms(100);
    v
}

#[timed(live = "Main work", dots)]
fn main_work_then_exit() {
    sleep_ms(500);
    println!("exiting");
    std::process::exit(0);
}

#[timed(live = "Sleeping forever")]
fn sleeping_forever() {
    sleep_ms(60_000);
}

#[timed(name = "flood step")]
fn flood_step() {}

#[timed(live = "Loading data", dots)]
fn loading_data_then_panicking() {
    sleep_ms(500);
    panic!("deliberate panic while loading");
}

#[perfgraph_core::timed(args(level, mesh), live = "Refining level {level} of {mesh}")]
fn refining(level: u32, mesh: &str) {
    sleep_ms(500);
}

/// A future pending until `until`, polled by [`block_on`].
struct PendingUntil(Instant);

impl std::future::Future for PendingUntil {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if Instant::now() >= self.0 {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

/// Polls `f` every 10 ms until it is ready.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        sleep_ms(10);
    }
}

fn child(scenario: &str) {
    match scenario {
        "lock" => {
            let queue = std::sync::Arc::new(perfgraph_core::sync::Mutex::new("queue", 0));
            let held = queue.lock().unwrap();
            let waiter = {
                let queue = std::sync::Arc::clone(&queue);
                common::spawn_named("worker", move || *queue.lock().unwrap() += 1)
            };
            while queue.waiting() == 0 {
                std::thread::yield_now();
            }
            // Past the time limit (0.2 s), with dots.
            sleep_ms(700);
            drop(held);
            waiter.join().unwrap();
        }
        "args" => {
            refining(3, "mesh-A");
            let url = "https://example.org/data".to_owned();
            let wait = PendingUntil(Instant::now() + Duration::from_millis(500));
            block_on(perfgraph_core::time_future!(
                "fetch",
                wait,
                args(url),
                live = "Fetching {url}"
            ));
        }
        "moose" => moose::executing(),
        "threads" => {
            common::on_thread("worker", worker_job);
            std::thread::spawn(unnamed_job).join().unwrap();
        }
        "output" => {
            executing_with_output();
            solving_with_output();
            perfgraph_core::suspend(|| eprintln!("program output"));
        }
        "memory" => {
            let v = allocating(60);
            std::hint::black_box(&v);
        }
        "exit" => {
            // Never joined: `main_work_then_exit` exits the process while it sleeps.
            common::spawn_named("sleeper", sleeping_forever);
            main_work_then_exit();
        }
        "flood" => {
            // Live-all prints every section: far more than a pipe holds.
            for _ in 0..50_000 {
                flood_step();
            }
            worker_job();
        }
        "panic" => loading_data_then_panicking(),
        _ => panic!("unknown scenario {scenario}"),
    }
    println!("child done");
}

// ---- running a child ------------------------------------------------------------------------------------------

fn command(scenario: &str) -> Command {
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.env("LIVE_CHILD", scenario)
        .env("PERFGRAPH_TIME_LIMIT", "0.2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// What a child did.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `cmd` to the end (killing it if it hangs), reading stdout and (if piped) stderr.
fn run(cmd: &mut Command) -> Run {
    let start = Instant::now();
    let mut process = cmd.spawn().unwrap();
    let stderr = process.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut s = String::new();
            pipe.read_to_string(&mut s).unwrap();
            s
        })
    });
    let stdout = process.stdout.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut s = String::new();
            pipe.read_to_string(&mut s).unwrap();
            s
        })
    });
    let status = common::wait_or_kill(&mut process, start, HANG);
    Run {
        success: status.success(),
        took: start.elapsed(),
        stdout: stdout.map(|t| t.join().unwrap()).unwrap_or_default(),
        stderr: stderr.map(|t| t.join().unwrap()).unwrap_or_default(),
    }
}

fn lines(stderr: &str) -> Vec<&str> {
    stderr.lines().collect()
}

/// Checks a line that ends with stats: `<head>` then padding to column 89, then `[%6.2f s] [%5d MB]`.
/// Returns (head without trailing spaces, seconds, MB).
fn stats(line: &str) -> (&str, f64, u64) {
    fn bad(line: &str) -> ! {
        panic!("not a line with stats at column {COLUMN}: {line:?}")
    }
    if line.len() != COLUMN + 21 || !line.is_char_boundary(COLUMN) {
        bad(line);
    }
    let (head, stats) = line.split_at(COLUMN);
    if !head.ends_with(' ') {
        bad(line);
    }
    let seconds = stats
        .strip_prefix('[')
        .and_then(|s| s.get(..6))
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or_else(|| bad(line));
    let mb = stats
        .get(7..)
        .and_then(|s| s.strip_prefix(" s] ["))
        .and_then(|s| s.strip_suffix(" MB]"))
        .filter(|s| s.len() == 5)
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or_else(|| bad(line));
    (head.trim_end(), seconds, mb)
}

/// `text` is `word` followed by dots only (`min..=max` of them).
fn dotted(text: &str, word: &str, min: usize, max: usize) -> bool {
    text.strip_prefix(word)
        .is_some_and(|dots| dots.chars().all(|c| c == '.') && (min..=max).contains(&dots.len()))
}

// ---- a minimal harness -------------------------------------------------------------------------------------

fn main() {
    if let Ok(scenario) = std::env::var("LIVE_CHILD") {
        if std::env::var_os("LIVE_CLOSE_STDERR").is_some() {
            // SAFETY: closing a descriptor has no memory-safety preconditions; nothing in this process
            // holds fd 2 as an owned handle.
            unsafe { libc::close(2) };
        }
        child(&scenario);
        return;
    }
    let tests: &[(&str, fn())] = &[
        (
            "moose_nested_sections_line_by_line",
            moose_nested_sections_line_by_line,
        ),
        (
            "threads_have_their_name_as_prefix",
            threads_have_their_name_as_prefix,
        ),
        (
            "live_messages_name_their_args",
            live_messages_name_their_args,
        ),
        (
            "a_thread_blocked_on_a_lock_says_what_it_waits_for_and_who_holds_it",
            a_thread_blocked_on_a_lock_says_what_it_waits_for_and_who_holds_it,
        ),
        (
            "program_output_gives_currently_and_still",
            program_output_gives_currently_and_still,
        ),
        (
            "a_memory_jump_prints_finished_even_when_quick",
            a_memory_jump_prints_finished_even_when_quick,
        ),
        (
            "exit_prints_final_lines_and_does_not_wait",
            exit_prints_final_lines_and_does_not_wait,
        ),
        (
            "a_bad_setting_warns_once_and_live_print_goes_on",
            a_bad_setting_warns_once_and_live_print_goes_on,
        ),
        (
            "a_panic_ends_the_live_line_and_labels_the_section",
            a_panic_ends_the_live_line_and_labels_the_section,
        ),
        ("live_off_prints_nothing", live_off_prints_nothing),
        (
            "stderr_closed_never_hurts_the_program",
            stderr_closed_never_hurts_the_program,
        ),
        (
            "stderr_a_broken_pipe_never_hurts_the_program",
            stderr_a_broken_pipe_never_hurts_the_program,
        ),
        (
            "stderr_a_pipe_nobody_reads_never_stalls",
            stderr_a_pipe_nobody_reads_never_stalls,
        ),
    ];
    let tests = tests
        .iter()
        .map(|&(name, test)| (name, Box::new(test) as Box<dyn Fn() + Send + Sync>))
        .collect();
    // The children mostly sleep: run them side by side.
    common::run_tests(tests, usize::MAX);
}
