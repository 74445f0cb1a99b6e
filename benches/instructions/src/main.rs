//! Instruction counts of one hot-path operation, under callgrind: run a case `n` times and `2n` times,
//! and the difference of the two totals divided by `n` is the count per operation (start-up, the first
//! section and exit cancel out).
//!
//! ```sh
//! cd benches/instructions && cargo build --release
//! for n in 1000000 2000000; do
//!   PERFGRAPH_LIVE=off PERFGRAPH_CAPTURE=off valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n \
//!     target/release/perfgraph-instructions section $n
//! done   # then (Ir of 2e6 − Ir of 1e6) / 1e6, from the "summary:" line of each file
//! ```
//!
//! Cases: `section` (a `time_section!` leaf), `section-args` (the same with two integer args) and
//! `section-args-traced` (recording them as a trace would: `__test_hooks::record_as_if_tracing`),
//! `event-traced` (an `event!` with one integer arg, recorded as a trace would), `counter` and
//! `counter-traced` (a `counter!`), `std-mutex` (an uncontended lock and unlock of std's `Mutex`),
//! `mutex` and `mutex-traced` (the same with `perfgraph_core::sync::Mutex`), `poll` (a poll of a pending `time_future!`), `span`
//! (an `info_span!` entered and exited, then closed, under tracing + `Registry` + a no-op layer: the
//! baseline, since a `Registry` with no layer never frees closed spans), `span-layer` (the same with
//! perfgraph's `TracingLayer` in place of the no-op layer, as users install it), `span-stacked` (the
//! layer on top of the no-op layer), and each of the three with `-nested` (inside an entered span, as in
//! the peers bench). See docs/design.md for where the layer keeps a span's state in each case.

use std::future::Future;
use std::hint::black_box;
use std::task::{Context, Waker};

use tracing_subscriber::layer::SubscriberExt;

#[inline(never)]
fn section_leaf() {
    perfgraph_core::time_section!("leaf");
    black_box(());
}

#[inline(never)]
fn section_args_leaf(i: u64) {
    perfgraph_core::time_section!("leaf", args(i, twice = i * 2));
    black_box(());
}

#[inline(never)]
fn event_leaf(i: u64) {
    perfgraph_core::event!("tick", args(i));
}

#[inline(never)]
fn counter_leaf(i: u64) {
    perfgraph_core::counter!("depth", i);
}

static STD_MUTEX: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
static PG_MUTEX: perfgraph_core::sync::Mutex<u64> = perfgraph_core::sync::Mutex::new("m", 0);

#[inline(never)]
fn std_mutex_leaf() {
    *STD_MUTEX.lock().unwrap() += 1;
}

#[inline(never)]
fn pg_mutex_leaf() {
    *PG_MUTEX.lock().unwrap() += 1;
}

#[inline(never)]
fn span_leaf() {
    let _span = tracing::info_span!("leaf").entered();
    black_box(());
}

/// `n` spans of [`span_leaf`], outermost or (`nested`) inside an entered `info_span!("outer")`.
fn spans(n: u64, nested: bool) {
    let _outer = nested.then(|| tracing::info_span!("outer").entered());
    for _ in 0..n {
        span_leaf();
    }
}

/// A layer that does nothing: it makes the `Registry` free closed spans.
struct NoopLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for NoopLayer {}

fn main() {
    let mut args = std::env::args().skip(1);
    let case = args.next().unwrap_or_default();
    let n: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    match case.as_str() {
        "section" => {
            for _ in 0..n {
                section_leaf();
            }
        }
        "section-args" | "section-args-traced" => {
            perfgraph_core::__test_hooks::record_as_if_tracing(case.ends_with("traced"));
            for i in 0..n {
                section_args_leaf(i);
            }
        }
        "event-traced" => {
            perfgraph_core::__test_hooks::record_as_if_tracing(true);
            for i in 0..n {
                event_leaf(i);
            }
        }
        "counter" | "counter-traced" => {
            perfgraph_core::__test_hooks::record_as_if_tracing(case.ends_with("traced"));
            for i in 0..n {
                counter_leaf(i);
            }
        }
        "std-mutex" => {
            for _ in 0..n {
                std_mutex_leaf();
            }
        }
        "mutex" | "mutex-traced" => {
            perfgraph_core::__test_hooks::record_as_if_tracing(case.ends_with("traced"));
            for _ in 0..n {
                pg_mutex_leaf();
            }
        }
        "poll" => {
            let mut future = std::pin::pin!(perfgraph_core::time_future!(
                "leaf",
                std::future::pending::<()>()
            ));
            let mut cx = Context::from_waker(Waker::noop());
            for _ in 0..n {
                let _ = black_box(future.as_mut().poll(&mut cx));
            }
        }
        "span" | "span-nested" => {
            let subscriber = tracing_subscriber::registry().with(NoopLayer);
            tracing::subscriber::with_default(subscriber, || spans(n, case.ends_with("nested")));
        }
        "span-layer" | "span-layer-nested" => {
            let subscriber =
                tracing_subscriber::registry().with(perfgraph_core::TracingLayer::new());
            tracing::subscriber::with_default(subscriber, || spans(n, case.ends_with("nested")));
        }
        "span-stacked" | "span-stacked-nested" => {
            let subscriber = tracing_subscriber::registry()
                .with(NoopLayer)
                .with(perfgraph_core::TracingLayer::new());
            tracing::subscriber::with_default(subscriber, || spans(n, case.ends_with("nested")));
        }
        _ => {
            eprintln!(
                "usage: perfgraph-instructions section|section-args[-traced]|event-traced|counter[-traced]|std-mutex|mutex[-traced]|poll|span[-nested]|span-layer[-nested]|span-stacked[-nested] N"
            );
            std::process::exit(2);
        }
    }
}
