//! What recording a section costs, measured once at start-up on the background thread (as Google
//! Highway's profiler calibrates its own overhead): the report's `Instrumentation:` line and the JSON's
//! `overhead_ns_per_section`.
//!
//! The measurement opens and closes a section on a thread state of its own, registered nowhere, the way a
//! recording thread does (both clock readings, the call tree, the histogram, the ring): a warm-up round,
//! then the best of a few rounds of a few thousand calls. Each round is timed on the thread's own CPU-time
//! clock, not the wall clock: a round the scheduler cut into (both cores busy, a thread pool spinning)
//! counts only the time it ran. It is measured at start-up and again in the final pass, and the lower
//! figure stands: the start-up one may meet cold caches and a slow clock. Each takes under a millisecond
//! of CPU in a release build. It leaves
//! out the entry's level check and thread-local lookup (a few instructions), so it is the floor of the
//! cost; `benches/` measures the whole.

use crate::base::clock::{self, Source};
use crate::base::{process, sys};
use crate::local::thread::ThreadState;

/// Calls per round: 4096, or 512 in a debug build. A debug section costs some fifty times a release one, so
/// 512 calls there take longer than 4096 here; at 4096 the two measurements were 92% of a debug program's
/// instructions under Callgrind (293 of 320 million in the CI gate's test), slowing every test that runs
/// one, while the figure they give describes a build nobody measures speed with.
const CALLS: u32 = if cfg!(debug_assertions) { 512 } else { 4096 };
/// Rounds after the warm-up; the fastest counts. Six rounds in all, as many as the wall-clock measurement
/// before it took: a longer start-up measurement holds up the background thread's first pass, and with it
/// live print's first line (capture_e2e's partial-line test failed 6 of 30 under six `yes` with nine).
const ROUNDS: u32 = 5;

/// Whether the cost can be measured here: not with the manual clock of perfgraph's deterministic tests,
/// whose reports must not vary, nor where the thread's CPU time cannot be read.
fn measurable() -> bool {
    clock::source() != Source::Manual && sys::own_cpu_ns().is_some()
}

/// One round of [`CALLS`] sections on `state`, timed on this thread's CPU clock: ns per section (`None`
/// if the clock did not move).
fn round(state: &ThreadState) -> Option<f64> {
    // A plain section's path, or the counting one while the counting allocator counts.
    let counting = crate::base::heap::counting();
    let start = sys::own_cpu_ns().unwrap_or(0);
    for i in 0..CALLS {
        // The final pass's measurement is exit progress: slow but moving (a debug build under
        // Callgrind with both cores busy takes seconds a round) is not stuck. One relaxed add every 512
        // calls: under 0.1 ns a call.
        if i % 512 == 511 {
            process::progress();
        }
        // SAFETY: `state` was made on this thread, which alone enters and exits on it.
        unsafe {
            let depth = if counting {
                state.enter_with(1, 0)
            } else {
                state.enter(1)
            };
            state.exit(depth);
        }
    }
    let spent = sys::own_cpu_ns().unwrap_or(0).saturating_sub(start);
    (spent > 0).then(|| spent as f64 / f64::from(CALLS))
}

/// Measures the cost per section at once (a warm-up round, then the best of [`ROUNDS`]) and records it
/// ([`process::set_overhead_ns`], which keeps the lower of this and an earlier measurement): at start-up,
/// before the background thread's first pass, and again in the final pass.
pub(crate) fn measure() {
    if !measurable() {
        return;
    }
    let state = ThreadState::detached();
    let mut best = f64::MAX;
    for r in 0..=ROUNDS {
        if let Some(ns) = round(&state)
            && r > 0
        {
            best = best.min(ns);
        }
    }
    if best < f64::MAX {
        process::set_overhead_ns(best);
    }
}
