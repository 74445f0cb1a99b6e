//! Exact heap accounting: [`CountingAllocator`], a `GlobalAlloc` that wraps another and counts, per thread,
//! the calls and bytes of `alloc`, `dealloc` and `realloc`, and the thread's net heap bytes and their peak.
//!
//! The counters are a `const`-initialised thread-local of plain [`Cell`]s with no destructor: on the
//! platforms std supports with native TLS (Linux, macOS, the BSDs) such a thread-local is a plain
//! `#[thread_local]` static, reached without any registration or lazy initialisation, so it is usable before
//! `main`, in every thread (recording or not), and while the thread-locals of an exiting thread are being
//! destroyed (std: "`const` thread locals ... without `Drop` ... can be accessed during and after
//! destruction"). Counting never takes a lock, never allocates and never calls into perfgraph's runtime.
//!
//! Sections read the counters at entry and exit (`local::thread`), which is how they get exact allocation
//! counts, bytes, net growth and peak growth. perfgraph's own allocations on a recording thread (its state,
//! call-tree segments, latency blocks, the runtime's start) run [`untracked`], so no user section is
//! charged for them.
//!
//! Memory a thread frees counts against that thread: a buffer allocated on one thread and dropped on
//! another lowers the second thread's net heap (and the growth of the section open there).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// A global allocator that counts every allocation per thread, then hands it to `A` (the system allocator
/// by default; mimalloc, jemalloc or any other `GlobalAlloc` works the same).
///
/// With it installed, every section gets exact allocation figures: calls and bytes allocated (self and
/// inclusive), net heap growth and the peak heap growth within the section (the `Allocations:` report,
/// `PERFGRAPH_REPORT=alloc`, and the JSON node fields `allocs`, `alloc_bytes`, `self_allocs`,
/// `self_alloc_bytes`, `heap_growth_bytes`, `heap_peak_bytes`); live print's memory rule then uses the
/// exact heap growth. A `realloc` counts as one allocation of its new size (and the free of the old
/// block). Memory freed on another thread than the one that allocated it counts against the freeing
/// thread's open section.
///
/// ```
/// #[global_allocator]
/// static ALLOC: perfgraph_core::CountingAllocator =
///     perfgraph_core::CountingAllocator::new(std::alloc::System);
///
/// let v: Vec<u8> = Vec::with_capacity(1024);
/// assert!(perfgraph_core::CountingAllocator::<std::alloc::System>::installed());
/// # drop(v);
/// ```
#[derive(Debug, Default)]
pub struct CountingAllocator<A: GlobalAlloc = System> {
    inner: A,
}

impl<A: GlobalAlloc> CountingAllocator<A> {
    /// Wraps `inner`: usable in a `static`.
    pub const fn new(inner: A) -> CountingAllocator<A> {
        CountingAllocator { inner }
    }

    /// Whether a `CountingAllocator` (of any inner allocator) has counted an allocation in this process:
    /// whether it is the global allocator.
    pub fn installed() -> bool {
        installed()
    }

    /// The process's net heap bytes counted so far (allocated minus freed, over every thread; perfgraph's
    /// own allocations on recording threads left out): what the trace's `Heap` counter track shows. Each
    /// thread adds its change once it reaches 32 KiB, so a live thread's share may lag by less than that.
    ///
    /// ```
    /// #[global_allocator]
    /// static ALLOC: perfgraph_core::CountingAllocator =
    ///     perfgraph_core::CountingAllocator::new(std::alloc::System);
    ///
    /// type Counting = perfgraph_core::CountingAllocator;
    /// let before = Counting::process_heap_bytes();
    /// let kept: Vec<u8> = Vec::with_capacity(1 << 20);
    /// assert!(Counting::process_heap_bytes() - before >= (1 << 20) - 32 * 1024);
    /// # drop(kept);
    /// ```
    pub fn process_heap_bytes() -> i64 {
        process_heap()
    }
}

/// Set by the first call to a [`CountingAllocator`]: it is installed. Written once; every later call only
/// loads it (a read-shared line).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Whether a [`CountingAllocator`] is the global allocator (it has been called).
#[inline]
pub fn installed() -> bool {
    // Relaxed: a flag on its own; a thread that sees it late only starts counting sections later.
    INSTALLED.load(Ordering::Relaxed)
}

