//! The truth harness's program (`tests/truth*.rs`): sections whose true figures the program knows without
//! perfgraph, measured by itself. Every call's start and end by its own `Instant` (`CLOCK_MONOTONIC`), from
//! a zero taken before its first perfgraph call; call counts; the bytes it allocates; its lock waits and
//! holds; its counter values, args, events and polls. It writes them as JSON to `TRUTH_OUT` at the end, and
//! the harness compares every output perfgraph wrote with them.
//!
//! Each call is timed twice: an inner interval, read inside the section's `#[timed]` guard (first thing in
//! its body, last thing dropped: `start_ns`, `end_ns`), and an outer one, read by its caller around the
//! call (`outer_start_ns`, `outer_end_ns`). Perfgraph's own clock reads lie between the two, so its figure
//! lies between them: a preemption between its read and the program's lengthens it toward the outer
//! interval, and the inner one alone would call that an error.
//!
//! The run (about 2.9 s): sections in the first 100 ms, in the first second, one from 0.9 s to 2.4 s (a
//! live line), 5,000 short calls, known allocations, two threads contending for a lock, a counter, args,
//! events and a future. Settings of its own:
//!
//! * `TRUTH_MINUTE=1`: then waits until 60 s into the run and times two sections there.
//! * `TRUTH_DRIFT=1`: the clock is a counter whose frequency drifts by 0.4% from 0.7 s to 2.2 s
//!   (`__test_hooks::drifting_clock`), so the calibration moves during the run.
//! * `TRUTH_HOLD=1`: after the run, writes the truth, prints `truth: holding` on stdout and waits on stdin:
//!   each line `phase` runs 5 sleeps of 100 ms and 1,000 short calls (adding them to the truth, written
//!   again) and prints `truth: done`; the end of stdin ends the program. For the outputs read from a
//!   running process (`perfgraph dump`, `trace`, `top`, Prometheus, OTLP).
//!
//! ```sh
//! TRUTH_OUT=truth.json PERFGRAPH_TRACE=trace.json cargo run -p perfgraph-cli --example truth
//! ```

use std::hint::black_box;
use std::io::{BufRead, Write};
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use perfgraph_core::{counter, event, time_future, timed};

#[global_allocator]
static ALLOC: perfgraph_core::CountingAllocator =
    perfgraph_core::CountingAllocator::new(std::alloc::System);

// ---- the program's own record of what it did ------------------------------------------------------------

