//! Timed futures: what `#[timed] async fn` and `time_future!` expand to.
//!
//! A [`Timed`] future enters its section at the start of every poll, on the polling thread, and leaves it
//! when the poll returns, as tracing's `Instrumented` enters its span: a poll is a normal section call on
//! that thread's stack (the hot path unchanged), so timed futures awaited inside one another nest, and no
//! frame stays open on a thread between polls, whichever worker polls next. Besides, cold and once per
//! future, it keeps:
//!
//! * the call: counted at the first poll only (the call path's `calls` counts futures; `polls` counts
//!   polls);
//! * its wall time, from the first poll to completion, or to the drop of a future that did not complete
//!   (counted as cancelled): added, when it ends, to the call path it ends at (the last poll's, or the
//!   one entered on the dropping thread to drop it: its inner future's destructors run inside the section,
//!   as tracing's `Instrumented` runs them inside its span);
//! * for the trace, its whole life as one record (an async slice in Perfetto);
//! * for live print, an entry in the list of pending live futures ([`crate::local::pending`]), from its
//!   first poll to its end, if its section was given a live message (`live = "..."`).

use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::base::clock;
use crate::base::registry::Section;
use crate::data::args::ArgValue;
use crate::entry;
use crate::local::guard::Guard;
use crate::local::record::{LIFE, LIFE_CANCELLED, Record};
use crate::local::thread::ThreadState;
use crate::local::{marks, pending};

/// A future timed as a section: each poll enters the section on the polling thread and leaves it when the
/// poll returns. Made by `#[timed]` on an `async fn` and by [`time_future!`](crate::time_future); its
/// output is the inner future's.
///
/// The section's `Calls` count futures (at their first poll) and `Polls` their polls; `Self(s)` and
/// `Total(s)` are busy time (inside polls). Wall time runs from the first poll to completion, or to a drop
/// before completion, which counts the future as cancelled. A future dropped before its first poll is not
/// counted at all.
///
/// ```
/// use perfgraph_core::timed;
///
/// #[timed]
/// async fn fetch(n: u32) -> u32 {
///     n + 1
/// }
///
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let mut f = std::pin::pin!(f);
/// #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
/// #             return v;
/// #         }
/// #     }
/// # }
/// assert_eq!(block_on(fetch(41)), 42);
/// let node = perfgraph_core::combined().find(&["fetch"]).cloned().unwrap();
/// assert_eq!((node.calls, node.polls, node.cancelled), (1, 1, 0));
/// assert!(node.total_ns <= node.wall_ns);
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct Timed<F> {
    /// The future timed. Structurally pinned: never moved out; dropped in place by `Drop`, inside the
    /// section when the future was cancelled.
    inner: ManuallyDrop<F>,
    /// The section.
    site: &'static Section,
    /// The section's level.
    level: u8,
    /// Where the future is in its life.
    phase: Phase,
    /// Ticks at its first poll (when `phase` is `Running` or `Done`).
    first_ticks: u64,
    /// Its id in the trace and in the pending list: the first-polling thread's index and a number of that
    /// thread's (when `phase` is `Running` or `Done`).
    id: u64,
    /// Registered in the pending list (live print is on and the section has a live message): its slot there.
    pending: Option<usize>,
    /// Its args (`args(...)`), when an output wants them: for the trace, and its filled live message.
    args: Option<Box<FutureArgs>>,
}

/// A timed future's args, taken when it was made (`time_future!`, `#[timed] async fn`).
#[doc(hidden)]
#[derive(Debug)]
pub struct FutureArgs {
    /// The values, for the trace (`None` when the trace is off).
    values: Option<Box<[ArgValue]>>,
    /// Its live message filled in, for live print (`None` when live print is off or the message names no
    /// arg).
    text: Option<std::sync::Arc<str>>,
}

/// The args of a timed future of `site` at `level`, made now: `args` is evaluated only if the future will be
/// recorded and an output wants them (the trace; live print when `fill`, the message naming args). What the
/// macros expand to, before the future (which may take the values the args borrow).
#[doc(hidden)]
pub fn future_args<const N: usize>(
    site: &'static Section,
    level: u8,
    fill: bool,
    args: impl FnOnce() -> [ArgValue; N],
) -> Option<Box<FutureArgs>> {
    if !crate::local::verbosity::records(level) {
        return None;
    }
    // The outputs are known once the runtime has started (the first poll would start it anyway).
    entry::start();
    let trace = marks::wanted();
    let fill = fill && pending::enabled();
    if !trace && !fill {
        return None;
    }
    let values = crate::base::heap::untracked(args);
    let text = fill.then(|| entry::filled_message(site, &values)).flatten();
    Some(Box::new(FutureArgs {
        values: trace.then(|| Box::from(values)),
        text,
    }))
}

/// Where a [`Timed`] future is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not polled yet.
    New,
    /// Its level was above the verbosity at the first poll: never recorded.
    Off,
    /// Polled, not completed.
    Running,
    /// Completed.
    Done,
}

