//! The timed futures still pending, while live print is on: what live print is to show of async code
//! besides the threads' stacks (docs/live-print.md, "Async code": the printing is not done yet). A future is added at its first poll and removed at its completion or drop
//! (both cold: once per future, under one lock); the background thread reads the list at every pass. A
//! pending future is not on any thread's stack between polls, so this list, not the stacks, is what says it
//! is still running.
//!
//! Each entry knows the pending future it was first polled inside (the one that awaits it), so live
//! print can indent it under that one.

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::registry::SectionId;

/// One pending live future.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// Its section.
    pub section: SectionId,
    /// Ticks at its first poll.
    pub start: u64,
    /// Its id (unique in the process).
    pub id: u64,
    /// The id of the pending live future it was first polled inside, 0 for none.
    pub parent: u64,
    /// How many pending live futures it is nested in (0: none).
    pub depth: u32,
}

/// Whether live print is on (set once at the runtime's start): only then are futures listed.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Lists futures from now on (live print is on).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether futures are listed.
#[inline]
pub fn enabled() -> bool {
    // Relaxed: set once at the start, before the first section records.
    ENABLED.load(Ordering::Relaxed)
}

/// The list: slots, `None` where a future was removed (reused by the next one).
static LIST: Mutex<Vec<Option<Pending>>> = Mutex::new(Vec::new());

thread_local! {
    /// The pending live future being polled on this thread, innermost: `(id, depth)`.
    static POLLING: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
}

fn list() -> std::sync::MutexGuard<'static, Vec<Option<Pending>>> {
    LIST.lock().unwrap_or_else(|e| e.into_inner())
}

/// Adds a future first polled now (at `start` ticks) on this thread; returns its slot.
#[cold]
pub fn add(section: SectionId, start: u64, id: u64) -> Option<usize> {
    let (parent, parent_depth) = POLLING.try_with(Cell::get).unwrap_or((0, 0));
    let entry = Pending {
        section,
        start,
        id,
        parent,
        depth: if parent == 0 { 0 } else { parent_depth + 1 },
    };
    let mut list = list();
    let slot = match list.iter().position(Option::is_none) {
        Some(free) => {
            list[free] = Some(entry);
            free
        }
        None => {
            list.push(Some(entry));
            list.len() - 1
        }
    };
    Some(slot)
}

/// Removes the future `id` from `slot`.
#[cold]
pub fn remove(slot: usize, id: u64) {
    let mut list = list();
    if let Some(entry) = list.get_mut(slot)
        && entry.is_some_and(|e| e.id == id)
    {
        *entry = None;
    }
}

/// While a pending live future (`id`, whose entry is at `slot`) is polled on this thread: the futures
/// first polled inside it are nested under it. Returns what to restore after the poll.
pub fn polling(slot: usize, id: u64) -> (u64, u32) {
    let depth = list().get(slot).copied().flatten().map_or(0, |e| e.depth);
    POLLING
        .try_with(|p| p.replace((id, depth)))
        .unwrap_or((0, 0))
}

/// After the poll of [`polling`]: restores `previous`.
pub fn polled(previous: (u64, u32)) {
    let _ = POLLING.try_with(|p| p.set(previous));
}
