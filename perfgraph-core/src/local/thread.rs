//! Per-thread recording state and the hot path.
//!
//! A thread's first section allocates its [`ThreadState`] (the event ring, the open-frame table, the call
//! tree's first segment) and registers it in the global thread list, which keeps it for the rest of the
//! process, so recorded data outlives the thread and a [`Guard`](super::guard::Guard)'s pointer to it is
//! always valid. After that, entering and leaving a section touches only memory this thread owns:
//!
//! * enter: find the call-tree child (a cached compare, usually), bump its call count, read the clock, write
//!   the open frame ([`FrameTable::open`]) and publish the depth;
//! * exit: read the clock, add self time and memory change to the node and the elapsed time to the parent
//!   frame, publish the depth, push one [`Record`] into the ring.
//!
//! No lock, no allocation (except a new call path or a depth never reached before), no syscall besides the
//! vDSO clock, and no store to a cache line any other thread stores to. The background thread reads the
//! ring, the frames ("what is running now") and the tree concurrently; the only thing it ever writes here is
//! `watch`, on its own cache line, which the hot path only loads.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_utils::CachePadded;

use super::frames::{FrameData, FrameTable, OpenFrame, PUBLIC_DEPTH};
use super::record::Record;
use super::ring::Ring;
use super::tree::{Node, Tree};
use crate::base::registry::SectionId;
use crate::base::{clock, process, sys};

/// Records in each thread's ring (40 bytes each).
pub const RING_CAPACITY: usize = 8192;

/// The owner's view of one open frame: what it needs to close it. Decoded from the public table for the
/// outermost [`PUBLIC_DEPTH`] frames; deeper ones live only here.
#[derive(Debug, Clone, Copy)]
struct OwnFrame {
    data: FrameData,
    /// Its call-tree node, a node of the owner's tree.
    node: *const Node,
    child_ticks: u64,
    child_mem_kb: i64,
}

/// State only the owning thread touches.
///
/// Invariant: `depth` open sections; `nodes[d]` is the call-tree node of public frame `d < depth`, and
/// `deep` holds the frames below [`PUBLIC_DEPTH`], innermost last; `current` is the innermost open
/// section's node (the root when none). Every pointer is to a node of the owner's tree.
#[derive(Debug)]
struct Own {
    depth: u32,
    current: *const Node,
    /// Sections entered so far: the sequence number of the next public frame write.
    enters: u64,
    nodes: [*const Node; PUBLIC_DEPTH],
    deep: Vec<OwnFrame>,
}

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
    pub frames: FrameTable,
    /// The aggregated call tree.
    pub tree: Tree,
    /// Written by the background thread: the owner wakes it when a section at a depth below this ends.
    pub watch: CachePadded<AtomicU32>,
    /// Ring records the background thread lost (it is their only writer).
    pub dropped: AtomicU64,
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only ever accessed by the thread that created the state (through `CURRENT` and guards,
// which are `!Send`); every other field is immutable or atomic.
unsafe impl Sync for ThreadState {}
// SAFETY: as above; moving the `Arc` between threads never moves access to `own` with it.
unsafe impl Send for ThreadState {}

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
            born_ticks: clock::now().0,
            exited_ticks: AtomicU64::new(0),
            ring: Ring::new(RING_CAPACITY),
            frames: FrameTable::new(PUBLIC_DEPTH),
            tree,
            watch: CachePadded::new(AtomicU32::new(0)),
            dropped: AtomicU64::new(0),
            own: UnsafeCell::new(Own {
                depth: 0,
                current: root,
                enters: 0,
                nodes: [std::ptr::null(); PUBLIC_DEPTH],
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
        let data = FrameData {
            section,
            node: n.index.load(Ordering::Relaxed),
            mem_start_kb: process::rss_kb(),
            start: clock::now().0,
        };
        if self.frames.open(depth, own.enters, data) {
            own.nodes[depth as usize] = n;
        } else {
            own.deep.push(OwnFrame {
                data,
                node: n,
                child_ticks: 0,
                child_mem_kb: 0,
            });
        }
        own.enters += 1;
        own.current = n;
        own.depth = depth + 1;
        self.frames.publish_depth(depth + 1);
        depth
    }

    /// Ends the section opened at `depth` (and any left open inside it). Owner only.
    ///
    /// # Safety
    /// Call only on the thread that owns this state.
    #[inline(always)]
    pub unsafe fn exit(&self, depth: u32) {
        let end = clock::now().0;
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

    /// The innermost open frame, as the owner closes it.
    #[inline(always)]
    fn innermost(&self, own: &mut Own, end: u64) -> OwnFrame {
        let d = own.depth - 1;
        match self.frames.peek(d) {
            Some((data, child_ticks, child_mem_kb)) => OwnFrame {
                data,
                node: own.nodes[d as usize],
                child_ticks,
                child_mem_kb,
            },
            None => own.deep.pop().unwrap_or(OwnFrame {
                data: FrameData {
                    start: end,
                    ..FrameData::default()
                },
                node: own.current,
                child_ticks: 0,
                child_mem_kb: 0,
            }),
        }
    }

    #[inline(always)]
    fn close(&self, own: &mut Own, end: u64) {
        let f = self.innermost(own, end);
        let d = own.depth - 1;
        let elapsed = end.saturating_sub(f.data.start);
        // SAFETY: `f.node` is the node `enter` kept for this frame (or `own.current`), a node of
        // `self.tree`, which lives as long as `self`.
        let n = unsafe { &*f.node };
        let own_ticks = elapsed.saturating_sub(f.child_ticks);
        let mem_end = process::rss_kb();
        let grown = mem_end as i64 - f.data.mem_start_kb as i64;
        // The root is never closed, so `n` has a parent.
        own.current = n.parent_node().map_or(own.current, |p| p as *const Node);
        own.depth = d;
        // The record goes out before the lower depth: a reader whose snapshot no longer shows this section
        // knows its end record is already in the ring (live print relies on it to tell a late record from a
        // lost one).
        let record = Record {
            start: f.data.start,
            end,
            section: f.data.section,
            depth: d,
            mem_start_kb: f.data.mem_start_kb,
            mem_end_kb: mem_end,
        };
        self.ring.push(record.to_words());
        // It also publishes the ring push above.
        self.frames.publish_depth(d);
        // The call's time goes into the tree only now that its frame is closed, its parent's share first and
        // its own node last, so a snapshot (`snapshot::build_tree`) never counts it twice: in its node and
        // again as running. (It may briefly count as its running parent's own time, or be missing.)
        if d > 0
            && !self.frames.add_child(d - 1, elapsed, grown)
            && let Some(parent) = own.deep.last_mut()
        {
            parent.child_ticks += elapsed;
            parent.child_mem_kb += grown;
        }
        n.self_mem_kb.store(
            n.self_mem_kb.load(Ordering::Relaxed) + grown - f.child_mem_kb,
            Ordering::Relaxed,
        );
        // Release: pairs with the Acquire load in `snapshot::build_tree`; a reader that sees this call's
        // time in the node then sees its frame closed and its parent's `child_ticks` including it.
        n.self_ticks.store(
            n.self_ticks.load(Ordering::Relaxed) + own_ticks,
            Ordering::Release,
        );
        if d < self.watch.load(Ordering::Relaxed) || grown > MEM_ALERT_KB.load(Ordering::Relaxed) {
            process::wake();
        }
    }

    /// The sections open now, outermost first: a consistent stack (up to [`PUBLIC_DEPTH`] deep) even while
    /// the owner keeps entering and leaving sections.
    pub fn open_frames(&self) -> Vec<OpenFrame> {
        self.frames.read()
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
