//! What recording a section costs, measured once at start-up on the background thread (as Google
//! Highway's profiler calibrates its own overhead): the report's `Instrumentation:` line and the JSON's
//! `overhead_ns_per_section`.
//!
//! The measurement opens and closes a section on a thread state of its own, registered nowhere, the way a
//! recording thread does (both clock readings, the call tree, the histogram, the ring): the best of a few
//! rounds of a few thousand calls, so a round the scheduler cut into does not count. It takes about a
//! millisecond. It leaves out the entry's level check and thread-local lookup (a few instructions), so it
//! is the floor of the cost; `benches/` measures the whole.

use std::time::Instant;

use crate::base::clock::{self, Source};
use crate::base::process;
use crate::local::thread::ThreadState;

/// Calls per round.
const CALLS: u32 = 4096;
/// Rounds; the fastest counts.
const ROUNDS: u32 = 6;

/// Measures the cost per section and records it ([`process::set_overhead_ns`]). Not with the manual clock
/// of perfgraph's deterministic tests, whose reports must not vary.
pub(crate) fn measure() {
    if clock::source() == Source::Manual {
        return;
    }
    let state = ThreadState::detached();
    // A plain section's path, or the counting one while the counting allocator counts.
    let counting = crate::base::heap::counting();
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS {
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
        best = best.min(start.elapsed().as_nanos() as f64 / f64::from(CALLS));
    }
    process::set_overhead_ns(best);
}
