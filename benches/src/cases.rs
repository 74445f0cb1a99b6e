//! The floors and the perfgraph cases. The peers live in `benches/peers/`.

use std::hint::black_box;
use std::time::Instant;

use perfgraph_core::{Verbosity, set_verbosity, time_section, timed};

use crate::ids::case;
use crate::{Case, body, repeat};

// ---- floors ----

#[inline(never)]
fn empty_call() {
    body();
}

#[inline(never)]
fn instant_pair() {
    let start = Instant::now();
    body();
    black_box(Instant::now());
    black_box(start);
}

#[inline(never)]
fn raw_clock_pair() {
    let start = perfgraph_core::__test_hooks::clock_now();
    body();
    black_box(perfgraph_core::__test_hooks::clock_now());
    black_box(start);
}

/// Makes sure perfgraph's clock is initialised (it picks the TSC at its first use).
fn init_clock() {
    black_box(perfgraph_core::clock_source());
}

thread_local! {
    /// Each thread's own: uncontended on two threads too.
    static STD_MUTEX: std::sync::Mutex<u64> = const { std::sync::Mutex::new(0) };
    static PG_MUTEX: perfgraph_core::sync::Mutex<u64> =
        const { perfgraph_core::sync::Mutex::new("bench", 0) };
}

/// An uncontended lock and unlock of std's `Mutex` around the leaf's work.
#[inline(never)]
fn std_mutex() {
    STD_MUTEX.with(|m| *m.lock().unwrap() += 1);
    body();
}

/// The floors: an empty `#[inline(never)]` call, a pair of `Instant::now()`, a pair of perfgraph's raw clock
/// reads (`rdtsc` when the TSC is invariant, else `clock_gettime(CLOCK_MONOTONIC)`).
pub const FLOORS: [Case; 3] = [
    Case::new(case::EMPTY_CALL, |n| repeat(n, empty_call)),
    Case::new(case::INSTANT_PAIR, |n| repeat(n, instant_pair)),
    Case::new(case::RAW_CLOCK_PAIR, |n| repeat(n, raw_clock_pair)).with_setup(init_clock),
];

// ---- perfgraph ----

#[timed(name = "leaf")]
#[inline(never)]
fn pg_leaf() {
    body();
}

#[timed(name = "live_leaf", live = "Solving nonlinear system", dots)]
#[inline(never)]
fn pg_live_leaf() {
    body();
}

#[timed(name = "nested_1")]
#[inline(never)]
fn pg_nested_1() {
    pg_nested_2();
}

#[timed(name = "nested_2")]
#[inline(never)]
fn pg_nested_2() {
    pg_nested_3();
}

#[timed(name = "nested_3")]
#[inline(never)]
fn pg_nested_3() {
    body();
}

#[timed(name = "args_leaf", args(a, b))]
#[inline(never)]
fn pg_args_leaf(a: u64, b: u64) {
    black_box((a, b));
    body();
}

#[inline(never)]
fn pg_event() {
    perfgraph_core::event!("tick", args(n = black_box(7u64)));
    body();
}

/// The same with `perfgraph_core::sync::Mutex`.
#[inline(never)]
fn pg_mutex() {
    PG_MUTEX.with(|m| *m.lock().unwrap() += 1);
    body();
}

/// std's `Mutex` and perfgraph's, uncontended, side by side: the lock's cost is the difference.
pub const LOCKS: [Case; 2] = [
    Case::new(case::STD_MUTEX, |n| repeat(n, std_mutex)),
    Case::new(case::PERFGRAPH_MUTEX, |n| repeat(n, pg_mutex)).with_setup(verbosity_on),
];

#[inline(never)]
fn pg_counter() {
    perfgraph_core::counter!("depth", black_box(7u64));
    body();
}

fn pg_batch(n: u64, leaf: fn()) {
    time_section!("batch");
    repeat(n, leaf);
}

/// As [`pg_batch`] with `pg_leaf`, on a call path of its own (`batch_without_histogram` → `leaf`) made
/// without a latency histogram: the same leaf function, so the two cases differ by the histogram alone.
fn pg_batch_without_histogram(n: u64) {
    perfgraph_core::__test_hooks::without_latency_histograms(|| {
        time_section!("batch_without_histogram");
        repeat(n, pg_leaf);
    });
}

/// A future that stays pending, its polls doing the leaf's work.
struct Pending;

impl std::future::Future for Pending {
    type Output = ();
    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        body();
        std::task::Poll::Pending
    }
}

/// `n` polls of one timed future (after its first, which counts the call), inside `batch`: what a poll
/// costs, next to a `#[timed]` leaf's enter + exit.
fn pg_future_polls(n: u64) {
    time_section!("batch");
    let mut future = std::pin::pin!(perfgraph_core::time_future!("future_leaf", Pending));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let _ = future.as_mut().poll(&mut cx);
    for _ in 0..n {
        let _ = std::hint::black_box(future.as_mut().poll(&mut cx));
    }
}

fn verbosity_on() {
    set_verbosity(Verbosity::Level(1));
    perfgraph_core::__test_hooks::record_as_if_tracing(false);
}

/// As [`verbosity_on`], and what a trace wants (args, events) is recorded as if one were written.
fn verbosity_on_traced() {
    set_verbosity(Verbosity::Level(1));
    perfgraph_core::__test_hooks::record_as_if_tracing(true);
}

fn verbosity_off() {
    set_verbosity(Verbosity::Off);
}

/// perfgraph (`#[timed]` leaves): recording; the same leaf on a call path without a latency histogram; off
/// by verbosity; a live message and dots; three nested sections
/// per call (its figure is per call, i.e. three sections); a timed future's poll; a leaf with two integer
/// args, without a trace and recorded as a trace wants them; an `event!` (recorded as a trace wants it) and
/// a `counter!` sample per call. Leaves run inside an outer `batch` section.
pub const PERFGRAPH: [Case; 10] = [
    Case::new(case::PERFGRAPH_ENABLED, |n| pg_batch(n, pg_leaf)).with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_NO_HISTOGRAM, pg_batch_without_histogram).with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_DISABLED_BY_VERBOSITY, |n| {
        pg_batch(n, pg_leaf)
    })
    .with_setup(verbosity_off),
    Case::new(case::PERFGRAPH_LIVE_MESSAGE, |n| pg_batch(n, pg_live_leaf)).with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_NESTED_3_DEEP, |n| pg_batch(n, pg_nested_1)).with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_FUTURE_POLL, pg_future_polls).with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_ARGS, |n| {
        pg_batch(n, || pg_args_leaf(black_box(3), black_box(4)))
    })
    .with_setup(verbosity_on),
    Case::new(case::PERFGRAPH_ARGS_TRACED, |n| {
        pg_batch(n, || pg_args_leaf(black_box(3), black_box(4)))
    })
    .with_setup(verbosity_on_traced),
    Case::new(case::PERFGRAPH_EVENT_TRACED, |n| pg_batch(n, pg_event))
        .with_setup(verbosity_on_traced),
    Case::new(case::PERFGRAPH_COUNTER, |n| pg_batch(n, pg_counter)).with_setup(verbosity_on),
];

/// One recorded section (`leaf`, level 1), for measurements outside Criterion (resident memory per thread).
pub fn one_section() {
    pg_leaf();
}
