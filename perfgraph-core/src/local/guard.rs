//! The guard a recorded section holds: it ends the section when dropped, on the thread that opened it.
//!
//! The macros reach it through the entry point `enter` (in the crate's `entry` module), which checks the
//! verbosity and, at a thread's first section, starts the runtime; this module holds only what runs on a
//! thread that is already recording.

use std::marker::PhantomData;

use super::thread::ThreadState;
use crate::base::registry::SectionId;

/// Ends its section when dropped. Made by the macros; `!Send` and `!Sync`, so it ends on the thread that
/// started it.
#[must_use = "a section ends when its guard is dropped; bind it to a local"]
#[derive(Debug)]
pub struct Guard {
    /// The current thread's state, or `None` for a section that is not recorded.
    state: Option<&'static ThreadState>,
    /// Depth the section opened at.
    depth: u32,
    /// The one reason the guard is `!Send` (and `!Sync`), so the compiler's error names it and nothing
    /// private: a guard moved to another thread would close a section on a thread that does not own it.
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// The guard of a section that is not recorded: dropping it does nothing.
    pub const OFF: Guard = Guard {
        state: None,
        depth: 0,
        _not_send: PhantomData,
    };

    /// Opens `section` on `state` and returns its guard.
    ///
    /// # Safety
    /// `state` must be the calling thread's own state (`thread::current`), which lives for the whole
    /// process.
    #[inline(always)]
    pub unsafe fn open(state: &'static ThreadState, section: SectionId) -> Guard {
        // SAFETY: `state` is this thread's own state (this fn's contract), so we may enter on it.
        let depth = unsafe { state.enter(section) };
        Guard {
            state: Some(state),
            depth,
            _not_send: PhantomData,
        }
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(state) = self.state {
            exit_enabled(state, self.depth);
        }
    }
}

/// Out of line, like the entry point's enabled path, so the code at each call site is a null check and a
/// call.
#[inline(never)]
fn exit_enabled(state: &'static ThreadState, depth: u32) {
    // SAFETY: guards are `!Send`, so this is the thread that made the guard, which owns `state`.
    unsafe { state.exit(depth) };
}
