//! Per-thread recording state and the hot path.
//!
//! A thread's first section allocates its [`ThreadState`] (the event ring, recycled from exited threads when
//! one is free; the open-frame table, the call tree's first segment) and registers it in the global list of
//! live threads ([`super::threads`]). Once the thread has exited and the background thread has drained its
//! ring for the last time, [`retire`](super::threads::retire) folds it into the retired summary
//! ([`super::retired`]) and takes it off that list; its state is freed when the last reader lets go of it
//! (readers hold `Arc`s), its ring goes back to the pool. A [`Guard`](super::guard::Guard)'s pointer to it
//! is valid while its thread runs, which is all a guard needs. After that, entering and leaving a section
//! touches only memory this thread owns, in [`Stack::enter`] and [`Stack::exit`] (where the order readers
//! rely on is spelled out), with the clock and memory figures read here:
//!
//! * enter: find the call-tree child (a cached compare, usually), bump its call count, read the clock, write
//!   the open frame and publish the depth;
//! * exit: read the clock, push one record into the ring, publish the depth, add the elapsed time to the
//!   parent frame and self time and memory change to the node, then decide whether to wake the background
//!   thread.
//!
//! No lock, no allocation (except a new call path or a depth never reached before), no syscall besides the
//! vDSO clock, and no store to a cache line any other thread stores to. The background thread reads the
//! ring, the frames ("what is running now") and the tree concurrently; the only thing it ever writes here is
//! `watch`, on its own cache line, which the hot path only loads.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use super::causal;
use super::counters::CounterTable;
use super::frames::{CAUSAL, CPU, EXACT_MEM, HEAP, OpenFrame, PUBLIC_DEPTH};
use super::live_texts::LiveTexts;
use super::record::Record;
use super::ring::Ring;
use super::samples::{Closed, EndSample, Ending};
use super::sampling::{mem_kb, sample};
use super::side_frames::SideFrames;
use super::stack::Stack;
use super::tree::AsyncNode;
use crate::base::registry::SectionId;
use crate::base::{clock, config, heap, process, sys};
use crate::data::args::ArgValue;

/// Records in each new thread's ring (`Config::ring_capacity`), set once at the runtime's start before
/// any thread records.
pub(super) static RING_CAPACITY: AtomicUsize = AtomicUsize::new(config::RING_CAPACITY);

/// Sets the number of records in the rings of threads that record from now on (the runtime's start).
pub fn set_ring_capacity(capacity: usize) {
    // Relaxed: read when a thread's state is created, after the start that stored it (`entry::start`
    // completes before any section is recorded).
    RING_CAPACITY.store(capacity, Ordering::Relaxed);
}

/// Everything one thread records. Shared (through `Arc`) with the background thread and readers.
#[derive(Debug)]
pub struct ThreadState {
    /// Dense number in order of first section, from 0.
    pub index: u32,
    /// The thread's name, told apart from others of the same name (`worker#2`), `main` for the main thread,
    /// `unnamed-<OS thread id>` for unnamed threads.
    pub name: String,
    /// The name the thread was given (`worker` for `worker#2`), `None` for an unnamed thread: what its
    /// summary is grouped under once it has exited.
    pub family: Option<String>,
    /// Whether this is the process's main thread.
    pub is_main: bool,
    /// Clock ticks at the thread's first section.
    pub born_ticks: u64,
    /// Clock ticks when the thread exited, 0 while it runs. Written once (Release) by the exit hook.
    pub exited_ticks: AtomicU64,
    /// Its sections: completed (the ring), open (the frames), aggregated (the tree).
    pub stack: Stack,
    /// Written by the background thread: the owner wakes it when a section at a depth below this ends.
    pub watch: CachePadded<AtomicU32>,
    /// Ring records the background thread lost (it is their only writer).
    pub dropped: AtomicU64,
    /// The thread's CPU-time clock, readable from other threads while it lives (`sys::own_cpu_clock`).
    pub cpu_clock: Option<libc::clockid_t>,
    /// Its CPU time (ns) at its first section: figures count from there, as its time alive does.
    cpu_base_ns: u64,
    /// Its CPU time (ns) as last read: by the background thread at its memory samples, by snapshots, and
    /// once more by the thread itself as it exits. Only ever raised (`fetch_max`: CPU time only grows, and
    /// a read that lost a race with the exit's must not lower it). Off the hot path, on a line of its own.
    pub cpu_ns: CachePadded<AtomicU64>,
    /// What its open sections keep out of line: how many have flags, their CPU clocks at their start, and
    /// the heap counters at each one's start while the counting allocator is installed.
    side: OwnSide,
    /// The filled live messages of its open calls whose message names args.
    pub live_texts: LiveTexts,
    /// The `counter!`s it set.
    pub counters: CounterTable,
    /// What it waits for while blocked on a lock of `perfgraph_core::sync` (for live print).
    pub waiting: super::locks::Waiting,
    /// Its delay count while causal profiling is on.
    pub causal: causal::Own,
}

