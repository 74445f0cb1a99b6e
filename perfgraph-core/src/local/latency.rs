//! A call path's latency histogram as its owner records it: one [`Block`] per node, in ticks, in the
//! bucket scheme of [`buckets`].
//!
//! A block is allocated zeroed when [`Tree`](super::tree::Tree) makes a new call path's node: on the cold
//! path, never while a known path's section opens or closes. Zeroed memory is an empty histogram (the
//! minimum is stored inverted). Like the node's counters, only the owner writes a block
//! (plain load and store, no read-modify-write); any thread reads it.
//!
//! Depends only on [`crate::base::sync`] and [`crate::base::buckets`], so the loom model compiles it.

use crate::base::buckets::{self, BUCKETS};
use crate::base::sync::atomic::{AtomicU64, Ordering};

/// One call path's completed calls by duration, in ticks.
///
/// Invariants: all zero is the empty histogram. `inverted_min` is `!min` (so zero stands for "none yet"),
/// `max` the longest call; every call recorded is within them. `slots[i + 1]` counts the calls whose
/// duration is in bucket `i`, except the last call recorded: `pending` is its slot, not incremented yet
/// (0 before the first call, which then counts its "predecessor" in `slots[0]`, a slot nobody reads). Only
/// the slots of the buckets from `index(min)` to `index(max)` are ever non-zero (besides slot 0).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Block {
    inverted_min: AtomicU64,
    max: AtomicU64,
    pending: AtomicU64,
    slots: [AtomicU64; BUCKETS + 1],
}

impl Block {
    /// Counts one call of `ticks`. Owner only: the hot path.
    ///
    /// The slot incremented is the previous call's, whose index was computed (and stored in `pending`)
    /// one call ago: the increment's address then does not wait for this call's clock reading, whose
    /// latency a load and store to an address computed from it would add to every section (measured: 4 ns
    /// with the address computed from this call's duration, 0.2 ns without; docs/design.md).
    #[inline(always)]
    pub fn record(&self, ticks: u64) {
        let previous = self.pending.load(Ordering::Relaxed) as usize;
        debug_assert!(previous <= BUCKETS);
        // SAFETY: `pending` only ever holds 0 or `index(..) + 1 <= BUCKETS` (stored below; zeroed memory
        // before), and the array has `BUCKETS + 1` slots.
        let b = unsafe { self.slots.get_unchecked(previous) };
        b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.pending
            .store(buckets::index(ticks) as u64 + 1, Ordering::Relaxed);
        if !ticks > self.inverted_min.load(Ordering::Relaxed) {
            self.inverted_min.store(!ticks, Ordering::Relaxed);
        }
        if ticks > self.max.load(Ordering::Relaxed) {
            self.max.store(ticks, Ordering::Relaxed);
        }
    }

    /// The slots that can hold calls, from the minimum and maximum as read (empty when no call).
    fn used(min: u64, max: u64) -> std::ops::RangeInclusive<usize> {
        if min > max {
            return 1..=0;
        }
        buckets::index(min) + 1..=buckets::index(max) + 1
    }

    /// What the block holds now (reader side; a call recorded meanwhile may be in some figures and not
    /// others, or for that instant be counted twice: in its bucket and as pending). Reads only the buckets
    /// between the minimum's and the maximum's, not the whole block.
    pub fn read(&self) -> Counts {
        let min = !self.inverted_min.load(Ordering::Relaxed);
        let max = self.max.load(Ordering::Relaxed);
        let pending = self.pending.load(Ordering::Relaxed) as usize;
        let mut counts = Counts {
            min,
            max,
            buckets: Vec::new(),
        };
        let used = Block::used(min, max);
        for (k, b) in self.slots[used.clone()].iter().enumerate() {
            let slot = k + used.start();
            let n = b.load(Ordering::Relaxed) + u64::from(slot == pending);
            if n > 0 {
                counts.buckets.push((slot as u32 - 1, n));
            }
        }
        if counts.buckets.is_empty() {
            return Counts::default();
        }
        counts
    }

    /// Empties the block, writing only what [`record`](Block::record) can have written.
    fn clear(&self) {
        let (min, max) = (
            !self.inverted_min.load(Ordering::Relaxed),
            self.max.load(Ordering::Relaxed),
        );
        for b in &self.slots[Block::used(min, max)] {
            b.store(0, Ordering::Relaxed);
        }
        self.inverted_min.store(0, Ordering::Relaxed);
        self.max.store(0, Ordering::Relaxed);
        self.pending.store(0, Ordering::Relaxed);
    }
}

/// Blocks freed by exited threads' trees, kept for the next paths to use (at most [`POOL_MAX`]). A program
/// that ends threads by the thousand then reuses a handful of blocks instead of handing 30 KiB to the
/// allocator and asking for it again on another thread, which glibc's per-thread arenas answer with
/// memory they keep (measured: 100,000 churned threads grew the peak resident set by 16 MB more without
/// the pool).
static POOL: std::sync::Mutex<Pool> = std::sync::Mutex::new(Pool(Vec::new()));

/// Most blocks [`POOL`] keeps (1.9 MiB); beyond that, freed blocks go back to the allocator.
pub const POOL_MAX: usize = 64;