impl<F> Timed<F> {
    /// Times `inner` as the section `site` at `level` (what the macros expand to).
    #[doc(hidden)]
    pub fn new(site: &'static Section, level: u8, inner: F) -> Timed<F> {
        Timed {
            inner: ManuallyDrop::new(inner),
            site,
            level,
            phase: Phase::New,
            first_ticks: 0,
            id: 0,
            pending: None,
            args: None,
        }
    }

    /// The future with `args` (from [`future_args`]).
    #[doc(hidden)]
    pub fn with_args(mut self, args: Option<Box<FutureArgs>>) -> Timed<F> {
        self.args = args;
        self
    }

    /// A future's end (completion or drop) at `node`, on `state`'s own thread. Once per future, out of
    /// line: it keeps `poll` small enough to inline.
    #[cold]
    #[inline(never)]
    fn end(
        &mut self,
        state: &'static ThreadState,
        node: &crate::local::tree::AsyncNode,
        cancelled: bool,
    ) {
        let end = clock::now().0;
        let wall = end.saturating_sub(self.first_ticks);
        node.end(wall, cancelled);
        if marks::wanted() {
            let kind = if cancelled { LIFE_CANCELLED } else { LIFE };
            if let Some(mut values) = self.args.as_mut().and_then(|a| a.values.take()) {
                // SAFETY: `state` is this thread's own state; the args go just before the life's record.
                unsafe { state.push_args(self.site.id(), &mut values) };
            }
            // SAFETY: `state` is this thread's own state (`entry::poll_state` returned it on this thread).
            unsafe {
                state.push_mark(Record::mark(
                    self.site.id(),
                    self.first_ticks,
                    end,
                    kind,
                    self.id,
                ))
            };
        }
        if let Some(slot) = self.pending.take() {
            pending::remove(slot, self.id, end, cancelled);
        }
    }
}

impl<F: Future> Future for Timed<F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `inner` is structurally pinned (never moved out, dropped in place); nothing else here
        // needs pinning, and `self` is not moved.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above: `inner` stays where it is until it is dropped in place.
        let inner = unsafe { Pin::new_unchecked(&mut *this.inner) };
        let first = match this.phase {
            Phase::Running => false,
            Phase::New => true,
            Phase::Off | Phase::Done => return inner.poll(cx),
        };
        let Some(state) = entry::poll_state(this.site, this.level, first) else {
            this.phase = Phase::Off;
            return inner.poll(cx);
        };
        if first {
            this.first_ticks = clock::now().0;
            this.phase = Phase::Running;
            this.id = next_id(state);
        }
        // SAFETY: `state` is this thread's own state (`poll_state` returns the calling thread's).
        let (guard, node) =
            unsafe { Guard::open_poll(state, this.site.id(), first, entry::poll_flags(this.site)) };
        node.poll();
        if first && pending::enabled() && this.site.has_live_message() {
            let text = this.args.as_mut().and_then(|a| a.text.take());
            this.pending = Some(pending::add(
                this.site.id(),
                this.first_ticks,
                this.id,
                text,
            ));
        }
        let out = match this.pending {
            // Live futures first polled inside this one are indented under it in live print.
            Some(_) => {
                let previous = pending::polling(this.id);
                let out = inner.poll(cx);
                pending::polled(previous);
                out
            }
            None => inner.poll(cx),
        };
        drop(guard);
        if out.is_ready() {
            this.phase = Phase::Done;
            this.end(state, node, false);
        }
        out
    }
}

impl<F> Drop for Timed<F> {
    fn drop(&mut self) {
        if self.phase != Phase::Running {
            // SAFETY: dropped once, here, in place (it is never moved out).
            unsafe { ManuallyDrop::drop(&mut self.inner) };
            return;
        }
        // Cancelled: its destructors run inside its section, on this thread (as tracing's `Instrumented`
        // enters its span to drop its future), and its end lands where it was dropped.
        let Some(state) = entry::poll_state(self.site, self.level, false) else {
            // SAFETY: dropped once, here, in place.
            unsafe { ManuallyDrop::drop(&mut self.inner) };
            return;
        };
        // SAFETY: `state` is this thread's own state.
        let (guard, node) =
            unsafe { Guard::open_poll(state, self.site.id(), false, entry::poll_flags(self.site)) };
        // SAFETY: dropped once, here, in place.
        unsafe { ManuallyDrop::drop(&mut self.inner) };
        drop(guard);
        self.end(state, node, true);
    }
}

impl<F> std::fmt::Debug for Timed<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timed")
            .field("section", &self.site.id())
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

/// A future id unique in the process: the thread's index in the top 24 bits, a count of this thread's
/// below.
fn next_id(state: &ThreadState) -> u64 {
    thread_local! {
        static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let n = NEXT.try_with(|c| {
        let n = c.get() + 1;
        c.set(n);
        n
    });
    (state.index as u64) << 40 | n.unwrap_or(0) & ((1 << 40) - 1)
}