/// One thing the program measured itself.
enum Fact {
    /// A call of section `name` on `thread` (ns since the zero): `inner` read inside its `#[timed]` guard
    /// ([`Measured`]), `outer` around the call by its caller ([`outer`]).
    Call {
        name: &'static str,
        thread: &'static str,
        inner: (u64, u64),
        outer: (u64, u64),
    },
    /// The thread's CPU time in a call of `name` (ns): `inner` read inside the section, `outer` around
    /// the call.
    Cpu {
        name: &'static str,
        inner: u64,
        outer: u64,
    },
    /// `truth_future`'s polls, each timed inside perfgraph's poll guard, summed (ns): a lower bound on its
    /// busy time (its polls' time), which its life's outer interval bounds from above.
    Busy { inner: u64 },
    /// One acquisition of the lock (ns): `wait`, how long `lock()` took, read around it (perfgraph reads
    /// its clock inside `lock()`: an outer interval); `hold`, from `lock()`'s return to the guard's drop
    /// (inside perfgraph's hold: an inner interval). The program cannot read inside `lock()` or the
    /// guard's drop, so these two have one bound each.
    Lock {
        thread: &'static str,
        wait: u64,
        hold: u64,
    },
    /// A thread was joined (ns since the zero): it had exited by then.
    Joined { thread: &'static str, at: u64 },
}

/// Zero: the program's first instant, before any perfgraph call.
static ZERO: OnceLock<Instant> = OnceLock::new();
/// What was measured, in a vector reserved up front (recording a fact allocates nothing, so the sections'
/// allocation counts are only the program's own).
static FACTS: Mutex<Vec<Fact>> = Mutex::new(Vec::new());

fn since_zero(t: Instant) -> u64 {
    t.duration_since(*ZERO.get().unwrap()).as_nanos() as u64
}

fn record(fact: Fact) {
    FACTS.lock().unwrap().push(fact);
}

/// A call's inner interval, left by its [`Measured`] for its caller's [`outer`] to record.
#[derive(Clone, Copy)]
struct Inner {
    name: &'static str,
    thread: &'static str,
    start: Instant,
    end: Instant,
}

thread_local! {
    /// The inner interval of the call that just ended on this thread (const: no allocation).
    static INNER: std::cell::Cell<Option<Inner>> = const { std::cell::Cell::new(None) };
}

/// Measures the call it lives in, from inside its `#[timed]` guard: made first in a section's body,
/// dropped last. Its interval lies within perfgraph's.
struct Measured {
    name: &'static str,
    thread: &'static str,
    start: Instant,
}

impl Measured {
    fn new(name: &'static str, thread: &'static str) -> Measured {
        Measured {
            name,
            thread,
            start: Instant::now(),
        }
    }
}

impl Drop for Measured {
    fn drop(&mut self) {
        let end = Instant::now();
        let inner = Inner {
            name: self.name,
            thread: self.thread,
            start: self.start,
            end,
        };
        let left = INNER.replace(Some(inner));
        assert!(left.is_none(), "a call not made through `outer`");
    }
}

/// Calls `section` (whose body starts with a [`Measured`]) and records the call: its inner interval, and
/// its outer one read here, around the call and so around perfgraph's guard.
fn outer<R>(section: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let out = section();
    let end = Instant::now();
    let inner = INNER.take().expect("the section's Measured");
    record(Fact::Call {
        name: inner.name,
        thread: inner.thread,
        inner: (since_zero(inner.start), since_zero(inner.end)),
        outer: (since_zero(start), since_zero(end)),
    });
    out
}

fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Sleeps until `ms` after the zero (not in a section).
fn until(ms: u64) {
    let at = *ZERO.get().unwrap() + Duration::from_millis(ms);
    if let Some(d) = at.checked_duration_since(Instant::now()) {
        std::thread::sleep(d);
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

// ---- the sections -----------------------------------------------------------------------------------------

#[timed]
fn early() {
    let _m = Measured::new("early", "main");
    spin(Duration::from_millis(20));
    outer(early_sleep);
    spin(Duration::from_millis(20));
}

#[timed]
fn early_sleep() {
    let _m = Measured::new("early_sleep", "main");
    std::thread::sleep(Duration::from_millis(20));
}

#[timed]
fn spin_300() {
    let _m = Measured::new("spin_300", "main");
    spin(Duration::from_millis(300));
}

#[timed]
fn sleep_200() {
    let _m = Measured::new("sleep_200", "main");
    std::thread::sleep(Duration::from_millis(200));
}

/// Short calls, counted exactly (5,000 fit in a new thread's ring, however late it is drained).
pub const TICKS: u64 = 5_000;

#[timed]
fn ticks() {
    let _m = Measured::new("ticks", "main");
    let mut sum = 0u64;
    for i in 0..TICKS {
        sum = sum.wrapping_add(tick(i));
    }
    black_box(sum);
}

#[timed]
fn tick(i: u64) -> u64 {
    black_box(i.wrapping_mul(31))
}

/// Allocations of `alloc_known`: this many, of this many bytes each.
pub const ALLOCS: u64 = 100;
/// The size of each of `alloc_known`'s allocations (bytes).
pub const ALLOC_BYTES: u64 = 1000;

/// The sections whose code allocates nothing (sleeps, spins, a lock, a black box, a future that sleeps
/// and wakes itself; recording a fact allocates nothing): 0 allocations, whatever perfgraph allocates for
/// itself inside them (its own allocations are never counted).
pub const NO_ALLOCS: [&str; 14] = [
    "early",
    "early_sleep",
    "spin_300",
    "sleep_200",
    "ticks",
    "tick",
    "long_sleep",
    "cpu_spin",
    "locker",
    "with_arg",
    "truth_future",
    "late_spin",
    "late_sleep",
    "phase_sleep",
];

#[timed]
fn alloc_known() {
    let _m = Measured::new("alloc_known", "main");
    for _ in 0..ALLOCS {
        black_box(Vec::<u8>::with_capacity(ALLOC_BYTES as usize));
    }
}

#[timed(live = "Sleeping long", dots)]
fn long_sleep() {
    let _m = Measured::new("long_sleep", "main");
    std::thread::sleep(Duration::from_millis(1500));
}

/// Returns its thread's CPU time in the spin (ns), read inside the section.
#[timed(cpu)]
fn cpu_spin() -> u64 {
    let _m = Measured::new("cpu_spin", "main");
    let cpu = thread_cpu_ns();
    spin(Duration::from_millis(100));
    thread_cpu_ns() - cpu
}

/// `cpu_spin`, its CPU time read inside it and around it.
fn cpu_spin_outer() {
    let cpu = thread_cpu_ns();
    let inner = outer(cpu_spin);
    record(Fact::Cpu {
        name: "cpu_spin",
        inner,
        outer: thread_cpu_ns() - cpu,
    });
}

static LOCK: perfgraph_core::sync::Mutex<u64> = perfgraph_core::sync::Mutex::new("truth_lock", 0);

/// Acquisitions of `truth_lock` per locker thread (two threads).
pub const ACQUISITIONS: u64 = 3;

#[timed]
fn locker(thread: &'static str) {
    let _m = Measured::new("locker", thread);
    for _ in 0..ACQUISITIONS {
        let asked = Instant::now();
        let mut guard = LOCK.lock().unwrap();
        let got = Instant::now();
        std::thread::sleep(Duration::from_millis(40));
        *guard += 1;
        let released = Instant::now();
        drop(guard);
        record(Fact::Lock {
            thread,
            wait: got.duration_since(asked).as_nanos() as u64,
            hold: released.duration_since(got).as_nanos() as u64,
        });
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn lockers() {
    let spawn = |name: &'static str| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || outer(|| locker(name)))
            .unwrap()
    };
    let (a, b) = (spawn("locker-a"), spawn("locker-b"));
    for (thread, handle) in [("locker-a", a), ("locker-b", b)] {
        handle.join().unwrap();
        record(Fact::Joined {
            thread,
            at: since_zero(Instant::now()),
        });
    }
}

/// Values of `truth_counter`: 0.5, 1.0, ... 25.0.
pub const COUNTER_VALUES: u64 = 50;

fn counters() {
    for i in 1..=COUNTER_VALUES {
        counter!("truth_counter", i as f64 * 0.5);
    }
}

#[timed(args(n))]
fn with_arg(n: u64) {
    let _m = Measured::new("with_arg", "main");
    black_box(n);
}

/// Events `truth_event`, each with its index as arg `i`.
pub const EVENTS: u64 = 10;

fn args_and_events() {
    for n in [7, 11, 13] {
        outer(|| with_arg(n));
    }
    for i in 0..EVENTS {
        event!("truth_event", args(i));
    }
}

/// A future that is pending `left` times (waking itself each time), then ready. It times its polls from
/// inside perfgraph's poll guard: the first one's start, the last one's end, and their sum.
struct Yields<'a> {
    left: u32,
    polls: &'a Polls,
}

/// What [`Yields`] timed of its polls.
#[derive(Default)]
struct Polls {
    first: std::cell::Cell<Option<Instant>>,
    last_end: std::cell::Cell<Option<Instant>>,
    busy: std::cell::Cell<Duration>,
}

impl std::future::Future for Yields<'_> {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let start = Instant::now();
        let polls = self.polls;
        polls.first.set(polls.first.get().or(Some(start)));
        std::thread::sleep(Duration::from_millis(10));
        let ready = self.left == 0;
        if !ready {
            self.left -= 1;
            cx.waker().wake_by_ref();
        }
        let end = Instant::now();
        polls.busy.set(polls.busy.get() + end.duration_since(start));
        polls.last_end.set(Some(end));
        if ready {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

struct NoopWake;
impl Wake for NoopWake {
    fn wake(self: std::sync::Arc<Self>) {}
}

/// Polls of `truth_future`: 3 pending, then ready.
pub const POLLS: u32 = 4;

fn a_future() {
    let waker = Waker::from(std::sync::Arc::new(NoopWake));
    let mut cx = Context::from_waker(&waker);
    let polls = Polls::default();
    let start = Instant::now();
    let mut future = std::pin::pin!(time_future!(
        "truth_future",
        Yields {
            left: POLLS - 1,
            polls: &polls,
        }
    ));
    while future.as_mut().poll(&mut cx).is_pending() {}
    let end = Instant::now();
    // Its life: perfgraph's runs from its first poll to the end of its last, inside these two.
    record(Fact::Call {
        name: "truth_future",
        thread: "main",
        inner: (
            since_zero(polls.first.get().unwrap()),
            since_zero(polls.last_end.get().unwrap()),
        ),
        outer: (since_zero(start), since_zero(end)),
    });
    record(Fact::Busy {
        inner: polls.busy.get().as_nanos() as u64,
    });
}

#[timed]
fn late_spin() {
    let _m = Measured::new("late_spin", "main");
    spin(Duration::from_millis(200));
}

#[timed]
fn late_sleep() {
    let _m = Measured::new("late_sleep", "main");
    std::thread::sleep(Duration::from_millis(300));
}

#[timed(live = "Truth run")]
fn work(minute: bool) {
    let _m = Measured::new("work", "main");
    outer(early);
    outer(spin_300);
    outer(sleep_200);
    outer(ticks);
    outer(alloc_known);
    until(900);
    outer(long_sleep);
    cpu_spin_outer();
    lockers();
    counters();
    args_and_events();
    a_future();
    if minute {
        until(60_000);
        outer(late_spin);
        outer(late_sleep);
    }
}

/// One phase of the held program: what a trace window or a second look sees.
#[timed]
fn phase() {
    let _m = Measured::new("phase", "main");
    for _ in 0..5 {
        outer(phase_sleep);
    }
    for i in 0..1_000 {
        black_box(tick(i));
    }
}

#[timed]
fn phase_sleep() {
    let _m = Measured::new("phase_sleep", "main");
    std::thread::sleep(Duration::from_millis(100));
}

// ---- the truth, written -------------------------------------------------------------------------------------

fn write_truth(path: &str, wall: u64, ticks: u64) {
    let facts = FACTS.lock().unwrap();
    let mut calls = Vec::new();
    let mut cpu = Vec::new();
    let mut locks = Vec::new();
    let mut joined = serde_json::Map::new();
    let mut busy = None;
    for fact in facts.iter() {
        match *fact {
            Fact::Call {
                name,
                thread,
                inner,
                outer,
            } => calls.push(serde_json::json!({"name": name, "thread": thread,
                "start_ns": inner.0, "end_ns": inner.1,
                "outer_start_ns": outer.0, "outer_end_ns": outer.1})),
            Fact::Cpu { name, inner, outer } => {
                cpu.push(serde_json::json!({"name": name, "cpu_ns": inner, "outer_cpu_ns": outer}))
            }
            Fact::Busy { inner } => busy = Some(inner),
            Fact::Lock { thread, wait, hold } => {
                locks.push(serde_json::json!({"thread": thread, "wait_ns": wait, "hold_ns": hold}))
            }
            Fact::Joined { thread, at } => {
                joined.insert(thread.to_owned(), at.into());
            }
        }
    }
    let values: Vec<f64> = (1..=COUNTER_VALUES).map(|i| i as f64 * 0.5).collect();
    let truth = serde_json::json!({
        "wall_ns": wall,
        "calls": calls,
        "joined_ns": joined,
        "cpu": cpu,
        "locks": {"name": "truth_lock", "acquisitions": locks},
        "tick_calls": ticks,
        "allocs": {"section": "alloc_known", "count": ALLOCS, "bytes": ALLOCS * ALLOC_BYTES,
            "none": NO_ALLOCS},
        "counters": [{"name": "truth_counter", "samples": COUNTER_VALUES,
            "last": values.last(), "min": values[0], "max": values.last(),
            "mean": values.iter().sum::<f64>() / values.len() as f64}],
        "args": {"section": "with_arg", "name": "n", "values": [7, 11, 13]},
        "events": {"name": "truth_event", "count": EVENTS},
        "future": {"name": "truth_future", "polls": POLLS, "inner_busy_ns": busy},
    });
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&truth).unwrap()).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn main() {
    let zero = *ZERO.get_or_init(Instant::now);
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
    if flag("TRUTH_DRIFT") {
        perfgraph_core::__test_hooks::drifting_clock();
    }
    FACTS.lock().unwrap().reserve(20_000);
    let out = std::env::var("TRUTH_OUT").ok();

    outer(|| work(flag("TRUTH_MINUTE")));

    let mut ticks = TICKS;
    let wall = since_zero(Instant::now());
    if let Some(path) = &out {
        write_truth(path, wall, ticks);
    }
    if flag("TRUTH_HOLD") {
        println!("truth: holding");
        std::io::stdout().flush().unwrap();
        for line in std::io::stdin().lock().lines() {
            if line.unwrap().trim() == "phase" {
                outer(phase);
                ticks += 1_000;
                if let Some(path) = &out {
                    write_truth(path, since_zero(Instant::now()), ticks);
                }
                println!("truth: done");
                std::io::stdout().flush().unwrap();
            }
        }
    }
    black_box(zero);
}