/// One thread's counters. Invariant: only the owning thread touches them; `live` is the bytes allocated
/// minus the bytes freed by this thread (negative when it frees more than it allocated); `peak` is at least
/// `live` and is reset only by the sections that read it ([`resume_and_open`], [`close`]).
#[derive(Debug)]
struct Counters {
    allocs: Cell<u64>,
    alloc_bytes: Cell<u64>,
    deallocs: Cell<u64>,
    dealloc_bytes: Cell<u64>,
    reallocs: Cell<u64>,
    live: Cell<i64>,
    peak: Cell<i64>,
    /// Set while perfgraph itself allocates on this thread ([`untracked`]): nothing is counted.
    paused: Cell<bool>,
    /// The part of `live` already added to [`PROCESS_HEAP`]: `live - published` stays under
    /// [`PUBLISH_BYTES`] in size after every count.
    published: Cell<i64>,
}

/// The process's net heap bytes as its threads have published them ([`process_heap`]): the sum of every
/// thread's `published`. Touched by a thread only when its net heap has moved [`PUBLISH_BYTES`] since it
/// last did, so threads that allocate in a loop do not share a written line at every allocation.
static PROCESS_HEAP: AtomicI64 = AtomicI64::new(0);

/// How far a thread's net heap moves before it adds the change to [`PROCESS_HEAP`]: the most by which a
/// live thread's share of [`process_heap`] can lag.
pub const PUBLISH_BYTES: i64 = 32 * 1024;

/// Adds this thread's unpublished net heap to [`PROCESS_HEAP`] once it is [`PUBLISH_BYTES`] or more away.
#[inline(always)]
fn publish_if_far(c: &Counters, live: i64) {
    let d = live - c.published.get();
    if d.unsigned_abs() >= PUBLISH_BYTES as u64 {
        // Relaxed: a sum read on its own ([`process_heap`]); no other memory is published with it.
        PROCESS_HEAP.fetch_add(d, Ordering::Relaxed);
        c.published.set(live);
    }
}

thread_local! {
    /// `const` and without `Drop`: a plain TLS slot, usable before `main` and during TLS destruction.
    static COUNTERS: Counters = const {
        Counters {
            allocs: Cell::new(0),
            alloc_bytes: Cell::new(0),
            deallocs: Cell::new(0),
            dealloc_bytes: Cell::new(0),
            reallocs: Cell::new(0),
            live: Cell::new(0),
            peak: Cell::new(0),
            paused: Cell::new(false),
            published: Cell::new(0),
        }
    };
}

// The promise the module docs rely on: no destructor, so no registration and no "destroyed" state.
const _: () = assert!(!std::mem::needs_drop::<Counters>());

/// What a section reads of its thread's counters at its start and end (the calls and bytes freed are
/// counted too, but no section figure needs them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapCounts {
    /// Allocations (`alloc`, `alloc_zeroed` and `realloc` calls).
    pub allocs: u64,
    /// Bytes they asked for (a `realloc`'s new size).
    pub alloc_bytes: u64,
    /// Net heap bytes of this thread: allocated minus freed.
    pub live: i64,
    /// The highest `live` since a section last reset it.
    pub peak: i64,
}

#[inline(always)]
fn count_alloc(size: usize) {
    if !INSTALLED.load(Ordering::Relaxed) {
        // Relaxed: see `installed`.
        INSTALLED.store(true, Ordering::Relaxed);
    }
    COUNTERS.with(|c| {
        if c.paused.get() {
            return;
        }
        c.allocs.set(c.allocs.get() + 1);
        c.alloc_bytes.set(c.alloc_bytes.get() + size as u64);
        let live = c.live.get() + size as i64;
        c.live.set(live);
        if live > c.peak.get() {
            c.peak.set(live);
        }
        publish_if_far(c, live);
    });
}

/// Counts an allocation of `size` bytes that returned `ptr` (a null `ptr` allocated nothing and is not
/// counted), and returns `ptr`.
#[inline(always)]
fn counted(ptr: *mut u8, size: usize) -> *mut u8 {
    if !ptr.is_null() {
        count_alloc(size);
    }
    ptr
}

#[inline(always)]
fn count_dealloc(size: usize) {
    COUNTERS.with(|c| {
        if c.paused.get() {
            return;
        }
        c.deallocs.set(c.deallocs.get() + 1);
        c.dealloc_bytes.set(c.dealloc_bytes.get() + size as u64);
        let live = c.live.get() - size as i64;
        c.live.set(live);
        publish_if_far(c, live);
    });
}

