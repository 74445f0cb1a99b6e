//! A thread's call tree, aggregated by the thread itself as it runs: one [`Node`] per call path.
//!
//! Only the owning thread writes a tree (single writer), so its counters are updated with plain
//! load-and-store, never a read-modify-write instruction; any other thread may read them at any time. Counts
//! are therefore exact whatever happens to the event ring.
//!
//! A node stores its *self* time (its calls' durations minus the time spent in its children during those
//! calls), not its total: totals are summed bottom-up by readers. So a tree read while the thread runs is
//! always consistent (`total = self + children`, `children <= total`), whichever counters a reader catches
//! before or after an update.
//!
//! Nodes live in segments that are allocated on demand and never move or shrink while the thread's state
//! lives: segment `k` holds `64 << k` nodes, so a thread with a handful of call paths costs 4 KiB. A new
//! node is fully written before it is linked into its parent's child list with a `Release` store, which
//! readers load with `Acquire`.
//!
//! This file depends only on [`crate::base::atomics`] and the section id type, so `tests/loom_snapshot.rs`
//! compiles it against loom's atomics; its unit tests live in `tree_tests.rs`.

use crate::base::atomics::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use crate::base::registry::SectionId;
use crate::data::figures::CpuFigures;
use crate::local::latency::{self, Block};

/// "No node".
pub const NIL: u32 = u32::MAX;
/// Nodes in the first segment. In the loom model, 2: loom's atomics are costly to create, and the model's
/// third node then takes the path that allocates and publishes a segment.
const FIRST: usize = if crate::base::atomics::MODEL { 2 } else { 64 };
const SEGMENTS: usize = 26;
/// Call paths per thread that get a latency histogram (30 KiB each): the first 1,023 made after the root.
/// Paths past them (a recursion thousands deep) count their calls and times but not their latency.
pub const LATENCY_PATHS: u32 = 1024;

/// One call path. 64 bytes, so a node never shares a cache line with another thread's data.
///
/// Invariants: `section`, `index`, `parent_node` and `latency` never change once the node is linked;
/// `first_child` and `next_sibling` only ever go from `NIL` (or an older node) to a newer, fully written node;
/// the counters only grow, except `self_mem_kb`, a signed sum.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Node {
    /// The section this path ends in (0 for the root).
    pub section: AtomicU32,
    /// Newest child, or `NIL`.
    pub first_child: AtomicU32,
    /// Next older sibling, or `NIL`.
    pub next_sibling: AtomicU32,
    /// This node's own index.
    pub index: AtomicU32,
    /// The child found last time, or null; a cache for the owner's lookups only. A pointer, not an index,
    /// so the hot path's lookup is two dependent loads instead of two index-to-segment translations.
    last_hit: AtomicPtr<Node>,
    /// The parent node (null for the root): where the owner's cursor goes back to when a call ends.
    parent_node: AtomicPtr<Node>,
    /// The path's latency histogram, in a block of its own allocated with the node (null for the root,
    /// for a path past the first [`LATENCY_PATHS`], or when the memory could not be had).
    latency: AtomicPtr<Block>,
    /// Calls started.
    pub calls: AtomicU64,
    /// Ticks spent in this node and not in its children, over completed calls.
    pub self_ticks: AtomicU64,
    /// Resident-memory change (KiB) over completed calls, minus the children's.
    pub self_mem_kb: AtomicI64,
}

// One node per cache line: a thread's nodes never share a line with another thread's data (loom's atomics,
// in the model, are larger).
const _: () = assert!(crate::base::atomics::MODEL || std::mem::size_of::<Node>() == 64);

impl Node {
    fn init(&self, section: SectionId, index: u32, parent_node: *mut Node) {
        self.section.store(section, Ordering::Relaxed);
        self.first_child.store(NIL, Ordering::Relaxed);
        self.next_sibling.store(NIL, Ordering::Relaxed);
        self.index.store(index, Ordering::Relaxed);
        self.last_hit.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.parent_node.store(parent_node, Ordering::Relaxed);
        self.latency.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.calls.store(0, Ordering::Relaxed);
        self.self_ticks.store(0, Ordering::Relaxed);
        self.self_mem_kb.store(0, Ordering::Relaxed);
    }

