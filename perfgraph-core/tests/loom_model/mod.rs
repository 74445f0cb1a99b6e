//! The loom models' one runner (`mod loom_model;` in each `tests/loom_*.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Checks `f` under every interleaving with at most `bound` preemptions (`LOOM_MAX_PREEMPTIONS`, if set,
/// instead); returns how many interleavings loom ran. Counted, so that a model loom runs only once is an
/// error rather than a pass: loom 0.7 stops after one interleaving when a spawned thread's first operation
/// is a load (tokio-rs/loom#392), and then checks nothing.
///
/// `bound` is the full size (`TESTS_FULL=1`, as `.ci/run` sets); the default `cargo test` checks every
/// model with at most one preemption, which takes seconds where two take tens of seconds.
pub fn check(bound: usize, f: impl Fn() + Sync + Send + 'static) -> usize {
    let full = std::env::var("TESTS_FULL").is_ok_and(|v| v == "1");
    let bound = if full { bound } else { bound.min(1) };
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    builder.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f()
    });
    let runs = runs.load(Ordering::Relaxed);
    assert!(
        runs > 1,
        "loom explored {runs} interleaving: the model checks nothing"
    );
    runs
}
