//! Per-thread recording state and the hot path.
//!
//! A thread's first section allocates its [`ThreadState`] (the event ring, the open-frame table, the call
//! tree's first segment) and registers it in the global thread list, which keeps it for the rest of the
//! process, so recorded data outlives the thread and a [`Guard`](crate::__private::Guard)'s pointer to it is
//! always valid. After that, entering and leaving a section touches only memory this thread owns:
//!
//! * enter: find the call-tree child (a cached compare, usually), bump its call count, read the clock, write
//!   the open frame (a seqlocked [`Slot`]) and publish the depth;
//! * exit: read the clock, add self time and memory change to the node and the elapsed time to the parent
//!   frame, publish the depth, push one record `[start, end, section|depth, mem_start|mem_end]` into the ring.
//!
//! No lock, no allocation (except a new call path or a depth never reached before), no syscall besides the
//! vDSO clock, and no store to a cache line any other thread stores to. The background thread reads the
//! ring, the frames ("what is running now") and the tree concurrently; the only thing it ever writes here is
//! `watch`, on its own cache line, which the hot path only loads.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::registry::SectionId;
use crate::ring::{Ring, Slot};
use crate::tree::{Node, Tree};
use crate::{clock, memory, runtime};

/// Open frames visible to other threads per thread; deeper ones are timed and aggregated all the same.
pub const PUBLIC_DEPTH: usize = 64;
/// Records in each thread's ring (40 bytes each).
pub const RING_CAPACITY: usize = 8192;

/// One open section in the public frame table.
///
/// Invariant: `slot` holds `[section, start ticks, node | mem_start_kb << 32, node address]` with the thread's
/// enter sequence number (the address is for the owner, which reads it back when the section ends); `child_ticks`/`child_mem_kb` are the time and memory change of this call's completed
/// children so far. Only the owning thread writes any of it.
#[derive(Debug, Default)]
pub struct Frame {
    slot: Slot,
    child_ticks: AtomicU64,
    child_mem_kb: AtomicI64,
}

/// A frame deeper than [`PUBLIC_DEPTH`]: private to its thread.
#[derive(Debug, Clone, Copy)]
struct DeepFrame {
    section: SectionId,
    start: u64,
    node: *const Node,
    mem_start_kb: u32,
    child_ticks: u64,
    child_mem_kb: i64,
}

/// State only the owning thread touches.
#[derive(Debug)]
struct Own {
    /// Open sections (public and deep).
    depth: u32,
    /// Call-tree node of the innermost open section (the root when none): a node of `tree`.
    current: *const Node,
    /// Sections entered so far: the sequence number of the next public frame write.
    enters: u64,
    deep: Vec<DeepFrame>,
}

/// A 64-byte-aligned wrapper that keeps a field on a cache line of its own.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Padded<T>(pub T);

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
    /// Completed sections, for the background thread.
    pub ring: Ring,
    /// Open sections, outermost first.
    frames: Box<[Frame]>,
    /// Number of open sections. Written by the owner (Release), read by anyone (Acquire).
    depth: Padded<AtomicU32>,
    /// The aggregated call tree.
    pub tree: Tree,
    /// Written by the background thread: the owner wakes it when a section at a depth below this ends.
    pub watch: Padded<AtomicU32>,
    /// Ring records the background thread lost (it is their only writer).
    pub dropped: AtomicU64,
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only ever accessed by the thread that created the state (through `CURRENT` and guards,
// which are `!Send`); every other field is immutable or atomic.
unsafe impl Sync for ThreadState {}
// SAFETY: as above; moving the `Arc` between threads never moves access to `own` with it.
unsafe impl Send for ThreadState {}

/// A consistent view of one open section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFrame {
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Enter sequence number on its thread: identifies this call.
    pub seq: u64,
    /// The section.
    pub section: SectionId,
    /// Clock ticks at its start.
    pub start: u64,
    /// Its call-tree node.
    pub node: u32,
    /// Resident memory at its start, KiB.
    pub mem_start_kb: u32,
    /// Time of its completed children so far, ticks.
    pub child_ticks: u64,
}

/// Decoded ring record: one completed section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Clock ticks at start.
    pub start: u64,
    /// Clock ticks at end.
    pub end: u64,
    /// The section.
    pub section: SectionId,
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Resident memory at start, KiB.
    pub mem_start_kb: u32,
    /// Resident memory at end, KiB.
    pub mem_end_kb: u32,
}

#[cfg(test)]
impl Record {
    /// A record without memory figures, for the renderers' tests.
    pub(crate) fn timed(start: u64, end: u64, section: SectionId, depth: u32) -> Record {
        Record {
            start,
            end,
            section,
            depth,
            mem_start_kb: 0,
            mem_end_kb: 0,
        }
    }
}

