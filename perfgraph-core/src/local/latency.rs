//! A call path's latency histogram as its owner records it: one [`Block`] per node, in ticks, in the
//! bucket scheme of [`buckets`].
//!
//! A block is allocated when [`Tree`](super::tree::Tree) makes a new call path's node: on the cold path,
//! never while a known path's section opens or closes. Only its 32-byte header is written then (all zero:
//! the empty histogram; the minimum is stored inverted); a bucket's counter is zeroed when the range of
//! durations first reaches it, so the pages of buckets no call reached are never written, nor resident.
//! Like the node's counters, only the owner writes a block (plain load and store, no read-modify-write);
//! any thread reads it.
//!
//! Depends only on [`crate::base::atomics`], [`crate::base::buckets`], [`crate::base::poison`] and `sys::release_pages`, so the loom
//! model compiles it (with a stand-in for the last).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;

use crate::base::atomics::atomic::{AtomicU64, Ordering};
use crate::base::buckets::{self, BUCKETS};
use crate::base::poison;

/// One call path's completed calls by duration, in ticks.
///
/// Invariants: a zero header (`inverted_min`, `max`, `pending`, `occupied`, slot 0) is the empty histogram.
/// `inverted_min` is `!min` (so zero stands for "none yet"), `max` the longest call; every call recorded is
/// within them. Slot 0 and the slots from `index(min) + 1` to `index(max) + 1` are initialised (written
/// before `min` and `max` were stored to cover them); the others may hold anything and are never read.
/// Slot `i + 1` counts the calls whose duration is in bucket `i`, except the last call recorded: `pending`
/// is its slot, not incremented yet (0 before the first call, which then counts its "predecessor" in slot
/// 0, which nobody reads). Bit `k` of `occupied` is set if a call was recorded in slots `64 k` to
/// `64 k + 63` (the pending one included): a reader reads only those 512-byte runs.
#[repr(C, align(64))]
pub struct Block {
    inverted_min: AtomicU64,
    max: AtomicU64,
    pending: AtomicU64,
    occupied: AtomicU64,
    slots: UnsafeCell<[MaybeUninit<u64>; BUCKETS + 1]>,
}