    /// The parent node, for the owner; `None` for the root.
    #[inline(always)]
    pub fn parent_node(&self) -> Option<&Node> {
        // SAFETY: a non-null `parent_node` points into a segment of the same tree, which lives as long as
        // the tree (and so as long as `self`); it was set before the node was linked.
        unsafe { self.parent_node.load(Ordering::Relaxed).as_ref() }
    }

    /// The path's latency histogram, if it has one.
    #[inline(always)]
    pub fn latency(&self) -> Option<&Block> {
        // SAFETY: a non-null `latency` points at this node's own block, allocated when the node was made
        // and freed when the tree is dropped, after its last use; it was set before the node was linked
        // (readers reach the node through an Acquire load).
        unsafe { self.latency.load(Ordering::Relaxed).as_ref() }
    }
}

/// What the timed futures (`perfgraph_core::Timed`) of one call path add to its node: kept
/// beside the nodes, in segments of their own allocated at a path's first poll, so a program without futures
/// pays nothing and a [`Node`] stays one cache line. Written by the owner only (plain load and store), on the
/// poll path; readable by any thread.
///
/// Invariant: `polls` only grows; `wall_ticks`, `max_wall_ticks` and `cancelled` only grow, and are of the
/// futures that ended at this node (completed in a poll here, or dropped while entered here).
#[derive(Debug)]
pub struct AsyncNode {
    /// Polls of futures of this path on this thread.
    pub polls: AtomicU64,
    /// Futures ended here, their wall time (first poll to completion or drop) summed, ticks.
    pub wall_ticks: AtomicU64,
    /// The longest of those, ticks.
    pub max_wall_ticks: AtomicU64,
    /// Futures dropped here before they completed.
    pub cancelled: AtomicU64,
    /// The path's latency histogram once a future was polled here (null before, or for a path without
    /// one): the [`Node`]'s own block, moved here at the path's first poll ([`Tree::async_poll_of`]), so
    /// that it holds one duration per future (first poll to completion or drop, recorded by
    /// [`end`](Self::end)), not one per poll. Freed with the tree.
    latency: AtomicPtr<Block>,
}

