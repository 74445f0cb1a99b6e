//! What a thread holds of the spans it makes and enters, so that a span made, entered once and closed on
//! one thread never needs the registry: the span it made last, its stack of entered spans, the spans it
//! exited inside another (parked), and the one it exited last with no other span entered (handed over).

use std::cell::RefCell;

use tracing_core::Metadata;

use super::handover::{List, Slot};
use super::shared::{NO_PREVIOUS, SpanState};
use super::sites::SiteCache;
use crate::base::atomics::atomic::AtomicPtr;
use crate::base::clock;
use crate::base::registry::Section;
use crate::local::guard::Guard;
use crate::local::span_end::SpanLatency;
use crate::local::{pending, threads};

/// Every thread's hand-over slot.
pub(super) static SLOTS: List = List {
    head: AtomicPtr::new(std::ptr::null_mut()),
};

/// The state of a span entered once, held by the thread that entered it.
#[derive(Clone, Copy)]
pub(super) struct Once {
    /// Its callsite's section.
    pub(super) site: &'static Section,
    /// Ticks at its enter.
    pub(super) start: u64,
    /// Not recorded (its level was above the verbosity).
    pub(super) off: bool,
    /// Its enter's duration, not yet in its path's histogram: a span's latency is recorded once its fate
    /// is known, at its close: this duration if it was entered only once, its first enter to its close
    /// if entered again. `None` while it is entered, or if not known here (taken from another thread's
    /// hand-over slot).
    pub(super) latency: Option<SpanLatency>,
}

impl Once {
    /// The same as a [`SpanState`], for its extensions.
    pub(super) fn state(self) -> SpanState {
        SpanState {
            site: self.site,
            first_ticks: self.start,
            first_latency: self.latency.map(|l| l.ticks()),
            pending: None,
            enters: u32::from(!self.off),
            off: self.off,
        }
    }

    /// The span was entered once and is closed: its enter's duration into its path's histogram, on this
    /// thread, where it ran.
    #[inline]
    pub(super) fn record(self) {
        let current = threads::current_ptr();
        if let Some(latency) = self.latency
            && !current.is_null()
        {
            // SAFETY: a non-null `current_ptr` is this thread's current state, alive while the thread
            // runs.
            unsafe { latency.record(&*current) };
        }
    }
}

/// A parked span: its id and state. Aligned to a cache line, as [`Open`].
#[repr(align(64))]
struct Parked(u64, Once);

/// At most this many spans are parked on a thread; one more moves the oldest to its extensions.
const PARKED: usize = 8;

/// A span entered on this thread. Aligned to a cache line, so the thread's stack of entered spans (written
/// at every enter and exit) fills whole lines and shares none with another thread's allocations.
#[repr(align(64))]
pub(super) struct Open {
    /// Its id.
    pub(super) id: u64,
    /// Its section's guard ([`Guard::OFF`] if not recorded).
    pub(super) guard: Guard,
    /// The pending live future to restore as the one polled on this thread at its exit, for a span in
    /// the pending list (see [`SpanState::pending`]); [`NO_PREVIOUS`] for the others.
    pub(super) previous: u64,
    /// `Some`: its first enter, its state this entry (entered once: its section, recorded if the guard
    /// is); `None`: its state is in its extensions.
    pub(super) site: Option<&'static Section>,
}

/// What a thread keeps of the spans it makes and enters.
pub(super) struct Local {
    /// The span this thread made last, until it is entered or closed: its id and section. Its first
    /// enter (usually right after) takes its section from here, without a lookup. The registry gives a
    /// closed span's id again only to a span made on the thread that made it (with a new generation), so
    /// the id cannot name another span while it is here.
    pub(super) fresh: Option<(u64, &'static Section)>,
    /// The spans entered on this thread, innermost last.
    pub(super) open: Vec<Open>,
    /// The span entered once and exited last on this thread while another span was still entered on it,
    /// not closed yet: `(id, state)`, until its close or next enter (nearly always its close, right
    /// after). The one before it, if still not closed, is parked.
    exited: Option<(u64, Once)>,
    /// Older such spans: like `exited`, at most [`PARKED`]. They and `exited` move to their extensions
    /// when `open` empties, so a span that another thread enters next (a task that moved between polls)
    /// finds its state there.
    parked: Vec<Parked>,
    /// The recorded span this thread exited last with no other span entered on it, until its close, its
    /// next enter, or the next such exit (which moves it to its extensions): its id and state. `slot`
    /// holds the same id and start for the thread that enters it next, which may be another one (a task
    /// whose poll ended there may move).
    handed: Option<(u64, Once)>,
    /// This thread's hand-over slot, from its first hand-over until it exits.
    slot: Option<&'static Slot>,
    /// A state an exit hands to `exited_publish`, to move to its span's extensions.
    pub(super) outbox: Option<(u64, Once)>,
    /// Callsites' sections.
    pub(super) sites: SiteCache,
}

thread_local! {
    /// This thread's spans.
    pub(super) static LOCAL: RefCell<Local> = const {
        RefCell::new(Local {
            fresh: None,
            open: Vec::new(),
            exited: None,
            parked: Vec::new(),
            handed: None,
            slot: None,
            outbox: None,
            sites: SiteCache::EMPTY,
        })
    };
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            SLOTS.release(slot);
        }
    }
}

