//! Hand-over slots: where a thread leaves the state of the span it exited last with no other span entered,
//! for whichever thread enters that span next.
//!
//! A span exited that way may belong to a task whose poll just ended; the task's next poll, and with it the
//! span's next enter, may run on another thread. The exiting thread writes the span's id and its first
//! enter's ticks into its own slot (two plain stores); the thread that enters the span next, on any
//! thread, takes them out with one compare-and-swap, and so does the owner when it needs the slot for the
//! next span. If the span closes first (a synchronous span: exited, then dropped), the owner empties its
//! slot with one store, and the span never touches the registry.
//!
//! Depends on nothing but `crate::base::atomics`, so `tests/loom_handover.rs` model-checks this very file.

use std::ptr;

use crate::base::atomics::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// A hand-over slot. Owned by one thread at a time (`in_use`), which alone writes a span into it; any
/// thread may take the span out.
///
/// Invariants: `id` is 0 (empty) or the id of the span the owner put last (span ids are never 0), and
/// `site` and `start` are that span's; the owner writes them only while `id` is 0 (after its own put was
/// taken). A span is put once at most (a span whose state was taken lives in the registry
/// from then on), and its id can name another span only after it closed: the owner then empties the slot
/// (if the span closed on the owner's thread, or at the owner's next put), and until then a taker also
/// matches the callsite, so a taker never mistakes one span for another but in the rare case of a span
/// of the same callsite given the id of a span closed on another thread in the meantime.
#[repr(align(64))] // The owner writes it at each hand-over: a line of its own.
pub(crate) struct Slot {
    /// The span in the slot, 0 if none.
    id: AtomicU64,
    /// The address of that span's callsite (its section).
    site: AtomicUsize,
    /// Ticks of that span's first enter.
    start: AtomicU64,
    /// Whether a live thread owns the slot.
    in_use: AtomicBool,
    /// The next slot of the [`List`] (null at the end); set before the slot is published, never changed.
    next: AtomicPtr<Slot>,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            id: AtomicU64::new(0),
            site: AtomicUsize::new(0),
            start: AtomicU64::new(0),
            in_use: AtomicBool::new(true),
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Owner: puts span `id` (not 0) of callsite `site`, first entered at `start`, into the slot, which
    /// must be empty (the owner's last put was taken).
    pub(crate) fn put(&self, id: u64, site: usize, start: u64) {
        debug_assert_ne!(id, 0);
        self.site.store(site, Ordering::Relaxed);
        self.start.store(start, Ordering::Relaxed);
        // Release: pairs with the Acquire load in `take`, which then reads this `start`.
        self.id.store(id, Ordering::Release);
    }

    /// Anyone: takes span `id` of callsite `site` out of the slot, with the ticks of its first enter, if
    /// the slot holds it. Of the threads that try at once (the owner included), exactly one gets it.
    pub(crate) fn take(&self, id: u64, site: usize) -> Option<u64> {
        // Acquire: pairs with the Release store in `put`, so `site` and `start` below are the ones put
        // with `id`.
        if id == 0 || self.id.load(Ordering::Acquire) != id {
            return None;
        }
        if self.site.load(Ordering::Relaxed) != site {
            return None;
        }
        let start = self.start.load(Ordering::Relaxed);
        // Release on success: pairs with the Acquire load of the owner's next `take` (which finds the slot
        // empty), so the owner writes a new `site` and `start` only after this thread read its own. The swap fails if the owner or another taker got there first; then
        // `start` may be a newer put's, and is dropped.
        self.id
            .compare_exchange(id, 0, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| start)
    }

    /// Owner: whether the slot still holds span `id`, emptying it if so, when that span closes (if not,
    /// another thread took it and entered the span again). No other thread can be taking it then: a
    /// thread takes a span only inside that span's enter, while it holds a handle to it, and the span
    /// closes only once every handle is dropped, after which no handle (and no enter) is left; that
    /// enter's take happened before the close. So a load and a store do.
    #[inline]
    pub(crate) fn take_back(&self, id: u64) -> bool {
        let held = self.id.load(Ordering::Relaxed) == id;
        if held {
            self.id.store(0, Ordering::Relaxed);
        }
        held
    }
}

/// Every slot ever made, in a list that only grows; a slot whose thread exited is reused by the next
/// thread that needs one, so the list is as long as the most threads that handed spans over at once.
pub(crate) struct List {
    /// The newest slot (null: none yet).
    pub(crate) head: AtomicPtr<Slot>,
}

impl List {
    /// A free slot for the calling thread: a released one, else a new one (leaked: slots are reused,
    /// never freed).
    pub(crate) fn acquire(&self) -> &'static Slot {
        let mut at = self.head.load(Ordering::Acquire);
        while !at.is_null() {
            // SAFETY: list entries are leaked `Slot`s, never freed, published with a Release swap of
            // `head` after their `next` was set (the Acquire loads of `head` pair with it).
            let slot: &'static Slot = unsafe { &*at };
            // Acquire: pairs with the Release store in `release`, after which the last owner no longer
            // touches the slot.
            if slot
                .in_use
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return slot;
            }
            at = slot.next.load(Ordering::Relaxed);
        }
        let slot: &'static Slot = Box::leak(Box::new(Slot::new()));
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            slot.next.store(head, Ordering::Relaxed);
            // Release: pairs with the Acquire loads of `head` in `acquire` and `steal`, which then see
            // `next` and the slot's initial state.
            match self.head.compare_exchange_weak(
                head,
                ptr::from_ref(slot).cast_mut(),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return slot,
                Err(now) => head = now,
            }
        }
    }

    /// The calling thread is done with `slot` (it exits): a span still in it is dropped (a thread that
    /// enters it later counts it as a new call).
    pub(crate) fn release(&self, slot: &'static Slot) {
        slot.id.store(0, Ordering::Relaxed);
        // Release: pairs with the Acquire swap in `acquire`.
        slot.in_use.store(false, Ordering::Release);
    }

    /// Takes span `id` of callsite `site` out of whichever slot holds it: the ticks of its first enter.
    pub(crate) fn steal(&self, id: u64, site: usize) -> Option<u64> {
        let mut at = self.head.load(Ordering::Acquire);
        while !at.is_null() {
            // SAFETY: as in `acquire`.
            let slot: &'static Slot = unsafe { &*at };
            if let Some(start) = slot.take(id, site) {
                return Some(start);
            }
            at = slot.next.load(Ordering::Relaxed);
        }
        None
    }
}