impl Record {
    /// Decodes ring words.
    pub fn from_words(w: [u64; 4]) -> Record {
        Record {
            start: w[0],
            end: w[1],
            section: w[2] as u32,
            depth: (w[2] >> 32) as u32,
            mem_start_kb: w[3] as u32,
            mem_end_kb: (w[3] >> 32) as u32,
        }
    }
}

/// Memory growth (KiB) above which a section's end wakes the background thread; `i64::MAX` when nobody
/// prints memory alerts.
pub static MEM_ALERT_KB: AtomicI64 = AtomicI64::new(i64::MAX);

impl ThreadState {
    fn new(index: u32, name: String, is_main: bool) -> ThreadState {
        let tree = Tree::new();
        // Nodes live in heap segments that never move, so the root's address survives moving `tree`.
        let root: *const Node = tree.root();
        ThreadState {
            index,
            name,
            is_main,
            born_ticks: clock::now(),
            exited_ticks: AtomicU64::new(0),
            ring: Ring::new(RING_CAPACITY),
            frames: (0..PUBLIC_DEPTH).map(|_| Frame::default()).collect(),
            depth: Padded(AtomicU32::new(0)),
            tree,
            watch: Padded(AtomicU32::new(0)),
            dropped: AtomicU64::new(0),
            own: UnsafeCell::new(Own {
                depth: 0,
                current: root,
                enters: 0,
                deep: Vec::with_capacity(64),
            }),
        }
    }

    /// Owner-only access to the private state.
    ///
    /// # Safety
    /// Call only on the thread that created this state, and do not hold two results at once.
    #[allow(clippy::mut_from_ref)] // reason: single-owner interior mutability, see the type's Sync impl.
    #[inline(always)]
    unsafe fn own(&self) -> &mut Own {
        // SAFETY: the caller is the owning thread and holds no other reference (this fn's contract).
        unsafe { &mut *self.own.get() }
    }

    /// Starts a section; returns the depth it opened at. Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn enter(&self, section: SectionId) -> u32 {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        let depth = own.depth;
        // SAFETY: `own.current` is always a node of `self.tree` (the root or a node `child_of` returned),
        // and nodes live as long as the tree.
        let n = self.tree.child_of(unsafe { &*own.current }, section);
        n.calls
            .store(n.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let index = n.index.load(Ordering::Relaxed);
        let mem = memory::current_kb();
        let start = clock::now();
        if let Some(frame) = self.frames.get(depth as usize) {
            frame.child_ticks.store(0, Ordering::Relaxed);
            frame.child_mem_kb.store(0, Ordering::Relaxed);
            frame.slot.write(
                own.enters,
                [
                    section as u64,
                    start,
                    index as u64 | (mem as u64) << 32,
                    n as *const Node as u64,
                ],
            );
        } else {
            own.deep.push(DeepFrame {
                section,
                start,
                node: n,
                mem_start_kb: mem,
                child_ticks: 0,
                child_mem_kb: 0,
            });
        }
        own.enters += 1;
        own.current = n;
        own.depth = depth + 1;
        // Release: pairs with the Acquire load in `open_frames`; a reader that sees the depth sees the frame.
        self.depth.0.store(depth + 1, Ordering::Release);
        depth
    }

