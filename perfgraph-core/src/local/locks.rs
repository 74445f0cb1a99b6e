//! What `perfgraph_core::sync`'s locks record (ThreadScope's lock records, tracy's lock instrumentation):
//! each lock's statistics, the lock names' ids, and what a blocked thread is waiting for (live print's
//! `Waiting for queue (held by worker-2)`).
//!
//! A lock's statistics live in a block of its own ([`LockCounts`]), allocated at its first acquisition (so
//! a lock is `const`-constructible and may move) and listed in [`TABLE`] while the lock lives; a dropped
//! lock's figures are folded into the totals of its name there. So memory follows the live locks and the
//! distinct names, never the acquisitions. Every figure but the waiters' count is written while the lock
//! is held (a `Mutex`'s by one thread at a time; a `RwLock`'s readers add with `fetch_add`/`fetch_max`), so
//! they cost no more contention than the lock itself.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::base::poison;
use crate::data::locks::LockStats;

/// One lock's figures, in clock ticks.
#[derive(Debug, Default)]
pub struct LockCounts {
    /// Its name's id (from 1) in [`TABLE`].
    pub name: u32,
    /// Acquisitions (read acquisitions of a `RwLock` included).
    pub acquisitions: AtomicU64,
    /// Acquisitions that had to wait.
    pub contended: AtomicU64,
    /// Ticks waited, summed.
    pub wait_ticks: AtomicU64,
    /// The longest wait, ticks.
    pub max_wait_ticks: AtomicU64,
    /// Ticks held, summed.
    pub hold_ticks: AtomicU64,
    /// The longest hold, ticks.
    pub max_hold_ticks: AtomicU64,
    /// The most threads waiting at once.
    pub max_waiters: AtomicU64,
}

impl LockCounts {
    /// A hold of `ticks` ended; `exclusive`: the caller holds the lock alone (a `Mutex`, a `RwLock`'s
    /// writer), so no other thread writes the figures meanwhile and plain stores do (a read-modify-write
    /// costs several times more); else (a `RwLock`'s readers) they add atomically.
    #[inline]
    pub fn held(&self, ticks: u64, exclusive: bool) {
        // Relaxed: plain counters, read by reports that want a recent figure; an exclusive holder is the
        // only writer until it unlocks, and the lock orders it before the next.
        if exclusive {
            let add = |a: &AtomicU64, v: u64| {
                a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed)
            };
            add(&self.acquisitions, 1);
            add(&self.hold_ticks, ticks);
            if ticks > self.max_hold_ticks.load(Ordering::Relaxed) {
                self.max_hold_ticks.store(ticks, Ordering::Relaxed);
            }
        } else {
            self.acquisitions.fetch_add(1, Ordering::Relaxed);
            self.hold_ticks.fetch_add(ticks, Ordering::Relaxed);
            self.max_hold_ticks.fetch_max(ticks, Ordering::Relaxed);
        }
    }

    /// A wait of `ticks` ended with the acquisition, `waiters` threads waiting at its start (itself
    /// included).
    #[inline]
    pub fn waited(&self, ticks: u64, waiters: u32) {
        // Relaxed: as in `held`.
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.wait_ticks.fetch_add(ticks, Ordering::Relaxed);
        self.max_wait_ticks.fetch_max(ticks, Ordering::Relaxed);
        self.max_waiters
            .fetch_max(waiters as u64, Ordering::Relaxed);
    }

    /// Its figures, by plain value.
    fn read(&self) -> Totals {
        // Relaxed: see `held`.
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Totals {
            acquisitions: r(&self.acquisitions),
            contended: r(&self.contended),
            wait_ticks: r(&self.wait_ticks),
            max_wait_ticks: r(&self.max_wait_ticks),
            hold_ticks: r(&self.hold_ticks),
            max_hold_ticks: r(&self.max_hold_ticks),
            max_waiters: r(&self.max_waiters),
        }
    }
}

/// Locks' figures summed, ticks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Totals {
    acquisitions: u64,
    contended: u64,
    wait_ticks: u64,
    max_wait_ticks: u64,
    hold_ticks: u64,
    max_hold_ticks: u64,
    max_waiters: u64,
}

