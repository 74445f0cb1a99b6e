//! Entering and leaving a section: what `#[timed]` and `time_section!` expand to.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::registry::Section;
use crate::thread::{self, ThreadState};

/// Threshold before the runtime has read its settings: every section takes the enabled path once, which
/// initialises the runtime and then re-checks its level.
const UNINIT: u32 = u32::MAX;

/// A section with `level < THRESHOLD` is recorded. `off` is 0, verbosity `v` is `v + 1`.
static THRESHOLD: AtomicU32 = AtomicU32::new(UNINIT);

/// The highest level of section that is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Record nothing.
    Off,
    /// Record sections whose level is at most this (0..=3; higher values record every level).
    Level(u8),
}

impl Verbosity {
    fn threshold(self) -> u32 {
        match self {
            Verbosity::Off => 0,
            Verbosity::Level(l) => l as u32 + 1,
        }
    }
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
    THRESHOLD.store(verbosity.threshold(), Ordering::Relaxed);
}

/// The verbosity in force (reading `PERFGRAPH_VERBOSITY` if nothing has yet).
pub fn verbosity() -> Verbosity {
    if THRESHOLD.load(Ordering::Relaxed) == UNINIT {
        crate::runtime::ensure_init();
    }
    match THRESHOLD.load(Ordering::Relaxed) {
        0 => Verbosity::Off,
        t => Verbosity::Level((t - 1).min(255) as u8),
    }
}

/// Called once by the runtime's init: applies the environment's verbosity unless `set_verbosity` came first.
pub(crate) fn init_threshold(verbosity: Option<u8>) {
    let v = verbosity.map_or(Verbosity::Off, Verbosity::Level);
    // Relaxed: a lost race with `set_verbosity` just means the explicit call wins, which is what we want.
    let _ = THRESHOLD.compare_exchange(UNINIT, v.threshold(), Ordering::Relaxed, Ordering::Relaxed);
}

/// Ends its section when dropped. Made by the macros; `!Send`, so it ends on the thread that started it.
#[must_use = "a section ends when its guard is dropped; bind it to a local"]
#[derive(Debug)]
pub struct Guard {
    /// The current thread's state, or null for a section that is not recorded.
    state: *const ThreadState,
    /// Depth the section opened at.
    depth: u32,
}

impl Guard {
    const OFF: Guard = Guard {
        state: std::ptr::null(),
        depth: 0,
    };
}

/// Starts recording `site` unless its `level` is above the verbosity. When it is: one Relaxed load and a
/// branch, and one more of each to note (the first time only) that the site was skipped, for the reports.
#[inline(always)]
pub fn enter(site: &'static Section, level: u8) -> Guard {
    if (level as u32) < THRESHOLD.load(Ordering::Relaxed) {
        enter_enabled(site, level)
    } else {
        site.note_skipped();
        Guard::OFF
    }
}

/// Out of line, like [`exit_enabled`], so the code at each call site is just the level check and a call:
/// the disabled path then costs a load and a branch, without the register saves the whole enabled path
/// would need in the caller's prologue.
#[inline(never)]
fn enter_enabled(site: &'static Section, level: u8) -> Guard {
    let id = site.id();
    let state = thread::current_ptr();
    if state.is_null() {
        return first_section(site, level);
    }
    // SAFETY: a non-null `current_ptr` is this thread's own state, kept alive for the whole process.
    let own_state = unsafe { &*state };
    // SAFETY: it is this thread's own state (the thread-local just read), so we may enter on it.
    let depth = unsafe { own_state.enter(id) };
    Guard { state, depth }
}

/// The thread's first section: set up the runtime and the thread, then re-check the level against the
/// verbosity just read from the environment.
#[cold]
#[inline(never)]
fn first_section(site: &'static Section, level: u8) -> Guard {
    let Some(state) = thread::current() else {
        return Guard::OFF;
    };
    if (level as u32) >= THRESHOLD.load(Ordering::Relaxed) {
        site.note_skipped();
        return Guard::OFF;
    }
    // SAFETY: `state` is this thread's own state (just registered by `thread::current`).
    let depth = unsafe { state.enter(site.id()) };
    Guard { state, depth }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if !self.state.is_null() {
            exit_enabled(self.state, self.depth);
        }
    }
}

#[inline(never)]
fn exit_enabled(state: *const ThreadState, depth: u32) {
    // SAFETY: `state` is the non-null state of the thread that made the guard, kept alive for the whole process.
    let state = unsafe { &*state };
    // SAFETY: guards are `!Send`, so this is the thread that owns `state`.
    unsafe { state.exit(depth) };
}
