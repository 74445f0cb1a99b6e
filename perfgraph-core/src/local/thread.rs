//! Per-thread recording state and the hot path.
//!
//! A thread's first section allocates its [`ThreadState`] (the event ring, the open-frame table, the call
//! tree's first segment) and registers it in the global thread list, which keeps it for the rest of the
//! process, so recorded data outlives the thread and a [`Guard`](super::guard::Guard)'s pointer to it is
//! always valid. After that, entering and leaving a section touches only memory this thread owns, in
//! [`Stack::enter`] and [`Stack::exit`] (where the order readers rely on is spelled out), with the clock
//! and memory figures read here:
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

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_utils::CachePadded;

use super::frames::{OpenFrame, PUBLIC_DEPTH};
use super::stack::{Sample, Stack};
use crate::base::registry::SectionId;
use crate::base::{clock, process, sys};

/// Records in each thread's ring (40 bytes each).
pub const RING_CAPACITY: usize = 8192;

/// Everything one thread records. Shared (through `Arc`) with the background thread and readers.
#[derive(Debug)]
pub struct ThreadState {
    /// Dense number in order of first section, from 0.
    pub index: u32,
    /// The thread's name, or `thread-<index>` for unnamed threads.
    pub name: String,
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
}

/// Memory growth (KiB) above which a section's end wakes the background thread; `i64::MAX` when nobody
/// prints memory alerts.
pub static MEM_ALERT_KB: AtomicI64 = AtomicI64::new(i64::MAX);

impl ThreadState {
    fn new(index: u32, name: String, is_main: bool) -> ThreadState {
        ThreadState {
            index,
            name,
            is_main,
            born_ticks: clock::now().0,
            exited_ticks: AtomicU64::new(0),
            stack: Stack::new(RING_CAPACITY, PUBLIC_DEPTH),
            watch: CachePadded::new(AtomicU32::new(0)),
            dropped: AtomicU64::new(0),
        }
    }

    /// Starts a section; returns the depth it opened at. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn enter(&self, section: SectionId) -> u32 {
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe {
            self.stack.enter(section, || {
                let mem_kb = process::rss_kb();
                Sample {
                    ticks: clock::now().0,
                    mem_kb,
                }
            })
        }
    }

    /// Ends the section opened at `depth` (and any left open inside it). Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn exit(&self, depth: u32) {
        let end = clock::now().0;
        // SAFETY: this is the owning thread (caller's contract), the only one that enters and exits on
        // `stack`.
        unsafe {
            self.stack.exit(depth, end, process::rss_kb, |closed| {
                if closed.depth < self.watch.load(Ordering::Relaxed)
                    || closed.grown_kb > MEM_ALERT_KB.load(Ordering::Relaxed)
                {
                    process::wake();
                }
            });
        }
    }

    /// The sections open now, outermost first: a consistent stack (up to [`PUBLIC_DEPTH`] deep) even while
    /// the owner keeps entering and leaving sections.
    pub fn open_frames(&self) -> Vec<OpenFrame> {
        self.stack.frames.read()
    }

    /// Whether the thread has exited.
    pub fn exited(&self) -> bool {
        // Acquire: pairs with the Release store in `ExitHook::drop`; all the thread's writes are visible.
        self.exited_ticks.load(Ordering::Acquire) != 0
    }
}

/// Every thread that ever recorded, in order of first section. Never shrinks: recorded data outlives threads.
static THREADS: Mutex<Vec<Arc<ThreadState>>> = Mutex::new(Vec::new());

/// All threads that ever recorded.
pub fn all() -> Vec<Arc<ThreadState>> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The thread list's lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub fn hold_for_fork() -> MutexGuard<'static, Vec<Arc<ThreadState>>> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many threads ever recorded (what [`all`] would return, without copying it).
pub fn count() -> usize {
    THREADS.lock().unwrap_or_else(|e| e.into_inner()).len()
}

thread_local! {
    /// This thread's state, null before its first section. `const`-initialised with no destructor, so
    /// reading it is a single TLS-relative load and works even during thread teardown.
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(std::ptr::null()) };
    /// Marks the state exited when the thread ends (registered at the thread's first section).
    static EXIT_HOOK: ExitHook = const { ExitHook(Cell::new(std::ptr::null())) };
}

struct ExitHook(Cell<*const ThreadState>);

impl Drop for ExitHook {
    fn drop(&mut self) {
        let state = self.0.get();
        if !state.is_null() {
            // SAFETY: the pointer came from an `Arc` that `THREADS` keeps alive for the whole process.
            let state = unsafe { &*state };
            // Release: pairs with the Acquire load in `exited`: the thread's last records are visible.
            state
                .exited_ticks
                .store(clock::now().0.max(1), Ordering::Release);
            process::wake();
        }
    }
}

/// This thread's state, or null before its first section.
#[inline(always)]
pub fn current_ptr() -> *const ThreadState {
    CURRENT.with(Cell::get)
}

/// This thread's state, registering it at the first section. The runtime must have started (the entry
/// points see to it): the state's birth is read on its clock.
pub fn current() -> &'static ThreadState {
    let ptr = CURRENT.with(Cell::get);
    if ptr.is_null() {
        return register();
    }
    // SAFETY: non-null values come from `register`, from an `Arc` that `THREADS` keeps for the whole process.
    unsafe { &*ptr }
}

#[cold]
#[inline(never)]
fn register() -> &'static ThreadState {
    let thread = std::thread::current();
    let is_main = sys::is_main_thread();
    let state = {
        let mut threads = THREADS.lock().unwrap_or_else(|e| e.into_inner());
        let index = threads.len() as u32;
        let name = match thread.name() {
            Some(name) => name.to_owned(),
            None if is_main => "main".to_owned(),
            None => format!("thread-{index}"),
        };
        let state = Arc::new(ThreadState::new(index, name, is_main));
        threads.push(Arc::clone(&state));
        state
    };
    let ptr = Arc::as_ptr(&state);
    // The exit hook may be unavailable during thread teardown; the state then simply never reads as exited.
    let _ = EXIT_HOOK.try_with(|hook| hook.0.set(ptr));
    CURRENT.with(|c| c.set(ptr));
    // SAFETY: `THREADS` holds a clone of this `Arc` for the rest of the process, so the state outlives 'static
    // uses in practice (it is never removed or dropped).
    unsafe { &*ptr }
}
