//! The timed futures of `live` sections still pending, while live print is on: what live print shows of
//! async code besides the threads' stacks (docs/live-print.md, "Async code"). A future is added at its first
//! poll and removed at its completion or drop (both cold: once per future, under one lock); the background
//! thread reads the list at every pass. A pending future is not on any thread's stack between polls, so this
//! list, not the stacks, is what says it is still running.
//!
//! Each entry knows the pending live future it was first polled inside (the one that awaits it), so live
//! print can indent it under that one. A future that ends after running at least half the time limit stays
//! in the list, marked ended with its end time and the memory then, until the background thread takes it
//! ([`take`]), and wakes that thread: live print may have shown it, and prints its wall time at once. Shorter
//! ones leave no trace (live print shows a future only once it has been pending the whole limit).

use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::base::poison;
use crate::base::process;
use crate::base::registry::SectionId;

/// One pending (or just ended) live future.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Its live message filled in with its args, when its section's message names args.
    pub text: Option<std::sync::Arc<str>>,
    /// Its section.
    pub section: SectionId,
    /// Ticks at its first poll.
    pub start: u64,
    /// Its id (unique in the process, never 0).
    pub id: u64,
    /// The id of the pending live future it was first polled inside, 0 for none.
    pub parent: u64,
    /// Ticks at its completion or drop; 0 while it is pending.
    pub end: u64,
    /// Resident memory at its end, KiB (0 while pending).
    pub mem_end_kb: u32,
    /// It was dropped before completing.
    pub cancelled: bool,
}

/// Whether live print is on (set once at the runtime's start): only then are futures listed.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Futures that end after running at least this many ticks stay listed until [`take`]n: half the time
/// limit, so that every future live print showed (pending past the whole limit) is among them even if the
/// clock's calibration moves the limit's tick count a little. `u64::MAX` until live print sets it.
static KEEP_TICKS: AtomicU64 = AtomicU64::new(u64::MAX);

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

/// Live print's time limit in ticks (re-read at every pass: the clock's scale is calibrated over the run).
pub fn set_time_limit(ticks: u64) {
    // Relaxed: a late value only decides whether one future's end is kept; see `KEEP_TICKS`.
    KEEP_TICKS.store(ticks / 2, Ordering::Relaxed);
}

/// The list: slots, `None` where a future was removed (reused by the next one).
static LIST: Mutex<Vec<Option<Pending>>> = Mutex::new(Vec::new());

thread_local! {
    /// The pending live future being polled on this thread, innermost: its id, 0 for none.
    static POLLING: Cell<u64> = const { Cell::new(0) };
}

fn list() -> std::sync::MutexGuard<'static, Vec<Option<Pending>>> {
    poison::lock(&LIST)
}

/// Adds the future `id` of `section`, first polled now (at `start` ticks) on this thread, showing `text`
/// (its filled live message) if given; returns its slot.
#[cold]
pub fn add(section: SectionId, start: u64, id: u64, text: Option<std::sync::Arc<str>>) -> usize {
    let parent = POLLING.try_with(Cell::get).unwrap_or(0);
    let entry = Pending {
        text,
        section,
        start,
        id,
        parent,
        end: 0,
        mem_end_kb: 0,
        cancelled: false,
    };
    let mut list = list();
    match list.iter().position(Option::is_none) {
        Some(free) => {
            list[free] = Some(entry);
            free
        }
        None => {
            list.push(Some(entry));
            list.len() - 1
        }
    }
}

/// The future `id` at `slot` ended at `end` ticks (`cancelled`: dropped before completing).
#[cold]
pub fn remove(slot: usize, id: u64, end: u64, cancelled: bool) {
    // Relaxed: see `KEEP_TICKS`.
    let keep = KEEP_TICKS.load(Ordering::Relaxed);
    let mut list = list();
    let Some(entry) = list.get_mut(slot) else {
        return;
    };
    let Some(e) = entry.as_mut().filter(|e| e.id == id && e.end == 0) else {
        return;
    };
    if end.saturating_sub(e.start) >= keep {
        e.end = end.max(1);
        e.mem_end_kb = process::rss_kb();
        e.cancelled = cancelled;
        drop(list);
        // Live print may show it: its line gets the wall time now, not at the next scheduled pass.
        process::wake();
    } else {
        *entry = None;
    }
}

/// For the background thread: copies the pending futures into `pending` and moves the ended ones kept
/// for it into `ended` (both cleared first; in slot order).
pub fn take(pending: &mut Vec<Pending>, ended: &mut Vec<Pending>) {
    pending.clear();
    ended.clear();
    let mut list = list();
    for slot in list.iter_mut() {
        match slot {
            Some(e) if e.end == 0 => pending.push(e.clone()),
            Some(_) => ended.extend(slot.take()),
            None => {}
        }
    }
    // Slots are reused, so the list is as long as the most futures ever pending at once; give back the
    // free tail after a burst.
    while list.last().is_some_and(Option::is_none) {
        list.pop();
    }
}

/// While the pending live future `id` is polled on this thread: the live futures first polled inside it
/// are nested under it. Returns what to restore after the poll.
pub fn polling(id: u64) -> u64 {
    POLLING.try_with(|p| p.replace(id)).unwrap_or(0)
}

/// After the poll of [`polling`]: restores `previous`.
pub fn polled(previous: u64) {
    let _ = POLLING.try_with(|p| p.set(previous));
}