impl AsyncNode {
    /// Nothing counted yet (not a `Default`: loom's atomics have none).
    fn new() -> AsyncNode {
        AsyncNode {
            polls: AtomicU64::new(0),
            wall_ticks: AtomicU64::new(0),
            max_wall_ticks: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            latency: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The futures' latency histogram of this path, if it has one.
    pub fn latency(&self) -> Option<&Block> {
        // SAFETY: a non-null `latency` is a node's block moved here by `Tree::async_poll_of`, freed only
        // when the tree is dropped, after its last use. Acquire: pairs with the Release store there.
        unsafe { self.latency.load(Ordering::Acquire).as_ref() }
    }

    /// Owner only: counts a poll.
    #[inline(always)]
    pub fn poll(&self) {
        self.polls
            .store(self.polls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Owner only: a future of this path ended after `wall` ticks, `cancelled` if it was dropped first.
    pub fn end(&self, wall: u64, cancelled: bool) {
        self.end_wall(wall, cancelled);
        // Its latency: the future's whole life, once.
        if let Some(h) = self.latency() {
            h.record(wall);
        }
    }

    /// Owner only: [`end`](Self::end) without the latency (a `tracing` span's goes where its path
    /// keeps it).
    pub fn end_wall(&self, wall: u64, cancelled: bool) {
        self.wall_ticks.store(
            self.wall_ticks.load(Ordering::Relaxed) + wall,
            Ordering::Relaxed,
        );
        if wall > self.max_wall_ticks.load(Ordering::Relaxed) {
            self.max_wall_ticks.store(wall, Ordering::Relaxed);
        }
        if cancelled {
            self.cancelled.store(
                self.cancelled.load(Ordering::Relaxed) + 1,
                Ordering::Relaxed,
            );
        }
    }
}

/// A call path's figures kept out of line: what the counting allocator
/// ([`CountingAllocator`](crate::base::heap::CountingAllocator)) lets it count, and the CPU time of its
/// calls that measured it (the `cpu` option, `PERFGRAPH_CPU=all`): kept beside the nodes like
/// [`AsyncNode`], in segments allocated at a path's first completed call that has such figures, so a
/// program without them pays nothing and a [`Node`] stays one cache line.
/// Written by the owner only (plain load and store) when a call ends; readable by any thread.
///
/// Invariant: the counters only grow, except `heap_growth`, a signed sum; all are over completed calls.
#[derive(Debug)]
pub struct SideNode {
    /// Allocations made in this path and not in its children.
    pub self_allocs: AtomicU64,
    /// Bytes they asked for.
    pub self_alloc_bytes: AtomicU64,
    /// Net heap growth (allocated minus freed, children included), bytes, summed over calls.
    pub heap_growth: AtomicI64,
    /// The largest heap growth within one call, above its start, bytes.
    pub heap_peak: AtomicU64,
    /// Calls (polls, for a timed future) that measured their CPU time: 0 for a path that never did.
    pub cpu_calls: AtomicU64,
    /// What they measured, summed: [`CpuFigures`], in its list's order.
    pub cpu: [AtomicU64; CpuFigures::COUNT],
}

impl SideNode {
    /// Nothing counted yet (not a `Default`: loom's atomics have none).
    fn new() -> SideNode {
        SideNode {
            self_allocs: AtomicU64::new(0),
            self_alloc_bytes: AtomicU64::new(0),
            heap_growth: AtomicI64::new(0),
            heap_peak: AtomicU64::new(0),
            cpu_calls: AtomicU64::new(0),
            cpu: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Owner only: a call that measured its CPU time ended with `cpu`.
    #[inline(always)]
    pub fn add_cpu(&self, cpu: &CpuFigures) {
        let add = |a: &AtomicU64, v: u64| a.store(a.load(Ordering::Relaxed) + v, Ordering::Relaxed);
        add(&self.cpu_calls, 1);
        for (a, v) in self.cpu.iter().zip(cpu.values()) {
            add(a, v);
        }
    }

    /// What the calls that measured their CPU time measured, summed, as read now.
    pub fn read_cpu(&self) -> CpuFigures {
        CpuFigures::from_values(std::array::from_fn(|i| self.cpu[i].load(Ordering::Relaxed)))
    }

    /// Owner only: a call ended having made `allocs` allocations of `bytes` itself, its heap `growth`
    /// over the call and `peak` at most above its start.
    #[inline(always)]
    pub fn add(&self, allocs: u64, bytes: u64, growth: i64, peak: u64) {
        let add = |a: &AtomicU64, v: u64| a.store(a.load(Ordering::Relaxed) + v, Ordering::Relaxed);
        add(&self.self_allocs, allocs);
        add(&self.self_alloc_bytes, bytes);
        self.heap_growth.store(
            self.heap_growth.load(Ordering::Relaxed) + growth,
            Ordering::Relaxed,
        );
        if peak > self.heap_peak.load(Ordering::Relaxed) {
            self.heap_peak.store(peak, Ordering::Relaxed);
        }
    }
}

/// The node storage of one thread. Node 0 is the root.
#[derive(Debug)]
pub struct Tree {
    /// Segment `k` (64 << k nodes) or null; written once, freed on drop.
    segments: [AtomicPtr<Node>; SEGMENTS],
    /// The [`AsyncNode`]s of the same indices, segment by segment as in `segments`; null until a poll
    /// needs one. Written once (by the owner), freed on drop.
    asyncs: [AtomicPtr<AsyncNode>; SEGMENTS],
    /// The [`SideNode`]s of the same indices, as `asyncs`; null until a call there ends with heap or CPU
    /// figures.
    sides: [AtomicPtr<SideNode>; SEGMENTS],
    /// Nodes in use. Written only by the owner (Release after a node is initialised).
    len: AtomicU32,
}

/// The segment holding node `index`, and its offset there.
pub(crate) fn locate(index: u32) -> (usize, usize) {
    let biased = index as usize / FIRST + 1;
    let segment = (usize::BITS - 1 - biased.leading_zeros()) as usize;
    let offset = index as usize - ((1usize << segment) - 1) * FIRST;
    (segment, offset)
}

impl Tree {
    /// A tree holding only its root.
    pub fn new() -> Tree {
        let tree = Tree {
            // Not a `const` block: loom's atomics have no `const fn new`.
            segments: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            asyncs: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            sides: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            len: AtomicU32::new(0),
        };
        let root = tree.slot(0);
        root.init(0, 0, std::ptr::null_mut());
        tree.len.store(1, Ordering::Release);
        tree
    }

    /// Ensures the segment for `index` exists and returns the node there (not necessarily initialised).
    fn slot(&self, index: u32) -> &Node {
        let (segment, offset) = locate(index);
        let mut ptr = self.segments[segment].load(Ordering::Acquire);
        if ptr.is_null() {
            let nodes: Box<[Node]> = (0..FIRST << segment)
                .map(|_| Node {
                    section: AtomicU32::new(0),
                    first_child: AtomicU32::new(NIL),
                    next_sibling: AtomicU32::new(NIL),
                    index: AtomicU32::new(NIL),
                    last_hit: AtomicPtr::new(std::ptr::null_mut()),
                    parent_node: AtomicPtr::new(std::ptr::null_mut()),
                    latency: AtomicPtr::new(std::ptr::null_mut()),
                    calls: AtomicU64::new(0),
                    self_ticks: AtomicU64::new(0),
                    self_mem_kb: AtomicI64::new(0),
                })
                .collect();
            ptr = Box::into_raw(nodes).cast::<Node>();
            // Release: pairs with the Acquire loads here and in `get`; readers see initialised memory.
            self.segments[segment].store(ptr, Ordering::Release);
        }
        debug_assert!(offset < FIRST << segment);
        // SAFETY: `ptr` points at a live segment of `FIRST << segment` nodes (never freed before `self`), and
        // `offset` is below that length by construction of `locate`.
        unsafe { &*ptr.add(offset) }
    }

    /// Node `index`, if it has been published.
    #[inline]
    pub fn get(&self, index: u32) -> Option<&Node> {
        if index >= self.len.load(Ordering::Acquire) {
            return None;
        }
        let (segment, offset) = locate(index);
        // Acquire: pairs with the Release store in `slot`.
        let ptr = self.segments[segment].load(Ordering::Acquire);
        debug_assert!(!ptr.is_null());
        // SAFETY: `index < len` (Acquire, pairs with the Release in `add_child`), so its segment was published
        // before and holds `FIRST << segment > offset` nodes that live as long as `self`.
        Some(unsafe { &*ptr.add(offset) })
    }

    /// Node `index` for its owner, which knows it exists.
    #[inline(always)]
    pub fn node(&self, index: u32) -> &Node {
        let (segment, offset) = locate(index);
        let ptr = self.segments[segment].load(Ordering::Relaxed);
        debug_assert!(!ptr.is_null() && index < self.len.load(Ordering::Relaxed));
        // SAFETY: only the owner calls this, with indices it created; the segment was allocated by the owner
        // itself (so Relaxed sees it) and lives as long as `self`.
        unsafe { &*ptr.add(offset) }
    }

    /// Owner only: the [`AsyncNode`] of node `index` (a node of this tree), allocating its segment at the
    /// first poll there (perfgraph's own allocation, so untracked: the poll's section is not charged it).
    /// `#[inline]`, as [`async_poll_of`](Self::async_poll_of): on every poll's path
    /// (`Stack::current_async`), where they were inlined only while `stack.rs` and this file shared a
    /// codegen unit (files added elsewhere in the crate split them: +22 instructions a poll under callgrind).
    #[inline]
    pub fn async_of(&self, index: u32) -> &AsyncNode {
        let (segment, offset) = locate(index);
        let mut ptr = self.asyncs[segment].load(Ordering::Relaxed);
        if ptr.is_null() {
            let nodes: Box<[AsyncNode]> = crate::base::heap::untracked(|| {
                (0..FIRST << segment).map(|_| AsyncNode::new()).collect()
            });
            ptr = Box::into_raw(nodes).cast::<AsyncNode>();
            // Release: pairs with the Acquire load in `async_get`; readers see initialised memory.
            self.asyncs[segment].store(ptr, Ordering::Release);
        }
        // SAFETY: `ptr` points at a live segment of `FIRST << segment` entries (never freed before `self`),
        // and `offset` is below that length by construction of `locate`.
        unsafe { &*ptr.add(offset) }
    }

    /// Reader side: the [`AsyncNode`] of node `index`, if a poll ever allocated its segment.
    /// Owner only, at a poll: [`async_of`](Self::async_of), and at the path's first poll its latency
    /// block moved from the node to it. The node then has none: a poll's end records no duration (a poll
    /// is not a call), and the future's end records its whole life ([`AsyncNode::end`]).
    #[inline]
    pub fn async_poll_of(&self, index: u32) -> &AsyncNode {
        let a = self.async_of(index);
        let node = self.node(index);
        let block = node.latency.load(Ordering::Relaxed);
        if !block.is_null() {
            // Release: pairs with the Acquire load in `AsyncNode::latency`; stored before the node lets go,
            // so a reader finds the block in one place or the other.
            a.latency.store(block, Ordering::Release);
            node.latency.store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        a
    }

    pub fn async_get(&self, index: u32) -> Option<&AsyncNode> {
        let (segment, offset) = locate(index);
        // Acquire: pairs with the Release store in `async_of`.
        let ptr = self.asyncs.get(segment)?.load(Ordering::Acquire);
        // SAFETY: a non-null segment holds `FIRST << segment > offset` initialised entries that live as long
        // as `self`.
        unsafe { ptr.as_ref().map(|_| &*ptr.add(offset)) }
    }

    /// Owner only: the [`SideNode`] of node `index` (a node of this tree), allocating its segment (untracked)
    /// at the first call there that ends with heap or CPU figures.
    pub fn side_of(&self, index: u32) -> &SideNode {
        let (segment, offset) = locate(index);
        let mut ptr = self.sides[segment].load(Ordering::Relaxed);
        if ptr.is_null() {
            ptr = self.new_side_segment(segment);
        }
        // SAFETY: `ptr` points at a live segment of `FIRST << segment` entries (never freed before `self`),
        // and `offset` is below that length by construction of `locate`.
        unsafe { &*ptr.add(offset) }
    }

    /// Allocates and publishes side segment `segment` (owner only; perfgraph's own allocation, so untracked).
    #[cold]
    #[inline(never)]
    fn new_side_segment(&self, segment: usize) -> *mut SideNode {
        crate::base::heap::untracked(|| {
            let nodes: Box<[SideNode]> = (0..FIRST << segment).map(|_| SideNode::new()).collect();
            let ptr = Box::into_raw(nodes).cast::<SideNode>();
            // Release: pairs with the Acquire load in `side_get`; readers see initialised memory.
            self.sides[segment].store(ptr, Ordering::Release);
            ptr
        })
    }

    /// Reader side: the [`SideNode`] of node `index`, if a call there ever allocated its segment.
    pub fn side_get(&self, index: u32) -> Option<&SideNode> {
        let (segment, offset) = locate(index);
        // Acquire: pairs with the Release store in `side_of`.
        let ptr = self.sides.get(segment)?.load(Ordering::Acquire);
        // SAFETY: a non-null segment holds `FIRST << segment > offset` initialised entries that live as long
        // as `self`.
        unsafe { ptr.as_ref().map(|_| &*ptr.add(offset)) }
    }

    /// Number of nodes.
    pub fn len(&self) -> u32 {
        self.len.load(Ordering::Acquire)
    }

    /// The root node.
    pub fn root(&self) -> &Node {
        self.node(0)
    }

    /// The child of `parent` for `section`, created if new. Owner only.
    #[cfg(test)]
    pub fn child(&self, parent: u32, section: SectionId) -> u32 {
        let child = self.child_of(self.node(parent), section);
        child.index.load(Ordering::Relaxed)
    }

    /// The child of `parent` (a node of this tree) for `section`, created if new. Owner only: the hot path.
    #[inline(always)]
    pub fn child_of(&self, parent: &Node, section: SectionId) -> &Node {
        let hit = parent.last_hit.load(Ordering::Relaxed);
        // SAFETY: a non-null `last_hit` was stored by `find_or_add` from `self.node`, a node of this tree,
        // whose segment lives as long as the tree.
        if let Some(hit) = unsafe { hit.as_ref() }
            && hit.section.load(Ordering::Relaxed) == section
        {
            return hit;
        }
        self.find_or_add(parent, section)
    }

    #[inline(never)]
    fn find_or_add(&self, p: &Node, section: SectionId) -> &Node {
        let mut c = p.first_child.load(Ordering::Relaxed);
        while c != NIL {
            let n = self.node(c);
            if n.section.load(Ordering::Relaxed) == section {
                p.last_hit
                    .store(n as *const Node as *mut Node, Ordering::Relaxed);
                return n;
            }
            c = n.next_sibling.load(Ordering::Relaxed);
        }
        let n = self.add_child(p, section);
        p.last_hit
            .store(n as *const Node as *mut Node, Ordering::Relaxed);
        n
    }

    #[cold]
    fn add_child(&self, p: &Node, section: SectionId) -> &Node {
        let index = self.len.load(Ordering::Relaxed);
        let node = self.slot(index);
        node.init(section, index, p as *const Node as *mut Node);
        if index < LATENCY_PATHS {
            node.latency.store(latency::allocate(), Ordering::Relaxed);
        }
        node.next_sibling
            .store(p.first_child.load(Ordering::Relaxed), Ordering::Relaxed);
        // Release (both): pair with Acquire loads in readers (`get`, child iteration); the node is initialised.
        self.len.store(index + 1, Ordering::Release);
        p.first_child.store(index, Ordering::Release);
        node
    }

    /// Children of `index`, newest first (reader side).
    pub fn children(&self, index: u32) -> impl Iterator<Item = u32> + '_ {
        // Acquire: pairs with the Release store of `first_child`/`next_sibling` in `add_child`.
        let mut c = self
            .get(index)
            .map_or(NIL, |n| n.first_child.load(Ordering::Acquire));
        std::iter::from_fn(move || {
            if c == NIL {
                return None;
            }
            let current = c;
            c = self
                .get(current)
                .map_or(NIL, |n| n.next_sibling.load(Ordering::Acquire));
            Some(current)
        })
    }
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        for index in 1..self.len.load(Ordering::Relaxed).min(LATENCY_PATHS) {
            // SAFETY: a node's block is null or came from `latency::allocate` in `add_child`, and `&mut
            // self` means nobody uses it any more.
            unsafe { latency::free(self.node(index).latency.load(Ordering::Relaxed)) };
        }
        for (segment, ptr) in self.segments.iter().enumerate() {
            let ptr = ptr.load(Ordering::Relaxed);
            if !ptr.is_null() {
                let len = FIRST << segment;
                // SAFETY: `ptr` came from `Box::<[Node]>::into_raw` of exactly `len` nodes in `slot`, and
                // `&mut self` means nobody else uses it any more.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
            }
        }
        for (segment, ptr) in self.asyncs.iter().enumerate() {
            let ptr = ptr.load(Ordering::Relaxed);
            if !ptr.is_null() {
                let len = FIRST << segment;
                for i in 0..len {
                    // SAFETY: `ptr` holds `len` live entries (as below); a non-null block there was moved
                    // from a node by `async_poll_of` (the node's is then null, so it is freed once), and
                    // `&mut self` means nobody uses it any more.
                    unsafe { latency::free((*ptr.add(i)).latency.load(Ordering::Relaxed)) };
                }
                // SAFETY: `ptr` came from `Box::<[AsyncNode]>::into_raw` of exactly `len` entries in
                // `async_of`, and `&mut self` means nobody else uses it any more.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
            }
        }
        for (segment, ptr) in self.sides.iter().enumerate() {
            let ptr = ptr.load(Ordering::Relaxed);
            if !ptr.is_null() {
                let len = FIRST << segment;
                // SAFETY: `ptr` came from `Box::<[SideNode]>::into_raw` of exactly `len` entries in
                // `side_of`, and `&mut self` means nobody else uses it any more.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
            }
        }
    }
}
