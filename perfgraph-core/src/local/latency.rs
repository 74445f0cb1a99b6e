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
/// Invariants: all zero is the empty histogram; `buckets[i]` counts the calls whose duration is in bucket
/// `i`; `inverted_min` is `!min` (so zero stands for "none yet"), `max` the longest call.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Block {
    inverted_min: AtomicU64,
    max: AtomicU64,
    buckets: [AtomicU64; BUCKETS],
}

impl Block {
    /// Counts one call of `ticks`. Owner only: the hot path.
    #[inline(always)]
    pub fn record(&self, ticks: u64) {
        let i = buckets::index(ticks);
        debug_assert!(i < BUCKETS);
        // SAFETY: `index` maps every u64 below `BUCKETS` (tested in `base::buckets`), the array's length.
        let b = unsafe { self.buckets.get_unchecked(i) };
        b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        if !ticks > self.inverted_min.load(Ordering::Relaxed) {
            self.inverted_min.store(!ticks, Ordering::Relaxed);
        }
        if ticks > self.max.load(Ordering::Relaxed) {
            self.max.store(ticks, Ordering::Relaxed);
        }
    }

    /// What the block holds now (reader side; a call recorded meanwhile may be in some figures and not
    /// others).
    pub fn read(&self) -> Counts {
        let mut counts = Counts {
            min: !self.inverted_min.load(Ordering::Relaxed),
            max: self.max.load(Ordering::Relaxed),
            buckets: Vec::new(),
        };
        for (i, b) in self.buckets.iter().enumerate() {
            let n = b.load(Ordering::Relaxed);
            if n > 0 {
                counts.buckets.push((i as u32, n));
            }
        }
        if counts.buckets.is_empty() {
            return Counts::default();
        }
        counts
    }
}

/// An empty block, zeroed; null if the memory cannot be had (the node then goes without). In the loom
/// model, always null: loom's atomics are not plain memory.
pub fn allocate() -> *mut Block {
    if crate::base::sync::MODEL {
        return std::ptr::null_mut();
    }
    // SAFETY: a block is not zero-sized, and all zero bits are a valid `Block` (atomics of zero), the
    // empty histogram.
    unsafe { std::alloc::alloc_zeroed(std::alloc::Layout::new::<Block>()) }.cast::<Block>()
}

/// Frees what [`allocate`] returned (nothing for null).
///
/// # Safety
/// `ptr` came from [`allocate`] and nothing uses the block any more.
pub unsafe fn free(ptr: *mut Block) {
    if !ptr.is_null() {
        // SAFETY: `ptr` was allocated by `allocate` with this very layout (the caller's contract).
        unsafe { std::alloc::dealloc(ptr.cast(), std::alloc::Layout::new::<Block>()) };
    }
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
        self.buckets = buckets::add_sparse(&self.buckets, &other.buckets);
    }
}
