//! A `tracing` span's enter, ended: [`ThreadState::exit_unrecorded`] closes its section as
//! [`ThreadState::exit`] does, but gives back its start and its duration held back from its path's
//! histogram, which the span's close records once it knows whether the span was entered only once.

use super::latency::Block;
use super::samples::{Closed, EndSample, Ending};
use super::thread::{ThreadState, note_interleaved, plain_end};
use crate::base::clock;

/// A `tracing` span's enter, ended ([`ThreadState::exit_unrecorded`]).
#[cfg(feature = "tracing")]
#[derive(Debug, Clone, Copy)]
pub struct SpanEnded {
    /// Its start, ticks.
    pub start: u64,
    /// Its duration, for its path's histogram (`None` if the path has none).
    pub latency: Option<SpanLatency>,
}

/// A `tracing` span's enter whose duration is not in its histogram yet ([`ThreadState::exit_unrecorded`]):
/// the span's close records it if the span was entered only once.
#[cfg(feature = "tracing")]
#[derive(Debug, Clone, Copy)]
pub struct SpanLatency {
    /// Its path's histogram, in the tree of the state it was taken on (which frees it only when the
    /// state is freed).
    pub(super) block: std::ptr::NonNull<Block>,
    /// That state's index: unique per state, so a state registered later at the same address, the
    /// first one freed, has another.
    pub(super) index: u32,
    /// The enter's duration, ticks.
    pub(super) ticks: u64,
}

#[cfg(feature = "tracing")]
impl SpanLatency {
    /// The enter's duration, ticks.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }
}

#[cfg(feature = "tracing")]
impl SpanLatency {
    /// Records the duration into its histogram if `current`, this thread's state now, is the one it was
    /// taken on. After the thread's exit hook, a late span close finds another state or none (the caller
    /// then records nothing).
    ///
    /// # Safety
    /// `current` must be the calling thread's current state (`threads::current_ptr`, not null).
    #[inline]
    pub unsafe fn record(self, current: &ThreadState) {
        if current.index == self.index {
            // SAFETY: `current` is this thread's live state (the caller's contract), and its index is
            // `index`, so it is the very state `block` was taken from (indices are unique per state),
            // whose tree, and so `block`, is alive with it; this thread is its owner, the one writer of
            // its histograms.
            unsafe { self.block.as_ref() }.record(self.ticks);
        }
    }
}

impl ThreadState {
    /// [`exit`](Self::exit) for a `tracing` span's enter: the duration of the call at `depth` does not go
    /// into its histogram. It comes back with that histogram and the call's start (`None` if the
    /// section was already closed), for the span's close to record once it knows what the span was
    /// (entered once, or polled): see [`SpanLatency::record`]. Out of line: spans only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[cfg(feature = "tracing")]
    #[inline(always)]
    pub unsafe fn exit_unrecorded(&self, depth: u32) -> Option<SpanEnded> {
        let end = clock::now().0;
        // SAFETY: this is the owning thread (caller's contract).
        if unsafe { self.side() }.flagged != 0 {
            // SAFETY: as above.
            return unsafe { self.exit_unrecorded_with(depth, end) };
        }
        // SAFETY: as above.
        unsafe { self.exit_unrecorded_as(depth, end, plain_end) }
    }

    /// [`exit_unrecorded`](Self::exit_unrecorded) while a section with flags is open, as
    /// [`exit_with`](Self::exit_with).
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[cfg(feature = "tracing")]
    #[inline(never)]
    unsafe fn exit_unrecorded_with(&self, depth: u32, end: u64) -> Option<SpanEnded> {
        // SAFETY: this is the owning thread (caller's contract).
        let at_end = |e: Ending| unsafe { self.flagged_end(e) };
        // SAFETY: as above.
        unsafe { self.exit_unrecorded_as(depth, end, at_end) }
    }

    /// The body of [`exit_unrecorded`](Self::exit_unrecorded), with `at_end` taking the end figures.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[cfg(feature = "tracing")]
    #[inline(always)]
    unsafe fn exit_unrecorded_as(
        &self,
        depth: u32,
        end: u64,
        at_end: impl FnMut(Ending) -> EndSample,
    ) -> Option<SpanEnded> {
        let mut last = None;
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe {
            self.stack
                .exit_as::<false>(depth, end, at_end, note_interleaved, |closed| {
                    self.note_closed(&closed, closed.heap_alert);
                    last = Some(closed);
                });
        }
        let closed: Closed = last.filter(|c: &Closed| c.depth == depth)?;
        Some(SpanEnded {
            start: end.saturating_sub(closed.elapsed),
            latency: std::ptr::NonNull::new(closed.unrecorded.cast_mut()).map(|block| {
                SpanLatency {
                    block,
                    index: self.index,
                    ticks: closed.elapsed,
                }
            }),
        })
    }
}
