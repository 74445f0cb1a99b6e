//! A span's state in the registry's extensions, where every thread finds it: for a span entered more than
//! once (an async span's polls), or entered on another thread than the one that holds it.

use std::sync::atomic::{AtomicU64, Ordering};

use tracing_subscriber::registry::ExtensionsMut;

use crate::base::clock;
use crate::base::registry::Section;
use crate::entry;
use crate::local::guard::Guard;
use crate::local::pending;

/// [`enter`]'s pending live future to restore at an exit, for a span not in the pending list.
pub(super) const NO_PREVIOUS: u64 = u64::MAX;

/// A span's state in its extensions ([`Shared`]), once it may be needed on another thread.
pub(super) struct SpanState {
    /// Its callsite's section.
    pub(super) site: &'static Section,
    /// Ticks at its first enter.
    pub(super) first_ticks: u64,
    /// That enter's duration, if it ended on a thread that knew it: the span's latency if it closes
    /// without another enter.
    pub(super) first_latency: Option<u64>,
    /// From its second enter, if its callsite has a `live` field and live print is on: its id and slot in
    /// the list of pending live futures (live print shows it by wall time, as a timed future).
    pub(super) pending: Option<(u64, usize)>,
    /// Enters so far (recorded ones: 0 while `off`).
    pub(super) enters: u32,
    /// Not recorded (its level was above the verbosity at its first enter).
    pub(super) off: bool,
}

/// A span's state in its extensions, where every thread finds it. The registry drops it when the span
/// closes, on the closing thread, which ends a span entered more than once (see [`end`]).
pub(super) struct Shared(pub(super) SpanState);

impl Drop for Shared {
    fn drop(&mut self) {
        end(&mut self.0);
    }
}

/// The section of a span with state `s`, for its events: if it is recorded and was entered.
pub(super) fn recorded(s: &SpanState) -> Option<&'static Section> {
    (!s.off && s.enters > 0).then_some(s.site)
}

/// An enter of the span whose state is `s` in its extensions: its section entered on this thread (its
/// guard: [`Guard::OFF`] if not recorded), and the pending live future to restore at its exit
/// ([`NO_PREVIOUS`] if none).
pub(super) fn enter(s: &mut SpanState) -> (Guard, u64) {
    if s.off {
        return (Guard::OFF, NO_PREVIOUS);
    }
    if s.enters == 0 {
        let guard = entry::enter(s.site, s.site.level());
        s.off = !guard.is_recorded();
        s.enters = u32::from(!s.off);
        s.first_ticks = clock::now().0;
        return (guard, NO_PREVIOUS);
    }
    let Some(state) = entry::poll_state(s.site, s.site.level(), false) else {
        return (Guard::OFF, NO_PREVIOUS);
    };
    s.enters = s.enters.saturating_add(1);
    // SAFETY: `state` is this thread's own state (`poll_state` returns the calling thread's).
    let (guard, node) =
        unsafe { Guard::open_span_poll(state, s.site.id(), false, entry::poll_flags(s.site)) };
    // A span entered once is a call; from its second enter on, its enters are polls (the first too).
    if s.enters == 2 {
        node.poll();
    }
    node.poll();
    // Entered again: an async span (`#[instrument] async fn`). With a `live` field it joins the pending
    // live futures, as a timed future does at its first poll (a cold path, once per span).
    if s.enters == 2 && pending::enabled() && s.site.has_live_message() {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Ids with the top bit set never meet a timed future's (thread index << 40 | count).
        let id = 1 << 63 | NEXT.fetch_add(1, Ordering::Relaxed);
        s.pending = Some((id, pending::add(s.site.id(), s.first_ticks, id, None)));
    }
    let previous = s
        .pending
        .map_or(NO_PREVIOUS, |(id, _)| pending::polling(id));
    (guard, previous)
}

/// The span whose state is `s` closed: its latency goes to its call path on this thread (its section
/// under the innermost section open here). A span entered more than once (polled) records its first
/// enter to now, and adds that to the path's wall time; one entered once records that enter's duration.
fn end(s: &mut SpanState) {
    let now = clock::now().0;
    if let Some((id, slot)) = s.pending.take() {
        pending::remove(slot, id, now, false);
    }
    if s.off {
        return;
    }
    let (latency, polled) = match (s.enters, s.first_latency) {
        (2.., _) => (now.saturating_sub(s.first_ticks), true),
        (_, Some(ticks)) => (ticks, false),
        _ => return,
    };
    let Some(state) = entry::poll_state(s.site, s.site.level(), false) else {
        return;
    };
    // SAFETY: `state` is this thread's own state (`poll_state` returns the calling thread's).
    unsafe { state.span_ended(s.site.id(), latency, polled) };
}

/// Moves `s` into the extensions `ext` of its span. If another thread put one there meanwhile (the span
/// was entered on two threads at once), they become one: enters added, the earlier first enter kept.
pub(super) fn put(ext: &mut ExtensionsMut<'_>, s: SpanState) {
    if s.off {
        return;
    }
    let Some(Shared(into)) = ext.get_mut::<Shared>() else {
        ext.insert(Shared(s));
        return;
    };
    if into.off {
        *into = s;
        return;
    }
    into.enters = into.enters.saturating_add(s.enters);
    into.first_ticks = into.first_ticks.min(s.first_ticks);
    match (into.pending, s.pending) {
        (None, Some(p)) => into.pending = Some(p),
        (Some(_), Some((id, slot))) => pending::remove(slot, id, clock::now().0, false),
        _ => {}
    }
}