/// A callsite's key in a hand-over slot: its section's address.
pub(super) fn site_key(site: &'static Section) -> usize {
    std::ptr::from_ref(site) as usize
}

/// The ticks of a span's enter, read from its section while open (the clock if not recorded).
#[inline]
pub(super) fn first_ticks(guard: &Guard) -> u64 {
    guard.start().unwrap_or_else(|| clock::now().0)
}

impl Local {
    /// Span `id` of callsite `meta` was made on this thread: it is the fresh one (with `site`, else its
    /// callsite's section if registered; `false` if not).
    #[inline]
    pub(super) fn made(
        &mut self,
        id: u64,
        meta: &'static Metadata<'static>,
        site: Option<&'static Section>,
    ) -> bool {
        let Some(site) = site.or_else(|| self.sites.get(meta)) else {
            return false;
        };
        self.fresh = Some((id, site));
        if self.exited.is_some() || !self.parked.is_empty() || self.handed.is_some() {
            self.forget_reused(id);
        }
        true
    }

    /// Forgets a state this thread holds under `id`, which now names a new span (the span that had it
    /// closed on another thread, and the registry gave its id again).
    #[cold]
    #[inline(never)]
    fn forget_reused(&mut self, id: u64) {
        // It was entered once here, as far as this thread knows, and is closed.
        if let Some((e, once)) = self.exited
            && e == id
        {
            self.exited = None;
            once.record();
        }
        self.parked.retain(|Parked(p, once)| {
            if *p == id {
                once.record();
            }
            *p != id
        });
        if matches!(self.handed, Some((h, _)) if h == id)
            && let Some(once) = self.forget_handed()
        {
            once.record();
        }
    }

    /// The exit of span `id` on this thread: its section left, and a state this thread holds parked, or
    /// handed over, or put in [`outbox`](Local::outbox) to go to its extensions. Whether there is more to
    /// do outside: the outbox, or the parked states to move too (no span is entered here any more).
    #[inline]
    pub(super) fn exit(&mut self, id: u64) -> bool {
        let Some(i) = self.open.iter().rposition(|o| o.id == id) else {
            return false;
        };
        let o = if i + 1 == self.open.len() {
            match self.open.pop() {
                Some(o) => o,
                None => return false,
            }
        } else {
            self.open.remove(i)
        };
        if o.previous != NO_PREVIOUS {
            pending::polled(o.previous);
        }
        let Some(site) = o.site else {
            // A poll (the span is entered again): its duration is not a call's; the close records the
            // span's latency.
            let _ = o.guard.close_unrecorded();
            return self.open.is_empty() && self.holds_exited();
        };
        let off = !o.guard.is_recorded();
        let ended = o.guard.close_unrecorded();
        let once = Once {
            site,
            start: ended.map_or_else(|| clock::now().0, |e| e.start),
            off,
            latency: ended.and_then(|e| e.latency),
        };
        if self.open.is_empty() {
            // Alone on the thread: a task's poll may end here, and the task move.
            return self.hand_over(id, once) || self.holds_exited();
        }
        if self.exited.is_some() {
            return self.park_exited(id, once);
        }
        self.exited = Some((id, once));
        false
    }

    /// Whether this thread holds spans exited inside another span, not closed yet.
    fn holds_exited(&self) -> bool {
        self.exited.is_some() || !self.parked.is_empty()
    }