    /// Ends the section opened at `depth` (and any left open inside it). Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn exit(&self, depth: u32) {
        let end = clock::now();
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        if own.depth != depth + 1 {
            if own.depth <= depth {
                return; // already closed (a guard dropped out of order); nothing to do
            }
            while own.depth > depth + 1 {
                self.close(own, end);
            }
        }
        self.close(own, end);
    }

    #[inline(always)]
    fn close(&self, own: &mut Own, end: u64) {
        let d = own.depth - 1;
        let f = match self.frames.get(d as usize) {
            Some(frame) => {
                let w = frame.slot.peek();
                DeepFrame {
                    section: w[0] as u32,
                    start: w[1],
                    node: w[3] as *const Node,
                    mem_start_kb: (w[2] >> 32) as u32,
                    child_ticks: frame.child_ticks.load(Ordering::Relaxed),
                    child_mem_kb: frame.child_mem_kb.load(Ordering::Relaxed),
                }
            }
            None => own.deep.pop().unwrap_or(DeepFrame {
                section: 0,
                start: end,
                node: own.current,
                mem_start_kb: 0,
                child_ticks: 0,
                child_mem_kb: 0,
            }),
        };
        let elapsed = end.saturating_sub(f.start);
        // SAFETY: `f.node` is the node `enter` stored for this frame (or `own.current`), a node of
        // `self.tree`, which lives as long as `self`.
        let n = unsafe { &*f.node };
        let own_ticks = elapsed.saturating_sub(f.child_ticks);
        let mem_end = memory::current_kb();
        let grown = mem_end as i64 - f.mem_start_kb as i64;
        // The root is never closed, so `n` has a parent.
        own.current = n.parent_node().map_or(own.current, |p| p as *const Node);
        own.depth = d;
        // The record goes out before the lower depth: a reader whose snapshot no longer shows this section
        // knows its end record is already in the ring (live print relies on it to tell a late record from a
        // lost one).
        self.ring.push([
            f.start,
            end,
            f.section as u64 | (d as u64) << 32,
            f.mem_start_kb as u64 | (mem_end as u64) << 32,
        ]);
        // Release: pairs with the Acquire loads in `open_frames`; it also publishes the ring push above.
        self.depth.0.store(d, Ordering::Release);
        // The call's time goes into the tree only now that its frame is closed, its parent's share first and
        // its own node last, so a snapshot (`inspect::build_tree`) never counts it twice: in its node and
        // again as running. (It may briefly count as its running parent's own time, or be missing.)
        if d > 0 {
            match self.frames.get(d as usize - 1) {
                Some(parent) => {
                    parent.child_ticks.store(
                        parent.child_ticks.load(Ordering::Relaxed) + elapsed,
                        Ordering::Relaxed,
                    );
                    parent.child_mem_kb.store(
                        parent.child_mem_kb.load(Ordering::Relaxed) + grown,
                        Ordering::Relaxed,
                    );
                }
                None => {
                    if let Some(parent) = own.deep.last_mut() {
                        parent.child_ticks += elapsed;
                        parent.child_mem_kb += grown;
                    }
                }
            }
        }
        n.self_mem_kb.store(
            n.self_mem_kb.load(Ordering::Relaxed) + grown - f.child_mem_kb,
            Ordering::Relaxed,
        );
        // Release: pairs with the Acquire load in `inspect::build_tree`; a reader that sees this call's time
        // in the node then sees its frame closed and its parent's `child_ticks` including it.
        n.self_ticks.store(
            n.self_ticks.load(Ordering::Relaxed) + own_ticks,
            Ordering::Release,
        );
        if d < self.watch.0.load(Ordering::Relaxed) || grown > MEM_ALERT_KB.load(Ordering::Relaxed)
        {
            runtime::wake();
        }
    }

    /// The sections open now, outermost first: a consistent stack (up to [`PUBLIC_DEPTH`] deep) even while
    /// the owner keeps entering and leaving sections.
    pub fn open_frames(&self) -> Vec<OpenFrame> {
        // Acquire: pairs with the Release stores of `depth` in `enter`/`close`.
        let depth = self.depth.0.load(Ordering::Acquire) as usize;
        let mut out = Vec::with_capacity(depth.min(PUBLIC_DEPTH));
        for (d, frame) in self.frames.iter().take(depth).enumerate() {
            let Some((seq, w)) = frame.slot.read_latest() else {
                break;
            };
            // A frame pushed before its parent belongs to an older stack: stop there.
            if out.last().is_some_and(|p: &OpenFrame| p.seq >= seq) {
                break;
            }
            out.push(OpenFrame {
                depth: d as u32,
                seq,
                section: w[0] as u32,
                start: w[1],
                node: w[2] as u32,
                mem_start_kb: (w[2] >> 32) as u32,
                child_ticks: frame.child_ticks.load(Ordering::Relaxed),
            });
        }
        // Acquire: pairs with the Release stores of `depth`; frames popped meanwhile are not open any more.
        let now_depth = self.depth.0.load(Ordering::Acquire) as usize;
        out.truncate(now_depth);
        out
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
                .store(clock::now().max(1), Ordering::Release);
            runtime::wake();
        }
    }
}

/// This thread's state, or null before its first section.
#[inline(always)]
pub fn current_ptr() -> *const ThreadState {
    CURRENT.with(Cell::get)
}

/// This thread's state, creating it at the first section. `None` once the runtime has shut down.
#[inline(always)]
pub fn current() -> Option<&'static ThreadState> {
    let ptr = CURRENT.with(Cell::get);
    if ptr.is_null() {
        return register();
    }
    // SAFETY: non-null values come from `register`, from an `Arc` that `THREADS` keeps for the whole process.
    Some(unsafe { &*ptr })
}

#[cold]
#[inline(never)]
fn register() -> Option<&'static ThreadState> {
    if !runtime::ensure_init() {
        return None;
    }
    let thread = std::thread::current();
    let is_main = is_main_thread();
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
    Some(unsafe { &*ptr })
}

fn is_main_thread() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid and gettid have no preconditions.
        unsafe { libc::getpid() == libc::gettid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        std::thread::current().name() == Some("main")
    }
}
