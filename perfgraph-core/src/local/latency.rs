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

/// An empty block, zeroed: from the pool, else newly allocated; null if the memory cannot be had (the
/// node then goes without). In the loom model, always null: loom's atomics are not plain memory.
pub fn allocate() -> *mut Block {
    if crate::base::sync::MODEL {
        return std::ptr::null_mut();
    }
    let pooled = hold_pool_for_fork().0.pop();
    if let Some(ptr) = pooled {
        // SAFETY: the pool owned `ptr`, a live block (from `alloc_zeroed` below, never freed while
        // pooled), now ours alone; all zero bits are the empty histogram.
        unsafe { ptr.write_bytes(0, 1) };
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
        self.buckets = buckets::add_sparse(&self.buckets, &other.buckets);
    }
}