    /// Span `id` exited inside another span while the one exited before it is not closed yet: that one
    /// is parked, and this one takes its place. If the parked list is full, its oldest goes to the outbox
    /// (whether it did: the return).
    #[cold]
    #[inline(never)]
    fn park_exited(&mut self, id: u64, once: Once) -> bool {
        let Some((id, once)) = self.exited.replace((id, once)) else {
            return false;
        };
        if self.parked.len() >= PARKED {
            let Parked(evicted, state) = self.parked.swap_remove(0);
            self.outbox = Some((evicted, state));
            self.parked.push(Parked(id, once));
            return true;
        }
        self.parked.push(Parked(id, once));
        false
    }

    /// Span `id`, recorded or not, was exited with no other span entered: hand it over through this
    /// thread's slot (a span not recorded has nothing to hand over). The span handed over before, if
    /// still in the slot, goes to the outbox (whether there is: the return).
    fn hand_over(&mut self, id: u64, once: Once) -> bool {
        if once.off {
            return false;
        }
        let slot = *self.slot.get_or_insert_with(|| SLOTS.acquire());
        let before = self
            .handed
            .take()
            .filter(|&(h, before)| slot.take(h, site_key(before.site)).is_some());
        slot.put(id, site_key(once.site), once.start);
        self.handed = Some((id, once));
        self.outbox = before;
        before.is_some()
    }

    /// Forgets the span handed over (it closed, or its id now names another span): its state, if no
    /// other thread took it from the slot (one that did entered it again).
    #[inline]
    fn forget_handed(&mut self) -> Option<Once> {
        let (h, once) = self.handed.take()?;
        self.slot?.take_back(h).then_some(once)
    }

    /// The state this thread holds of span `id`, taken to go to its extensions (the span is entered
    /// again): parked, handed over and not taken by another thread yet, or in an entry of `open` (entered
    /// again while entered), which keeps the section.
    pub(super) fn take(&mut self, id: u64) -> Option<Once> {
        if let Some((e, once)) = self.exited
            && e == id
        {
            self.exited = None;
            return Some(once);
        }
        if let Some(i) = self.parked.iter().rposition(|Parked(p, _)| *p == id) {
            return Some(self.parked.swap_remove(i).1);
        }
        if let Some((h, once)) = self.handed
            && h == id
        {
            self.handed = None;
            return self.slot?.take(id, site_key(once.site)).map(|_| once);
        }
        let o = self.open.iter_mut().rev().find(|o| o.id == id)?;
        let site = o.site.take()?;
        Some(Once {
            site,
            start: first_ticks(&o.guard),
            off: !o.guard.is_recorded(),
            latency: None,
        })
    }

    /// Span `id` closed: what this thread holds of it ends, its enter's duration into its path's
    /// histogram (it was entered once).
    #[inline]
    pub(super) fn closed(&mut self, id: u64) {
        if let Some((e, once)) = self.exited
            && e == id
        {
            self.exited = None;
            once.record();
            return;
        }
        if matches!(self.fresh, Some((fresh, _)) if fresh == id) {
            self.fresh = None;
        }
        if !self.parked.is_empty()
            && let Some(i) = self.parked.iter().rposition(|Parked(p, _)| *p == id)
        {
            self.parked.swap_remove(i).1.record();
        }
        if let Some((h, once)) = &self.handed
            && *h == id
        {
            let once = *once;
            self.handed = None;
            if self.slot.is_some_and(|slot| slot.take_back(id)) {
                once.record();
            }
        }
    }

    /// The next parked state to move to its extensions once no span is entered here.
    pub(super) fn unpark(&mut self) -> Option<(u64, Once)> {
        if self.open.is_empty() {
            self.exited
                .take()
                .or_else(|| self.parked.pop().map(|Parked(id, once)| (id, once)))
        } else {
            None
        }
    }

    /// The section of span `id`'s events if this thread holds its state: `Some(None)` if it is not
    /// recorded.
    pub(super) fn event_site(&self, id: u64) -> Option<Option<&'static Section>> {
        if let Some(o) = self
            .open
            .iter()
            .rev()
            .find(|o| o.id == id && o.site.is_some())
        {
            return Some(o.site.filter(|_| o.guard.is_recorded()));
        }
        if let Some((h, once)) = self.handed
            && h == id
        {
            return Some(Some(once.site));
        }
        if let Some((e, once)) = self.exited
            && e == id
        {
            return Some((!once.off).then_some(once.site));
        }
        let Parked(_, s) = self.parked.iter().find(|Parked(p, _)| *p == id)?;
        Some((!s.off).then_some(s.site))
    }
}
