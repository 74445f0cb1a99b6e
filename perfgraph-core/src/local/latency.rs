//! A call path's latency histogram as its owner records it: one [`Block`] per node, in ticks, in the
//! bucket scheme of [`buckets`].
//!
//! Blocks are mapped zeroed, a segment's worth at a time, when [`Tree`](super::tree::Tree) allocates
//! the segment's nodes: on the cold path, never while a section opens or closes. Zeroed memory is an
//! empty histogram (the minimum is stored inverted), and the pages of buckets nobody reaches are never
//! touched, so they take no resident memory. Like the node's counters, only the owner writes a block
//! (plain load and store, no read-modify-write); any thread reads it.
//!
//! Depends only on [`crate::base::sync`], [`crate::base::buckets`] and the mapping of memory, so the loom
//! model compiles it.

use crate::base::buckets::{self, BUCKETS};
use crate::base::sys;
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

/// Maps `n` empty blocks, zeroed; null if the memory cannot be had (the nodes then go without). Mapped,
/// not allocated: only the pages of buckets a call reaches become resident (a few KiB per path), where an
/// allocator recycling a freed block would clear, and so touch, all of it. In the loom model, always
/// null: loom's atomics are not plain memory.
pub fn allocate(n: usize) -> *mut Block {
    if crate::base::sync::MODEL {
        return std::ptr::null_mut();
    }
    sys::map_zeroed(n * std::mem::size_of::<Block>()).cast::<Block>()
}

/// Unmaps what [`allocate`] returned for `n` blocks (nothing for null).
///
/// # Safety
/// `ptr` came from `allocate(n)` and nothing uses its blocks any more.
pub unsafe fn free(ptr: *mut Block, n: usize) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: `ptr` is the mapping `allocate(n)` made, of this length, unused now (the caller's contract).
    unsafe { sys::unmap(ptr.cast(), n * std::mem::size_of::<Block>()) };
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
