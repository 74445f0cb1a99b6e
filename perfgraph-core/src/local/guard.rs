//! The guard a recorded section holds: it ends the section when dropped, on the thread that opened it.
//!
//! The macros reach it through the entry point `enter` (in the crate's `entry` module), which checks the
//! verbosity and, at a thread's first section, starts the runtime; this module holds only what runs on a
//! thread that is already recording.

use std::marker::PhantomData;

#[cfg(feature = "tracing")]
use super::span_end::SpanEnded;
use super::thread::ThreadState;
use super::tree::AsyncNode;
use crate::base::registry::SectionId;
use crate::data::args::ArgValue;

/// The name this crate's code uses for [`SectionGuard`].
pub type Guard = SectionGuard;

/// The guard `time_section!` (and `#[timed]` on a synchronous function) holds: it ends its section when
/// dropped. `!Send` and `!Sync`, so it ends on the thread that started it.
///
/// It must not be held across an `.await`: a poll that returns `Pending` would leave the section open on
/// that thread while other tasks run there. In a future that must be `Send` (`tokio::spawn`), the compiler
/// refuses it, with a note saying what to use instead: `#[timed] async fn` or `time_future!`, which enter
/// the section on every poll. In a `!Send` future it compiles; a guard that then ends while a section
/// opened after it is still open is reported once at run time (sections interleaved on one thread).
///
/// ```
/// let guard: perfgraph_core::SectionGuard = {
///     perfgraph_core::time_section!("step");
///     # perfgraph_core::__private::Guard::OFF
/// };
/// drop(guard);
/// ```
#[must_use = "a section ends when its guard is dropped; bind it to a local"]
#[derive(Debug)]
pub struct SectionGuard {
    /// The current thread's state, or `None` for a section that is not recorded.
    state: Option<&'static ThreadState>,
    /// Depth the section opened at.
    depth: u32,
    /// The one reason the guard is `!Send` (and `!Sync`): a guard moved to another thread would close a
    /// section on a thread that does not own it. Its `Send` impl asks for a trait nobody implements, whose
    /// `on_unimplemented` note is what the compiler says of a guard held across an `.await`.
    _not_send: HeldAcrossAwait,
}

/// What a `time_section!` guard held across an `.await` in a future that must be `Send` lacks: implemented
/// by no type, so the compiler's error carries the hint below.
#[diagnostic::on_unimplemented(
    message = "a `time_section!` guard (`perfgraph_core::SectionGuard`) is held across an `.await`",
    label = "the section's guard is held across an `.await`",
    note = "a `time_section!` guard must not be held across an `.await`: time async code with `#[timed] async fn` or `time_future!(\"name\", future)`, which enter the section on every poll, on the polling thread"
)]
pub trait NotHeldAcrossAwait {}

/// The `!Send` marker of [`SectionGuard`]: `Send` only for a `T` implementing [`NotHeldAcrossAwait`],
/// which none does.
#[derive(Debug, Clone, Copy)]
pub struct HeldAcrossAwait<T = SectionGuard>(PhantomData<NotSend<T>>);

/// `!Send` and `!Sync` (the raw pointer), and naming `T` without owning one.
type NotSend<T> = (fn() -> T, *const ());

// SAFETY: no type implements `NotHeldAcrossAwait`, so this impl never applies; it exists for its error.
unsafe impl<T: NotHeldAcrossAwait> Send for HeldAcrossAwait<T> {}

const NOT_SEND: HeldAcrossAwait = HeldAcrossAwait(PhantomData);

impl Guard {
    /// The guard of a section that is not recorded: dropping it does nothing.
    #[doc(hidden)] // for the macros and the crate's own entry points, not for users
    pub const OFF: Guard = Guard {
        state: None,
        depth: 0,
        _not_send: NOT_SEND,
    };

    /// The guard of a section just entered on `state` at `depth`.
    #[inline(always)]
    fn entered(state: &'static ThreadState, depth: u32) -> Guard {
        Guard {
            state: Some(state),
            depth,
            _not_send: NOT_SEND,
        }
    }

    /// Whether the section is recorded (not [`OFF`](Guard::OFF)).
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn is_recorded(&self) -> bool {
        self.state.is_some()
    }