/// [`SideFrames`], touched by the owning thread only (its enter and exit).
#[derive(Debug, Default)]
struct OwnSide(UnsafeCell<SideFrames>);

// SAFETY: only the owning thread touches the cell (`ThreadState::side`'s contract); other threads never do.
unsafe impl Sync for OwnSide {}

/// Live print's time limit in clock ticks (`u64::MAX` while live print is off): a section that ran longer
/// is printed when it ends even if live print has not shown it yet (it was too busy to look), so its end
/// waits for that line too (`process::wake_for_line`).
pub static LIVE_LIMIT_TICKS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Memory growth (KiB) above which a section's end wakes the background thread; `i64::MAX` when nobody
/// prints memory alerts.
/// `i64::MAX` also while the counting allocator counts: the rule then follows [`HEAP_ALERT_KB`].
pub static MEM_ALERT_KB: AtomicI64 = AtomicI64::new(i64::MAX);

/// Exact heap growth (KiB) above which a section's end wakes the background thread (and its record says
/// so), while the counting allocator counts; `i64::MAX` otherwise.
pub static HEAP_ALERT_KB: AtomicI64 = AtomicI64::new(i64::MAX);

impl ThreadState {
    /// A new thread's state, recording into `ring` (its registration, [`super::threads`], with
    /// [`super::ring_supply::new_ring`]'s, or [`detached`](Self::detached)).
    pub(super) fn new(
        index: u32,
        name: String,
        family: Option<String>,
        is_main: bool,
        ring: Ring,
    ) -> ThreadState {
        let cpu_base_ns = sys::own_cpu_ns().unwrap_or(0);
        ThreadState {
            index,
            name,
            family,
            is_main,
            born_ticks: clock::now().0,
            exited_ticks: AtomicU64::new(0),
            stack: Stack::with_ring(ring, PUBLIC_DEPTH),
            watch: CachePadded::new(AtomicU32::new(0)),
            dropped: AtomicU64::new(0),
            cpu_clock: sys::own_cpu_clock(),
            cpu_base_ns,
            cpu_ns: CachePadded::new(AtomicU64::new(cpu_base_ns)),
            side: OwnSide::default(),
            live_texts: LiveTexts::default(),
            counters: CounterTable::default(),
            waiting: super::locks::Waiting::default(),
            causal: causal::Own::new(),
        }
    }

    /// The owner's side frames.
    ///
    /// # Safety
    /// Call only on the owning thread, and do not hold two results at once.
    #[allow(clippy::mut_from_ref)] // reason: single-owner interior mutability, see `OwnSide`'s Sync impl.
    #[inline(always)]
    pub(super) unsafe fn side(&self) -> &mut SideFrames {
        // SAFETY: the caller is the owning thread and holds no other reference (this fn's contract).
        unsafe { &mut *self.side.0.get() }
    }

    /// Reads the thread's CPU time now (while it lives; a system call) into [`cpu_ns`](Self::cpu_ns), and
    /// returns the CPU time since its first section (ns). Any thread.
    pub fn read_cpu(&self) -> u64 {
        if !self.exited()
            && let Some(ns) = self.cpu_clock.and_then(sys::cpu_clock_ns)
        {
            // Relaxed: a figure on its own; `fetch_max` keeps the largest of racing reads.
            self.cpu_ns.fetch_max(ns, Ordering::Relaxed);
        }
        self.cpu_since_first_section()
    }