/// What [`POOL`] holds: free blocks, each owned by the pool alone (no node points at it).
#[derive(Debug)]
pub struct Pool(Vec<*mut Block>);

// SAFETY: the pool owns the blocks it holds (no node points at them), and a `Block` is atomics only.
unsafe impl Send for Pool {}

/// The pool's lock, taken before a `fork()` (`collector::fork`, after the rings' pool: a tree dropped
/// under the thread list's lock frees its rings, then its blocks) so a child never inherits it held.
pub fn hold_pool_for_fork() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

std::thread_local! {
    /// Set by [`without_blocks`] while it runs its closure: the call paths this thread makes meanwhile go
    /// without a block. A `const` `Cell` has no destructor, so reading it never fails, even while the
    /// thread's locals are being torn down.
    static WITHOUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the call paths this thread makes during it going without a histogram (as a path past
/// the first [`LATENCY_PATHS`](super::tree::LATENCY_PATHS) does). For the benchmark that times one leaf
/// section with and without a histogram in one process (`perfgraph_core::__private`); not a setting.
pub fn without_blocks<R>(f: impl FnOnce() -> R) -> R {
    let before = WITHOUT.replace(true);
    let out = f();
    WITHOUT.set(before);
    out
}

/// An empty block, zeroed: from the pool, else newly allocated; null if the memory cannot be had (the
/// node then goes without) or inside [`without_blocks`]. In the loom model, always null: loom's atomics are
/// not plain memory.
pub fn allocate() -> *mut Block {
    if crate::base::sync::MODEL || WITHOUT.get() {
        return std::ptr::null_mut();
    }
    let pooled = hold_pool_for_fork().0.pop();
    if let Some(ptr) = pooled {
        // SAFETY: the pool owned `ptr`, a live block (from `alloc_zeroed` below, never freed while
        // pooled), now ours alone.
        unsafe { &*ptr }.clear();
        return ptr;
    }
    // SAFETY: a block is not zero-sized, and all zero bits are a valid `Block` (atomics of zero), the
    // empty histogram.
    unsafe { std::alloc::alloc_zeroed(std::alloc::Layout::new::<Block>()) }.cast::<Block>()
}

/// Gives back what [`allocate`] returned (nothing for null): to the pool, or to the allocator when the
/// pool is full.
///
/// # Safety
/// `ptr` came from [`allocate`] and nothing uses the block any more.
pub unsafe fn free(ptr: *mut Block) {
    if ptr.is_null() {
        return;
    }
    {
        let mut pool = hold_pool_for_fork();
        if pool.0.len() < POOL_MAX {
            pool.0.push(ptr);
            return;
        }
    }
    // SAFETY: `ptr` was allocated by `allocate` with this very layout (the caller's contract).
    unsafe { std::alloc::dealloc(ptr.cast(), std::alloc::Layout::new::<Block>()) };
}

/// A histogram as read, in ticks: plain values, sparse, mergeable by adding buckets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// The shortest call (0 when empty).
    pub min: u64,
    /// The longest call.
    pub max: u64,
    /// `(bucket, calls)` for the buckets that have calls, by bucket.
    pub buckets: Vec<(u32, u64)>,
}

impl Counts {
    /// Adds `other`'s calls to these.
    pub fn add(&mut self, other: &Counts) {
        if other.buckets.is_empty() {
            return;
        }
        if self.buckets.is_empty() {
            *self = other.clone();
            return;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        buckets::add_sparse(&mut self.buckets, &other.buckets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `ticks` make, counted the plain way.
    fn expected(ticks: &[u64]) -> Counts {
        let mut dense = std::collections::BTreeMap::new();
        for &t in ticks {
            *dense.entry(buckets::index(t) as u32).or_insert(0) += 1;
        }
        Counts {
            min: ticks.iter().copied().min().unwrap_or(0),
            max: ticks.iter().copied().max().unwrap_or(0),
            buckets: dense.into_iter().collect(),
        }
    }

    #[test]
    fn a_block_reads_every_call_the_last_one_pending_included() {
        let ptr = allocate();
        // SAFETY: a fresh block from `allocate`, ours alone until freed below.
        let block = unsafe { &*ptr };
        assert_eq!(block.read(), Counts::default());
        let mut ticks = Vec::new();
        for t in [70u64, 5, 1 << 40, 300, 300, 0, u64::MAX, 12_345] {
            block.record(t);
            ticks.push(t);
            assert_eq!(block.read(), expected(&ticks), "after {ticks:?}");
        }
        // SAFETY: from `allocate`, and no longer used: it goes to the pool...
        unsafe { free(ptr) };
        // ...and comes back empty (cleared over the range it used), though perhaps to another test.
        let again = allocate();
        // SAFETY: as above.
        let block = unsafe { &*again };
        assert_eq!(block.read(), Counts::default());
        block.record(1_000);
        assert_eq!(block.read(), expected(&[1_000]));
        // SAFETY: as above.
        unsafe { free(again) };
    }

    #[test]
    fn paths_made_inside_without_blocks_get_none() {
        assert!(without_blocks(allocate).is_null());
        let ptr = allocate();
        assert!(!ptr.is_null());
        // SAFETY: from `allocate`, unused.
        unsafe { free(ptr) };
    }
}