    /// Clock ticks at the section's start, while it is open (`None` if not recorded): what a caller that
    /// needs its start time (a span's first enter, for its wall time) reads instead of the clock.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn start(&self) -> Option<u64> {
        // SAFETY: guards are `!Send`, so this is the thread that made the guard, which owns `state`.
        unsafe { self.state?.start_at(self.depth) }
    }

    /// Ends the section as dropping the guard does, except that its duration does not go into its
    /// histogram: it comes back, for a `tracing` span's close to record (see
    /// `ThreadState::exit_unrecorded`). `None` if the section is not recorded or was already closed.
    #[cfg(feature = "tracing")]
    #[inline(always)]
    pub(crate) fn close_unrecorded(mut self) -> Option<SpanEnded> {
        let state = self.state.take()?;
        // SAFETY: guards are `!Send`, so this is the thread that made the guard, which owns `state`.
        unsafe { state.exit_unrecorded(self.depth) }
    }

    /// Opens `section` on `state` and returns its guard: a section that takes nothing out of line (see
    /// `ThreadState::enter`).
    ///
    /// # Safety
    /// `state` must be the calling thread's own state (`threads::current`), which lives for the whole
    /// process.
    #[doc(hidden)] // for the macros and the crate's own entry points, not for users
    #[inline(always)]
    pub unsafe fn open(state: &'static ThreadState, section: SectionId) -> Guard {
        // SAFETY: `state` is this thread's own state (this fn's contract), so we may enter on it.
        let depth = unsafe { state.enter(section) };
        Guard::entered(state, depth)
    }

    /// As [`open`](Guard::open), for a section that may take figures out of line: `flags` as
    /// `ThreadState::enter_with` takes them (exact memory, CPU clock).
    ///
    /// # Safety
    /// As [`open`](Guard::open).
    #[doc(hidden)] // for the macros and the crate's own entry points, not for users
    #[inline(always)]
    pub unsafe fn open_with(state: &'static ThreadState, section: SectionId, flags: u8) -> Guard {
        // SAFETY: `state` is this thread's own state (this fn's contract), so we may enter on it.
        let depth = unsafe { state.enter_with(section, flags) };
        Guard::entered(state, depth)
    }
}

impl Guard {
    /// Opens `section` on `state` for a timed future's poll (or the drop of a cancelled one), counting a
    /// call only if `call`, taking `flags` out of line (the CPU clock); returns the guard and the call
    /// path's `AsyncNode`.
    ///
    /// # Safety
    /// As [`open`](Guard::open).
    #[doc(hidden)] // for the macros and the crate's own entry points, not for users
    #[inline]
    pub unsafe fn open_poll(
        state: &'static ThreadState,
        section: SectionId,
        call: bool,
        flags: u8,
    ) -> (Guard, &'static AsyncNode) {
        // SAFETY: `state` is this thread's own state (this fn's contract), as `open_poll_as` asks.
        unsafe { Self::open_poll_as(state, section, call, flags, true) }
    }

    /// [`open_poll`](Self::open_poll) for a `tracing` span entered again: its path keeps recording each
    /// enter's duration (a span entered once is a call, and one path may see both kinds).
    ///
    /// # Safety
    /// As [`open_poll`](Self::open_poll).
    #[doc(hidden)] // for the macros and the crate's own entry points, not for users
    #[inline]
    pub unsafe fn open_span_poll(
        state: &'static ThreadState,
        section: SectionId,
        call: bool,
        flags: u8,
    ) -> (Guard, &'static AsyncNode) {
        // SAFETY: `state` is this thread's own state (this fn's contract), as `open_poll_as` asks.
        unsafe { Self::open_poll_as(state, section, call, flags, false) }
    }

    /// The body of [`open_poll`](Self::open_poll) and [`open_span_poll`](Self::open_span_poll):
    /// `per_future` as `ThreadState::enter_poll` takes it (`false` for a span entered again).
    ///
    /// # Safety
    /// As [`open`](Guard::open).
    #[inline(always)]
    unsafe fn open_poll_as(
        state: &'static ThreadState,
        section: SectionId,
        call: bool,
        flags: u8,
        per_future: bool,
    ) -> (Guard, &'static AsyncNode) {
        // SAFETY: `state` is this thread's own state (this fn's contract), so we may enter on it.
        let (depth, node) = unsafe { state.enter_poll(section, call, flags, per_future) };
        (Guard::entered(state, depth), node)
    }
}

impl Guard {
    /// The thread state and depth of a recorded section's call, `None` if it is not recorded.
    #[inline]
    pub(crate) fn owner(&self) -> Option<(&'static ThreadState, u32)> {
        Some((self.state?, self.depth))
    }
}

/// The guard of a section whose call site records args (`args(...)`): a [`SectionGuard`] that, when the
/// trace wants them, pushes the call's args just before the section's own record at its end.
///
/// ```
/// let n = 3u32;
/// perfgraph_core::time_section!("load", args(n));
/// ```
#[must_use = "a section ends when its guard is dropped; bind it to a local"]
#[derive(Debug)]
pub struct ArgsGuard<const N: usize> {
    /// The args to push at the end, when an output wants them.
    args: Option<[ArgValue; N]>,
    /// The section.
    site: SectionId,
    /// The section's own guard, dropped (ending it) after the args are pushed.
    guard: Guard,
}

impl<const N: usize> ArgsGuard<N> {
    /// `guard`'s call of section `site`, with `args` to push at its end (`None`: nothing wants them).
    #[inline]
    pub(crate) fn new(guard: Guard, site: SectionId, args: Option<[ArgValue; N]>) -> Self {
        ArgsGuard { args, site, guard }
    }
}

impl<const N: usize> Drop for ArgsGuard<N> {
    #[inline]
    fn drop(&mut self) {
        if let (Some(args), Some((state, _))) = (self.args.as_mut(), self.guard.owner()) {
            // SAFETY: guards are `!Send` (this one holds a `Guard`), so this is the thread that made it,
            // which owns `state`.
            unsafe { state.push_args(self.site, args) };
        }
        // `self.guard` drops next, pushing the section's record after its args.
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