    /// CPU time since its first section (ns), as last read.
    pub fn cpu_since_first_section(&self) -> u64 {
        self.cpu_ns
            .load(Ordering::Relaxed)
            .saturating_sub(self.cpu_base_ns)
    }

    /// A state no list knows of, with a small ring of its own: for measuring what recording a section costs
    /// (the collector's start-up measurement), on the thread that makes it, which owns it.
    pub fn detached() -> ThreadState {
        ThreadState::new(
            u32::MAX,
            "(measurement)".to_owned(),
            None,
            false,
            Ring::new(256),
        )
    }

    /// Starts a section that takes nothing out of line (no exact memory read; the counting allocator is not
    /// counting, [`heap::counting`]); returns the depth it opened at. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn enter(&self, section: SectionId) -> u32 {
        debug_assert!(
            // SAFETY: this is the owning thread (caller's contract).
            !unsafe { self.side() }.on,
            "counting sections open with `enter_with`"
        );
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe { self.stack.enter(section, || sample(0)) }
    }

    /// Starts a section that may take figures out of line: `flags` ([`EXACT_MEM`]: resident memory read
    /// now, `PERFGRAPH_MEM_EXACT`; [`CPU`]: the thread's CPU clock), and the heap counters if the counting
    /// allocator counts. Returns the depth it opened at. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(never)]
    pub unsafe fn enter_with(&self, section: SectionId, flags: u8) -> u32 {
        // SAFETY: this is the owning thread (caller's contract).
        unsafe { self.enter_flagged(section, flags, true) }
    }

    /// [`enter_with`](Self::enter_with), or a poll's (counting a call only if `call`). With the counting
    /// allocator counting, perfgraph's own allocations while the section opens go uncounted, then the
    /// section takes the heap counters.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    unsafe fn enter_flagged(&self, section: SectionId, flags: u8, call: bool) -> u32 {
        // SAFETY: this is the owning thread (caller's contract); no other `side()` reference is held.
        let counting = unsafe { self.side() }.on;
        let flags = if counting { flags | HEAP } else { flags };
        let was = if counting { heap::pause() } else { false };
        if flags & CAUSAL != 0 && causal::on() {
            // Before the section's start is read: a delay it pays is not the section's time.
            causal::enter(&self.causal, self.index, section);
        }
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        let depth = unsafe { self.stack.enter_counted(section, || sample(flags), call) };
        if flags != 0 {
            // SAFETY: as above; no other `side()` reference is held.
            let frames = unsafe { self.side() };
            frames.flagged += 1;
            if flags & CPU != 0 {
                frames.cpu.open();
            }
            if counting {
                frames.reserve();
                frames.open(was);
            }
        }
        depth
    }

    /// A timed future's poll, or the drop of a cancelled one: starts `section` with `flags` (as
    /// [`enter_with`](Self::enter_with)), counting a call only if `call` (the future's first poll). Returns
    /// the depth it opened at, and the path's [`AsyncNode`] (where the poll counts and the future's wall time
    /// goes when it ends). Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline]
    pub unsafe fn enter_poll(
        &self,
        section: SectionId,
        call: bool,
        flags: u8,
        per_future: bool,
    ) -> (u32, &AsyncNode) {
        // SAFETY: this is the owning thread (caller's contract).
        let depth = unsafe { self.enter_flagged(section, flags, call) };
        // SAFETY: as above.
        (depth, unsafe { self.stack.current_async(per_future) })
    }

    /// Clock ticks at the start of the section open at `depth`, if one is open there. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[cfg(feature = "tracing")]
    #[inline]
    pub unsafe fn start_at(&self, depth: u32) -> Option<u64> {
        // SAFETY: this is the owning thread (caller's contract).
        unsafe { self.stack.start_at(depth) }
    }

    /// Pushes a record that is not a section call (a future's whole life, an instant event) into the ring,
    /// for the trace. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    pub unsafe fn push_mark(&self, record: Record) {
        // The ring's only writer is its owner: this thread (caller's contract).
        self.stack.ring.push(record.to_words());
    }

    /// Pushes the records carrying `args` of `site` (a section's or an event's id), for the trace, just
    /// before that call's or event's own record. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline]
    pub unsafe fn push_args(&self, site: u32, args: &mut [ArgValue]) {
        // The ring's only writer is its owner: this thread (caller's contract).
        super::args::push_args(site, args, |w| self.stack.ring.push(w));
    }

    /// The start (clock ticks) of the open call at `depth`. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline]
    pub unsafe fn open_start(&self, depth: u32) -> Option<u64> {
        // SAFETY: this is the owning thread (caller's contract).
        unsafe { self.stack.start_at(depth) }
    }

    /// Ends the section opened at `depth` (and any left open inside it). Owner only. While a section with
    /// flags is open (it took figures out of line at its start), the end goes out of line to
    /// [`exit_with`](Self::exit_with); the others test only that.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn exit(&self, depth: u32) {
        let end = clock::now().0;
        // SAFETY: this is the owning thread (caller's contract).
        if unsafe { self.side() }.flagged != 0 {
            // SAFETY: as above.
            return unsafe { self.exit_with(depth, end) };
        }
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe {
            self.stack
                .exit(depth, end, plain_end, note_interleaved, |closed| {
                    // No section with flags is open, so none raised a heap alert.
                    self.note_closed(&closed, false);
                });
        }
    }

    /// [`exit`](Self::exit) while a section with flags is open: each section closed with flags takes its
    /// end figures in [`end_with`](Self::end_with).
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(never)]
    unsafe fn exit_with(&self, depth: u32, end: u64) {
        // SAFETY: this is the owning thread (caller's contract).
        let at_end = |e: Ending| unsafe { self.flagged_end(e) };
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe {
            self.stack
                .exit(depth, end, at_end, note_interleaved, |closed| {
                    self.note_closed(&closed, closed.heap_alert);
                });
        }
    }

    /// The end figures of a section closed while a section with flags is open: its own flags' figures in
    /// [`end_with`](Self::end_with), or those of a section without flags ([`plain_end`]).
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub(super) unsafe fn flagged_end(&self, e: Ending) -> EndSample {
        if e.flags == 0 {
            return plain_end(e);
        }
        // SAFETY: this is the owning thread (caller's contract).
        let figures = unsafe { self.end_with(e) };
        if e.flags & CAUSAL != 0 && causal::on() {
            // After its figures (a delay paid is not its CPU time either).
            causal::exit(&self.causal, self.index, e.section);
        }
        figures
    }

    /// Tells live print of a section just closed, when it shows the section or the section passed one of
    /// its limits (time, memory, or `heap_alert`, the section's heap alert). Owner only.
    #[inline(always)]
    pub(super) fn note_closed(&self, closed: &Closed, heap_alert: bool) {
        let watch = self.watch.load(Ordering::Relaxed);
        if closed.depth < watch
            || closed.grown_kb > MEM_ALERT_KB.load(Ordering::Relaxed)
            || heap_alert
            || closed.elapsed > LIVE_LIMIT_TICKS.load(Ordering::Relaxed)
        {
            shown_end(closed.elapsed, closed.grown_kb, heap_alert, watch);
        }
    }

    /// A `tracing` span of `section` ended on this thread after `latency` ticks; `polled` if it was
    /// entered more than once (see [`Stack::span_ended`]). Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[cfg(feature = "tracing")]
    pub unsafe fn span_ended(&self, section: SectionId, latency: u64, polled: bool) {
        // SAFETY: this is the owning thread (caller's contract).
        unsafe { self.stack.span_ended(section, latency, polled) }
    }

    /// The end figures of a section with flags: resident memory read now ([`EXACT_MEM`]); its CPU time
    /// into its node and the ring ([`CPU`]); its heap figures into its node ([`HEAP`]), and whether its
    /// exact heap growth passed live print's memory limit ([`HEAP_ALERT_KB`]).
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub(super) unsafe fn end_with(&self, e: Ending) -> EndSample {
        let mem_kb = mem_kb(e.flags & EXACT_MEM != 0);
        // SAFETY: this is the owning thread (caller's contract); the only `side()` reference held.
        let frames = unsafe { self.side() };
        frames.flagged -= 1;
        if e.flags & CPU != 0
            && let Some(cpu) = frames.cpu.close()
        {
            // SAFETY: this is the owning thread (caller's contract).
            unsafe { self.stack.side_of(e.node) }.add_cpu(&cpu);
            // Just before the section's own record, which the collector's decoder joins them to.
            Record::cpu_figures(e.section, e.start, &cpu, |w| self.stack.ring.push(w));
        }
        let call = if e.flags & HEAP != 0 {
            frames.close()
        } else {
            None
        };
        let Some(call) = call else {
            return EndSample {
                mem_kb,
                heap_alert: false,
            };
        };
        // SAFETY: this is the owning thread (caller's contract).
        let node = unsafe { self.stack.side_of(e.node) };
        node.add(call.self_allocs, call.self_bytes, call.growth, call.peak);
        EndSample {
            mem_kb,
            heap_alert: call.growth / 1024 > HEAP_ALERT_KB.load(Ordering::Relaxed),
        }
    }

    /// The sections open now, outermost first: a consistent stack (up to [`PUBLIC_DEPTH`] deep) even while
    /// the owner keeps entering and leaving sections.
    pub fn open_frames(&self) -> Vec<OpenFrame> {
        self.stack.frames.read()
    }

    /// Whether the thread has exited.
    pub fn exited(&self) -> bool {
        // Acquire: pairs with the Release store in `threads::ExitHook::drop`; all the thread's writes are
        // visible.
        self.exited_ticks.load(Ordering::Acquire) != 0
    }
}
/// The first pair of interleaved sections seen (`(ended, still open)`), for the background thread's one
/// warning; `0` while none was.
static INTERLEAVED: AtomicU64 = AtomicU64::new(0);