impl Totals {
    fn add(&mut self, o: &Totals) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.wait_ticks += o.wait_ticks;
        self.max_wait_ticks = self.max_wait_ticks.max(o.max_wait_ticks);
        self.hold_ticks += o.hold_ticks;
        self.max_hold_ticks = self.max_hold_ticks.max(o.max_hold_ticks);
        self.max_waiters = self.max_waiters.max(o.max_waiters);
    }
}

/// Most distinct lock names a process keeps; a lock named anything else past them records under
/// `(too many locks)` (as a `counter!` past its cap does under `(too many counters)`), so the names' memory
/// stays bounded however many a program makes up.
pub const MAX_LOCK_NAMES: usize = 4096;

/// The name every lock whose name came past [`MAX_LOCK_NAMES`] shares.
pub const TOO_MANY_LOCKS: &str = "(too many locks)";

/// The lock names, the live locks' blocks and the dropped locks' totals.
#[derive(Debug, Default)]
pub struct Table {
    /// Names by id (`id - 1`): at most [`MAX_LOCK_NAMES`], and [`TOO_MANY_LOCKS`] once one more came.
    names: Vec<&'static str>,
    /// Ids by name.
    ids: BTreeMap<&'static str, u32>,
    /// Blocks of the locks alive (acquired at least once, not dropped).
    live: Vec<Arc<LockCounts>>,
    /// Dropped locks' figures, by name id.
    retired: BTreeMap<u32, Totals>,
}

impl Table {
    /// The id of the name `name`, given it now if it is new; [`TOO_MANY_LOCKS`]'s past [`MAX_LOCK_NAMES`].
    fn id_of(&mut self, name: &'static str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let name = if self.names.len() < MAX_LOCK_NAMES {
            name
        } else {
            TOO_MANY_LOCKS
        };
        *self.ids.entry(name).or_insert_with(|| {
            self.names.push(name);
            self.names.len() as u32
        })
    }
}

/// See [`Table`]. Taken at a lock's first acquisition and its drop only (never while a lock is held by
/// the program's code path that records), by reports, and before a `fork()` (`collector::fork`).
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// The table's lock, taken before a `fork()` so a child never inherits it held.
pub fn hold_for_fork() -> MutexGuard<'static, Option<Table>> {
    poison::lock(&TABLE)
}

/// A new block for a lock named `name`, listed until [`retire`]d.
#[cold]
pub fn register(name: &'static str) -> Arc<LockCounts> {
    crate::base::heap::untracked(|| {
        let mut t = hold_for_fork();
        let t = t.get_or_insert_with(Table::default);
        let id = t.id_of(name);
        let block = Arc::new(LockCounts {
            name: id,
            ..LockCounts::default()
        });
        t.live.push(Arc::clone(&block));
        block
    })
}

/// The id of the name `name` of something threads wait for that has no row of figures (a thread's join, a
/// condvar, a channel, a barrier: `sync`), for its records in the trace and live print.
#[cold]
pub fn name_id(name: &'static str) -> u32 {
    crate::base::heap::untracked(|| {
        let mut t = hold_for_fork();
        t.get_or_insert_with(Table::default).id_of(name)
    })
}

/// The lock of `block` is dropped: its figures go to its name's totals.
#[cold]
pub fn retire(block: &Arc<LockCounts>) {
    crate::base::heap::untracked(|| {
        let mut t = hold_for_fork();
        let Some(t) = t.as_mut() else { return };
        if let Some(i) = t.live.iter().position(|b| Arc::ptr_eq(b, block)) {
            t.live.swap_remove(i);
        }
        t.retired.entry(block.name).or_default().add(&block.read());
    });
}

/// The name of lock name id `id`.
pub fn name(id: u32) -> Option<&'static str> {
    let t = hold_for_fork();
    t.as_ref()?
        .names
        .get((id as usize).checked_sub(1)?)
        .copied()
}