// SAFETY: the slots are only touched as `AtomicU64` (through `slot`) once initialised, and initialised by
// the owner alone before a Release store of the range publishes them; every other field is atomic.
unsafe impl Sync for Block {}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("min", &!self.inverted_min.load(Ordering::Relaxed))
            .field("max", &self.max.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Bytes of a block's header: the four fields and slot 0.
const HEADER: usize = 40;
/// Slots per bit of `occupied`.
const RUN: usize = 64;
const _: () = assert!((BUCKETS + 1).div_ceil(RUN) <= 64);
const _: () =
    assert!(crate::base::atomics::MODEL || std::mem::offset_of!(Block, slots) + 8 == HEADER);

impl Block {
    /// Slot `s`'s counter.
    ///
    /// # Safety
    /// `s <= BUCKETS`, and the slot is initialised (see the type's invariants).
    #[inline(always)]
    unsafe fn slot(&self, s: usize) -> &AtomicU64 {
        debug_assert!(s <= BUCKETS);
        // SAFETY: `s` is in the array (caller); the slot is initialised (caller); `AtomicU64` has the size
        // and alignment of `u64`; the bytes are inside an `UnsafeCell`, so shared atomic access is allowed.
        unsafe { &*self.slots.get().cast::<u64>().add(s).cast::<AtomicU64>() }
    }

    /// Counts one call of `ticks`. Owner only: the hot path.
    ///
    /// The slot incremented is the previous call's, whose index was computed (and stored in `pending`)
    /// one call ago: the increment's address then does not wait for this call's clock reading, whose
    /// latency a load and store to an address computed from it would add to every section (measured: 4 ns
    /// with the address computed from this call's duration, 0.2 ns without; docs/design.md).
    #[inline(always)]
    pub fn record(&self, ticks: u64) {
        let previous = self.pending.load(Ordering::Relaxed) as usize;
        // SAFETY: `pending` only ever holds 0 (slot 0, initialised with the header) or the slot of a call
        // recorded, which `widen` initialised in that call (stored below; the header was zero before).
        let b = unsafe { self.slot(previous) };
        b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let slot = buckets::index(ticks) + 1;
        self.pending.store(slot as u64, Ordering::Relaxed);
        self.occupied.store(
            self.occupied.load(Ordering::Relaxed) | 1 << (slot / RUN),
            Ordering::Relaxed,
        );
        let inverted_min = self.inverted_min.load(Ordering::Relaxed);
        let max = self.max.load(Ordering::Relaxed);
        if !ticks > inverted_min || ticks > max {
            self.widen(ticks, !inverted_min, max);
        }
    }

    /// A new minimum or maximum: zeroes the slots the range now reaches, then stores the range. Owner only;
    /// rare (the first call, then each new extreme), and its zeroing is at most the block, once in all.
    #[cold]
    #[inline(never)]
    fn widen(&self, ticks: u64, min: u64, max: u64) {
        let (new_min, new_max) = if min > max {
            (ticks, ticks)
        } else {
            (min.min(ticks), max.max(ticks))
        };
        let new = Block::used(new_min, new_max);
        let old = Block::used(min, max);
        let base = self.slots.get().cast::<u64>();
        let zero = |from: usize, to: usize| {
            if from < to {
                // SAFETY: `from..to` is within the slots (`used` ends at most at `BUCKETS + 1`), slots nobody
                // reads yet (outside the published range), written by the owner alone.
                unsafe { base.add(from).write_bytes(0, to - from) };
            }
        };
        if old.is_empty() {
            zero(new.start, new.end);
        } else {
            zero(new.start, old.start);
            zero(old.end, new.end);
        }
        // Release (both): pair with the Acquire loads in `read`; a reader that sees the wider range sees
        // its slots zeroed.
        self.inverted_min.store(!new_min, Ordering::Release);
        self.max.store(new_max, Ordering::Release);
    }

    /// The slots that can hold calls, from the minimum and maximum as read (empty when no call).
    fn used(min: u64, max: u64) -> std::ops::Range<usize> {
        if min > max {
            return 0..0;
        }
        buckets::index(min) + 1..buckets::index(max) + 2
    }

    /// What the block holds now (reader side; a call recorded meanwhile may be in some figures and not
    /// others, or for that instant be counted twice: in its bucket and as pending). Reads only the runs of
    /// 64 slots that `occupied` marks, within the minimum's and the maximum's buckets: an exited thread's
    /// block, cold in the reader's cache, costs a few cache lines, not 30 KiB.
    pub fn read(&self) -> Counts {
        // Acquire (both): pair with the Release stores in `widen`; the slots of the range read are
        // initialised.
        let min = !self.inverted_min.load(Ordering::Acquire);
        let max = self.max.load(Ordering::Acquire);
        let pending = self.pending.load(Ordering::Relaxed) as usize;
        let mut counts = Counts {
            min,
            max,
            buckets: Vec::new(),
        };
        let used = Block::used(min, max);
        let mut runs = self.occupied.load(Ordering::Relaxed);
        while runs != 0 {
            let run = runs.trailing_zeros() as usize;
            runs &= runs - 1;
            let from = (run * RUN).max(used.start);
            let to = (run * RUN + RUN).min(used.end);
            for k in from..to {
                // SAFETY: every slot of `used` is initialised (the Acquire loads above) and in the array.
                let n = unsafe { self.slot(k) }.load(Ordering::Relaxed) + u64::from(k == pending);
                if n > 0 {
                    counts.buckets.push((k as u32 - 1, n));
                }
            }
        }
        if counts.buckets.is_empty() {
            return Counts::default();
        }
        counts
    }
}

/// Writes the empty histogram's header at `ptr` (the slots past slot 0 are left as they are).
///
/// # Safety
/// `ptr` points at a block's memory that nobody else uses.
pub(crate) unsafe fn clear(ptr: *mut Block) {
    // SAFETY: the header is the block's first `HEADER` bytes (asserted above), ours alone (caller); zero
    // bytes are valid atomics of zero.
    unsafe { ptr.cast::<u8>().write_bytes(0, HEADER) };
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

// SAFETY: the pool owns the blocks it holds (no node points at them), and a `Block` is `Sync`.
unsafe impl Send for Pool {}

/// The pool's lock, taken before a `fork()` (`collector::fork`, after the rings' pool: a tree dropped
/// under the thread list's lock frees its rings, then its blocks) so a child never inherits it held.
pub fn hold_pool_for_fork() -> std::sync::MutexGuard<'static, Pool> {
    poison::lock(&POOL)
}

std::thread_local! {
    /// Set by [`without_blocks`] while it runs its closure: the call paths this thread makes meanwhile go
    /// without a block. A `const` `Cell` has no destructor, so reading it never fails, even while the
    /// thread's locals are being torn down.
    static WITHOUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the call paths this thread makes during it going without a histogram (as a path past
/// the first [`LATENCY_PATHS`](super::tree::LATENCY_PATHS) does). For the benchmark that times one leaf
/// section with and without a histogram in one process (`perfgraph_core::__test_hooks`); not a setting.
pub fn without_blocks<R>(f: impl FnOnce() -> R) -> R {
    /// Puts the flag back as it was, even if `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            WITHOUT.set(self.0);
        }
    }
    let _restore = Restore(WITHOUT.replace(true));
    f()
}

/// An empty block (its header zeroed): from the pool, else newly allocated; null if the memory cannot be
/// had (the node then goes without) or inside [`without_blocks`]. In the loom model, always null: loom's
/// atomics are not plain memory.
pub fn allocate() -> *mut Block {
    if crate::base::atomics::MODEL || WITHOUT.get() {
        return std::ptr::null_mut();
    }
    let pooled = hold_pool_for_fork().0.pop();
    if let Some(ptr) = pooled {
        // SAFETY: the pool owned `ptr`, a live block (from `alloc` below, never freed while pooled), now
        // ours alone.
        unsafe { clear(ptr) };
        return ptr;
    }
    // SAFETY: a block is not zero-sized.
    let ptr = unsafe { std::alloc::alloc(std::alloc::Layout::new::<Block>()) }.cast::<Block>();
    if !ptr.is_null() {
        // SAFETY: fresh memory of a block's layout, ours alone.
        unsafe { clear(ptr) };
    }
    ptr
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
    // Its pages back to the kernel before the memory goes back to the allocator, which would otherwise hand
    // it to the next block resident in full, not just where that block writes. It matters when threads
    // churn faster than the background thread folds them: 100,000 churned threads peaked 26-31 MB above
    // `PERFGRAPH_VERBOSITY=off` with this, 31-41 MB without, 23-27 MB with no histograms at all (three runs
    // each, tests/thread_churn.rs, on the 2-core development VM under a load average of 5-7).
    crate::base::sys::release_pages(ptr.cast(), std::mem::size_of::<Block>());
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
