//! The verbosity threshold the hot path compares a section's level with: one `Relaxed` load and a branch.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::base::config::Verbosity;

/// Threshold before the runtime has read its settings: every section takes the enabled path once, which
/// starts the runtime and then re-checks its level.
const UNINIT: u32 = u32::MAX;

/// A section with `level < THRESHOLD` is recorded. `off` is 0, verbosity `v` is `v + 1`.
static THRESHOLD: AtomicU32 = AtomicU32::new(UNINIT);

fn threshold(verbosity: Verbosity) -> u32 {
    match verbosity {
        Verbosity::Off => 0,
        Verbosity::Level(l) => l as u32 + 1,
    }
}

/// Whether a section of `level` is recorded (always `true` before the settings are read).
#[inline(always)]
pub fn records(level: u8) -> bool {
    (level as u32) < THRESHOLD.load(Ordering::Relaxed)
}

/// Sets the verbosity for the rest of the run, overriding `PERFGRAPH_VERBOSITY`. Sections already open
/// still end normally.
///
/// ```
/// use perfgraph_core::{Verbosity, set_verbosity, verbosity};
/// set_verbosity(Verbosity::Level(2));
/// assert_eq!(verbosity(), Verbosity::Level(2));
/// set_verbosity(Verbosity::Off);
/// ```
pub fn set_verbosity(verbosity: Verbosity) {
    THRESHOLD.store(threshold(verbosity), Ordering::Relaxed);
}

/// The verbosity in force, or `None` before the settings are read (and nothing set it).
pub fn current() -> Option<Verbosity> {
    match THRESHOLD.load(Ordering::Relaxed) {
        UNINIT => None,
        0 => Some(Verbosity::Off),
        t => Some(Verbosity::Level((t - 1).min(255) as u8)),
    }
}

/// Called once by the runtime's start: applies the environment's verbosity unless `set_verbosity` came
/// first.
pub fn init(verbosity: Option<u8>) {
    let v = verbosity.map_or(Verbosity::Off, Verbosity::Level);
    // Relaxed: a lost race with `set_verbosity` just means the explicit call wins, which is what we want.
    let _ = THRESHOLD.compare_exchange(UNINIT, threshold(v), Ordering::Relaxed, Ordering::Relaxed);
}