/// Every lock name's figures (live and dropped locks), by name, in ns with `ns`.
pub fn gather(ns: impl Fn(u64) -> u64) -> Vec<LockStats> {
    let t = hold_for_fork();
    let Some(t) = t.as_ref() else {
        return Vec::new();
    };
    let mut by_id: BTreeMap<u32, Totals> = t.retired.clone();
    for block in &t.live {
        by_id.entry(block.name).or_default().add(&block.read());
    }
    let mut rows: Vec<LockStats> = by_id
        .into_iter()
        .filter(|(_, s)| s.acquisitions > 0 || s.contended > 0)
        .filter_map(|(id, s)| {
            let mut row = LockStats::new(*t.names.get(id as usize - 1)?);
            row.acquisitions = s.acquisitions;
            row.contended = s.contended;
            row.wait_ns = ns(s.wait_ticks);
            row.max_wait_ns = ns(s.max_wait_ticks);
            row.hold_ns = ns(s.hold_ticks);
            row.max_hold_ns = ns(s.max_hold_ticks);
            row.max_waiters = s.max_waiters;
            Some(row)
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

/// What a thread blocked on a lock is waiting for, for live print: written by the thread as it starts
/// waiting and cleared as the wait ends; read by the background thread.
#[derive(Debug, Default)]
pub struct Waiting {
    /// Clock ticks at the wait's start, 0 while not waiting. Written last when a wait starts (`Release`)
    /// and first when it ends.
    since: AtomicU64,
    /// The lock's name id.
    name: AtomicU32,
    /// The holder's thread index + 1 at the wait's start, 0 if unknown.
    holder: AtomicU32,
}

impl Waiting {
    /// This thread starts waiting at `since` ticks for lock name `name`, held by thread `holder` + 1.
    /// Owner only.
    #[inline]
    pub fn start(&self, since: u64, name: u32, holder: u32) {
        // Relaxed: published by the Release store of `since` below.
        self.name.store(name, Ordering::Relaxed);
        self.holder.store(holder, Ordering::Relaxed);
        // Release: pairs with the Acquire load in `read`, which then sees the name and holder.
        self.since.store(since.max(1), Ordering::Release);
    }

    /// The wait ended (its record, if any, pushed before). Owner only.
    #[inline]
    pub fn end(&self) {
        // Release: pairs with the Acquire load in `read`: a reader that sees the wait over also sees the
        // ring's head past the wait's record, so the drain after it brings the record (as a section's
        // end record comes before its lower depth is published).
        self.since.store(0, Ordering::Release);
    }

    /// `(since ticks, lock name id, holder index + 1)` while the thread waits.
    pub fn read(&self) -> Option<(u64, u32, u32)> {
        // Acquire: pairs with the Release stores in `start` and `end`.
        let since = self.since.load(Ordering::Acquire);
        (since != 0).then(|| {
            (
                since,
                self.name.load(Ordering::Relaxed),
                self.holder.load(Ordering::Relaxed),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{LockCounts, MAX_LOCK_NAMES, TOO_MANY_LOCKS, Table, gather, register, retire};

    #[test]
    fn names_past_the_cap_share_one_row() {
        let mut t = Table::default();
        let names: Vec<&'static str> = (0..MAX_LOCK_NAMES + 3)
            .map(|i| &*format!("lock {i}").leak())
            .collect();
        let ids: Vec<u32> = names.iter().map(|n| t.id_of(n)).collect();
        assert_eq!(ids[MAX_LOCK_NAMES - 1], MAX_LOCK_NAMES as u32);
        // Every name past the cap is the one row `(too many locks)`, the cap's one extra name.
        let past = MAX_LOCK_NAMES as u32 + 1;
        assert!(ids[MAX_LOCK_NAMES..].iter().all(|&id| id == past));
        assert_eq!(t.names.len(), MAX_LOCK_NAMES + 1);
        assert_eq!(t.names[past as usize - 1], TOO_MANY_LOCKS);
        // A name known before the cap keeps its own row.
        assert_eq!(t.id_of(names[7]), 8);
        assert_eq!(t.ids.len(), MAX_LOCK_NAMES + 1);
    }

    #[test]
    fn a_dropped_locks_figures_stay_under_its_name() {
        let a = register("locks::tests queue");
        let b = register("locks::tests queue");
        assert_eq!(a.name, b.name);
        a.held(10, true);
        a.waited(4, 2);
        b.held(30, false);
        retire(&a);
        let rows = gather(|t| t * 10);
        let row = rows
            .iter()
            .find(|r| r.name == "locks::tests queue")
            .unwrap();
        assert_eq!(
            (
                row.acquisitions,
                row.contended,
                row.hold_ns,
                row.max_hold_ns
            ),
            (2, 1, 400, 300)
        );
        assert_eq!((row.wait_ns, row.max_waiters), (40, 2));
        let _: &LockCounts = &b;
    }
}