/// A guard of `ended` ended while `open`, a section opened after it on the same thread, was still open
/// (a `time_section!` guard held across an `.await` in a `!Send` future): notes the first such pair and
/// wakes the background thread, which prints the warning. `open` is ended with `ended` (the stack stays
/// one of properly nested sections); its own guard's end is then a no-op.
#[cold]
#[inline(never)]
pub(super) fn note_interleaved(ended: SectionId, open: SectionId) {
    let pair = (ended as u64) << 32 | open as u64 | 1 << 63;
    // Relaxed: one word, read by the background thread whenever; only the first pair is kept.
    if INTERLEAVED
        .compare_exchange(0, pair, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
    {
        process::wake();
    }
}

/// The first pair of interleaved sections, `(ended, still open)`, if any was seen.
pub fn interleaved() -> Option<(SectionId, SectionId)> {
    let pair = INTERLEAVED.load(Ordering::Relaxed);
    (pair != 0).then_some((((pair >> 32) as u32) & 0x7fff_ffff, pair as u32))
}

/// The end figures of a section without flags: resident memory read now, no heap alert.
#[inline(always)]
pub(super) fn plain_end(_: Ending) -> EndSample {
    EndSample {
        mem_kb: process::rss_kb(),
        heap_alert: false,
    }
}

/// A section ended that live print shows or is about to print (it is on screen, ran past the time limit,
/// or grew memory past the limit): wakes the background thread, and waits for the line so it comes before
/// whatever the program writes next. In live-all mode (`watch` is `u32::MAX`) every section's end wakes it,
/// and only those that would print anyway wait: waiting for each would cost every quick section a round
/// trip to the background thread.
#[cold]
#[inline(never)]
fn shown_end(elapsed: u64, grown_kb: i64, heap_alert: bool, watch: u32) {
    let printed_anyway = watch != u32::MAX
        || elapsed > LIVE_LIMIT_TICKS.load(Ordering::Relaxed)
        || grown_kb > MEM_ALERT_KB.load(Ordering::Relaxed)
        || heap_alert;
    if printed_anyway {
        process::wake_for_line();
    } else {
        process::wake();
    }
}