#[inline(always)]
fn count_realloc(old: usize, new: usize) {
    COUNTERS.with(|c| {
        if c.paused.get() {
            return;
        }
        c.reallocs.set(c.reallocs.get() + 1);
        c.allocs.set(c.allocs.get() + 1);
        c.alloc_bytes.set(c.alloc_bytes.get() + new as u64);
        c.dealloc_bytes.set(c.dealloc_bytes.get() + old as u64);
        let live = c.live.get() + new as i64 - old as i64;
        c.live.set(live);
        if live > c.peak.get() {
            c.peak.set(live);
        }
        publish_if_far(c, live);
    });
}

// SAFETY: every method forwards to `inner` with the caller's arguments unchanged and returns its result; the
// counting around it touches only this thread's `Cell`s (no allocation, no lock, no unwinding), so the
// `GlobalAlloc` contract is `inner`'s.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which is `inner`'s.
        let ptr = unsafe { self.inner.alloc(layout) };
        counted(ptr, layout.size())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { self.inner.alloc_zeroed(layout) };
        counted(ptr, layout.size())
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count_dealloc(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract: `ptr` came from this allocator,
        // that is from `inner`, with `layout`.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract: `ptr` came from `inner` with
        // `layout`, and `new_size` is valid for it.
        let new = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count_realloc(layout.size(), new_size);
        }
        new
    }
}

/// A section opens: counting resumes as it was before [`pause`] (`was`), and this thread's counters now are
/// returned, its peak starting over from its net heap now (the section measures its own peak from its
/// start). One thread-local access for all three.
#[inline(always)]
pub fn resume_and_open(was: bool) -> HeapCounts {
    COUNTERS.with(|c| {
        c.paused.set(was);
        let live = c.live.get();
        let counts = HeapCounts {
            allocs: c.allocs.get(),
            alloc_bytes: c.alloc_bytes.get(),
            live,
            peak: c.peak.get(),
        };
        c.peak.set(live);
        counts
    })
}

/// A section closes: this thread's counters now, its peak then raised to at least `outer_peak` (the peak
/// the enclosing section had seen when this one opened). One thread-local access for both.
#[inline(always)]
pub fn close(outer_peak: i64) -> HeapCounts {
    COUNTERS.with(|c| {
        let peak = c.peak.get();
        c.peak.set(peak.max(outer_peak));
        HeapCounts {
            allocs: c.allocs.get(),
            alloc_bytes: c.alloc_bytes.get(),
            live: c.live.get(),
            peak,
        }
    })
}

/// Whether sections count heap figures in this process: [`installed`] as it was when the runtime started
/// ([`settle`]), so every thread state and every site's route agrees on it for the whole run (the start
/// itself allocates, so an installed allocator has been called by then).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Fixes [`counting`] from [`installed`]: the runtime's start, once.
pub fn settle() {
    // Relaxed: read by threads that went through the runtime's start (a `Once`), which orders this store.
    COUNTING.store(installed(), Ordering::Relaxed);
}

/// Whether sections count heap figures (see [`settle`]).
#[inline]
pub fn counting() -> bool {
    // Relaxed: see `settle`.
    COUNTING.load(Ordering::Relaxed)
}

/// Runs `f` without counting what it allocates or frees on this thread: perfgraph's own allocations.
#[inline]
pub fn untracked<R>(f: impl FnOnce() -> R) -> R {
    let was = pause();
    let r = f();
    resume(was);
    r
}

/// Stops counting on this thread; returns whether it was stopped already (for [`resume`]).
#[inline(always)]
pub fn pause() -> bool {
    COUNTERS.with(|c| c.paused.replace(true))
}

/// Counts again on this thread, unless `was` (from [`pause`]) says it was stopped before.
#[inline(always)]
pub fn resume(was: bool) {
    COUNTERS.with(|c| c.paused.set(was));
}

/// The process's net heap bytes counted by the [`CountingAllocator`] (allocated minus freed, perfgraph's
/// own allocations on recording threads left out), as published: each live thread's share may lag by
/// less than [`PUBLISH_BYTES`], and a thread that exits without recording leaves its last unpublished
/// change (under [`PUBLISH_BYTES`]) out. What the trace's `Heap` counter track shows.
pub fn process_heap() -> i64 {
    // Relaxed: see `publish_if_far`.
    PROCESS_HEAP.load(Ordering::Relaxed)
}

/// Adds this thread's whole unpublished net heap to [`process_heap`]: a recording thread's last act, so
/// that what it allocated and kept, or freed for others, is not left out after it exits.
pub fn publish() {
    let _ = COUNTERS.try_with(|c| {
        let live = c.live.get();
        // Relaxed: see `publish_if_far`.
        PROCESS_HEAP.fetch_add(live - c.published.get(), Ordering::Relaxed);
        c.published.set(live);
    });
}
