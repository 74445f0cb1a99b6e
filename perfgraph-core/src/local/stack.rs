//! A thread's sections as its owner records them and any thread reads them: the one home of the call-tree
//! snapshot protocol.
//!
//! The owner (the recording thread) opens and closes sections on three structures only it writes: the
//! open-frame table ([`FrameTable`]), the call tree ([`Tree`]) and the ring of completed sections
//! ([`Ring`]), plus state only it touches (its depth, the innermost node, the frames too deep for the
//! table). [`Stack::enter`] and [`Stack::exit`] are that hot path; [`Stack::read`] is what another thread
//! takes, at any time.
//!
//! The order that keeps a reading from counting a call twice (once in its node, once as running):
//!
//! * close pushes the record, adds the elapsed time to the parent frame's `child_ticks`, publishes the
//!   lower depth (`Release`), then adds the node's memory change and self time (`Release`, last);
//! * a reader reads the open frames, then every node (self time with `Acquire`), then the open frames
//!   again, and counts as running only the calls open at both reads (same sequence numbers). A running
//!   call's self time so far is its time minus its `child_ticks` (as read the second time) minus the time
//!   of the next frame inward, even one the second read cut off because it just closed; if a frame is
//!   open inside that could not be read (being rewritten, or past the table), it is not counted.
//!
//! A call whose time a reader sees in its node is therefore closed in the second read and inside its
//! parent's `child_ticks`; a call that ends during the reading is counted once or, for that instant, not
//! at all. `tests/loom_snapshot.rs` found three ways the old order counted a grandchild twice: the lower
//! depth published before the parent's `child_ticks` included the call; a parent whose just-closed child
//! the second depth load cut off; a parent whose child's frame was being rewritten, counted as innermost.
//!
//! Clock readings and memory figures are the caller's, passed in, so this file depends only on
//! [`crate::base::atomics`], the section id type and the local structures: `tests/loom_snapshot.rs` compiles
//! it (and them) against loom's atomics and model-checks the protocol.

use std::cell::UnsafeCell;
use std::collections::HashMap;

use crate::base::atomics::atomic::Ordering;
use crate::base::registry::SectionId;
use crate::local::frames::{FrameData, FrameTable, Inside, OpenFrame, PUBLIC_DEPTH};
use crate::local::latency::Block;
use crate::local::reading::{AsyncReading, NodeReading, Reading, SideReading};
use crate::local::record::Record;
use crate::local::ring::Ring;
use crate::local::samples::{Closed, EndSample, Ending, Sample};
use crate::local::tree::{AsyncNode, Node, SideNode, Tree};
/// The owner's view of one open frame: what it needs to close it. Decoded from the public table for the
/// outermost frames; deeper ones live only here.
///
/// Invariant: `node` is the call's node, a node of the owner's tree.
#[derive(Debug, Clone, Copy)]
struct OwnFrame {
    data: FrameData,
    node: *const Node,
    child_ticks: u64,
    child_mem_kb: i64,
}

/// State only the owning thread touches.
///
/// Invariant: `depth` open sections; the table keeps each public frame's call-tree node with it (the
/// pointer `FrameTable::open` takes), `deep` holds the frames past the table, innermost last; `current` is
/// the innermost open section's node (the root when none). Every pointer is to a node of the owner's tree.
#[derive(Debug)]
struct Own {
    depth: u32,
    current: *const Node,
    /// Sections entered so far: the sequence number of the next frame.
    enters: u64,
    deep: Vec<OwnFrame>,
}

/// A thread's sections: completed ones on their way to the background thread, the open ones, their
/// aggregate, and the owner's private state.
///
/// Invariant: only the owner calls [`enter`](Stack::enter) and [`exit`](Stack::exit), one call after another
/// (in production, one thread; the loom model hands the stack over through spawn and join); the owner alone
/// writes `ring`, `frames` and `tree` and touches `own`, whose pointers are to nodes of `tree`.
#[derive(Debug)]
pub struct Stack {
    /// Completed sections, for the background thread.
    pub ring: Ring,
    /// Open sections, outermost first.
    pub frames: FrameTable,
    /// The aggregated call tree.
    tree: Tree,
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only touched through `enter` and `exit`, whose calls never overlap and are ordered one
// after another (their contract); every other field is atomic or immutable, and safe to read from any thread.
unsafe impl Sync for Stack {}
// SAFETY: `own`'s pointers are to nodes in `tree`'s heap segments, which never move, so moving the stack
// (and with it, per the contract, its owner's role) to another thread keeps them valid.
unsafe impl Send for Stack {}

impl Stack {
    /// An empty stack: a ring of `ring_capacity` records, and a frame table showing the outermost `public`
    /// (at most [`PUBLIC_DEPTH`]) open sections.
    pub fn new(ring_capacity: usize, public: usize) -> Stack {
        Stack::with_ring(Ring::new(ring_capacity), public)
    }

    /// As [`new`](Stack::new), with `ring` (a recycled one, say) for its completed sections.
    pub fn with_ring(ring: Ring, public: usize) -> Stack {
        let tree = Tree::new();
        // Nodes live in heap segments that never move, so the root's address survives moving `tree`.
        let root: *const Node = tree.root();
        Stack {
            ring,
            frames: FrameTable::new(public.min(PUBLIC_DEPTH)),
            tree,
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
    /// Call only on the owning thread, and do not hold two results at once.
    #[allow(clippy::mut_from_ref)] // reason: single-owner interior mutability, see the type's Sync impl.
    #[inline(always)]
    unsafe fn own(&self) -> &mut Own {
        // SAFETY: the caller is the owning thread and holds no other reference (this fn's contract).
        unsafe { &mut *self.own.get() }
    }

    /// Starts a section; returns the depth it opened at. `sample` is called once, after the section's node
    /// is found and counted, for its start time and memory.
    ///
    /// # Safety
    /// Only the stack's owner may call this: `enter` and `exit` calls never overlap, each happens after the
    /// previous one (in production, one thread makes them all).
    #[inline(always)]
    pub unsafe fn enter(&self, section: SectionId, sample: impl FnOnce() -> Sample) -> u32 {
        // SAFETY: the caller's contract is this one's.
        unsafe { self.enter_counted(section, sample, true) }
    }

    /// [`enter`](Stack::enter), counting a call only if `call` (a timed future's first poll counts one; its
    /// later polls, and the drop of one cancelled, count none). With `call` a constant, as `enter` passes
    /// it, the branch is gone once inlined: the synchronous hot path is unchanged.
    ///
    /// # Safety
    /// As [`enter`](Stack::enter).
    #[inline(always)]
    pub unsafe fn enter_counted(
        &self,
        section: SectionId,
        sample: impl FnOnce() -> Sample,
        call: bool,
    ) -> u32 {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        let depth = own.depth;
        // SAFETY: `own.current` is always a node of `self.tree` (the root or a node `child_of` returned),
        // and nodes live as long as the tree.
        let n = self.tree.child_of(unsafe { &*own.current }, section);
        if call {
            n.calls
                .store(n.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
        let node = n.index.load(Ordering::Relaxed);
        let at = sample();
        let data = FrameData {
            section,
            node,
            mem_start_kb: at.mem_kb,
            start: at.ticks,
            flags: at.flags,
        };
        let node_ptr: *const Node = n;
        if !self.frames.open(depth, own.enters, data, node_ptr.cast()) {
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

    /// Ends the section opened at `depth` (and any left open inside it), at `end` ticks. For each one it
    /// closes, innermost first, it calls `at_end` for the resident memory (and whatever else the caller
    /// takes at a section's end), and `closed` once the call's time is in. If sections opened after it are still open (sections interleaved on one thread: a
    /// guard kept across an `.await` in a `!Send` future), it first calls `interleaved` with its section and
    /// the innermost open one; they are ended with it, so the stack stays properly nested.
    ///
    /// # Safety
    /// Only the stack's owner may call this: `enter` and `exit` calls never overlap, each happens after the
    /// previous one (in production, one thread makes them all).
    #[inline(always)]
    pub unsafe fn exit(
        &self,
        depth: u32,
        end: u64,
        at_end: impl FnMut(Ending) -> EndSample,
        interleaved: impl FnOnce(SectionId, SectionId),
        closed: impl FnMut(Closed),
    ) {
        // SAFETY: the caller's contract is this fn's.
        unsafe { self.exit_as::<true>(depth, end, at_end, interleaved, closed) }
    }

    /// [`exit`](Stack::exit), with the duration of the call at `depth` into its histogram only if
    /// `LATENCY` (the sections left open inside it always record theirs). A `tracing` span's enter ends
    /// with `LATENCY` false: its latency is known only at its close (its first enter to its close, once).
    ///
    /// # Safety
    /// As [`exit`](Stack::exit).
    #[inline(always)]
    pub unsafe fn exit_as<const LATENCY: bool>(
        &self,
        depth: u32,
        end: u64,
        mut at_end: impl FnMut(Ending) -> EndSample,
        interleaved: impl FnOnce(SectionId, SectionId),
        mut closed: impl FnMut(Closed),
    ) {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        if own.depth != depth + 1 {
            if own.depth <= depth {
                return; // already closed (a guard dropped out of order); nothing to do
            }
            let (ended, open) = self.pair(own, depth);
            interleaved(ended, open);
            while own.depth > depth + 1 {
                closed(self.close::<true>(own, end, &mut at_end));
            }
        }
        closed(self.close::<LATENCY>(own, end, &mut at_end));
    }

    /// Owner only: a `tracing` span of `section` ended on this thread after `latency` ticks (its first
    /// enter to its close; for a span entered once, that enter's duration). Its call path here is that
    /// of `section` under the innermost open section, made if new without entering it (no call counted).
    /// The latency goes into the path's histogram, wherever it is (the node's own, or its [`AsyncNode`]'s
    /// once a timed future moved it there); a span entered more than once (`polled`) also adds it to the
    /// path's wall time, as a timed future's end does.
    ///
    /// # Safety
    /// Only the stack's owner may call this, as [`enter`](Stack::enter).
    #[cfg(feature = "tracing")]
    pub unsafe fn span_ended(&self, section: SectionId, latency: u64, polled: bool) {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        // SAFETY: `own.current` is always a node of `self.tree`, which lives as long as `self`.
        let n = self.tree.child_of(unsafe { &*own.current }, section);
        let index = n.index.load(Ordering::Relaxed);
        if polled {
            self.tree.async_of(index).end_wall(latency, false);
        }
        // SAFETY: as above.
        unsafe { self.record_latency(index, latency) };
    }

    /// Owner only: one duration, `ticks`, into the histogram of node `index` (nothing if the path has
    /// none), wherever it is: the node's own, or its [`AsyncNode`]'s once a timed future moved it there.
    ///
    /// # Safety
    /// Only the stack's owner may call this, as [`enter`](Stack::enter).
    #[cfg(feature = "tracing")]
    unsafe fn record_latency(&self, index: u32, ticks: u64) {
        let block = self
            .tree
            .node(index)
            .latency()
            .or_else(|| self.tree.async_get(index).and_then(AsyncNode::latency));
        if let Some(h) = block {
            h.record(ticks);
        }
    }

    /// Clock ticks at the start of the section open at `depth`, if one is open there.
    ///
    /// # Safety
    /// Only the stack's owner may call this, as [`enter`](Stack::enter).
    #[inline]
    pub unsafe fn start_at(&self, depth: u32) -> Option<u64> {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        if depth >= own.depth {
            return None;
        }
        match self.frames.start_at(depth) {
            Some(start) => Some(start),
            None => own
                .deep
                .get(depth as usize - self.frames.len())
                .map(|f| f.data.start),
        }
    }

    /// The [`AsyncNode`] of the innermost open section's call path (the root's when none is open): where a
    /// timed future that just entered counts its poll and, when it ends, its wall time.
    ///
    /// # Safety
    /// Only the stack's owner may call this, as [`enter`](Stack::enter).
    pub unsafe fn current_async(&self, per_future: bool) -> &AsyncNode {
        // SAFETY: we are the owner (caller's contract) and hold no other `own` reference.
        let own = unsafe { self.own() };
        // SAFETY: `own.current` is always a node of `self.tree`, which lives as long as `self`.
        let index = unsafe { &*own.current }.index.load(Ordering::Relaxed);
        // A timed future's path records one duration per future (`per_future`); a span's keeps its
        // enters'.
        if per_future {
            self.tree.async_poll_of(index)
        } else {
            self.tree.async_of(index)
        }
    }

    /// Owner only: the [`SideNode`] of node `index` (an [`Ending::node`]), allocated at first use.
    ///
    /// # Safety
    /// Only the stack's owner may call this, as [`enter`](Stack::enter).
    pub unsafe fn side_of(&self, index: u32) -> &SideNode {
        self.tree.side_of(index)
    }

    /// The sections open at `depth` and innermost, with `own` the owner's state.
    #[cold]
    #[inline(never)]
    fn pair(&self, own: &Own, depth: u32) -> (SectionId, SectionId) {
        let section_at = |d: u32| -> SectionId {
            match self.frames.peek(d) {
                Some((data, ..)) => data.section,
                // Past the table: `deep` holds depth `len` onwards.
                None => own
                    .deep
                    .get((d as usize).saturating_sub(self.frames.len()))
                    .map_or(0, |f| f.data.section),
            }
        };
        (section_at(depth), section_at(own.depth - 1))
    }

    /// The innermost open frame, as the owner closes it.
    #[inline(always)]
    fn innermost(&self, own: &mut Own, end: u64) -> OwnFrame {
        let d = own.depth - 1;
        match self.frames.peek(d) {
            Some((data, child_ticks, child_mem_kb, node)) => OwnFrame {
                data,
                node: node.cast(),
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

    /// Closes the innermost open section. `own` is the owner's state (so this is the owner).
    #[inline(always)]
    fn close<const LATENCY: bool>(
        &self,
        own: &mut Own,
        end: u64,
        at_end: &mut impl FnMut(Ending) -> EndSample,
    ) -> Closed {
        let f = self.innermost(own, end);
        let d = own.depth - 1;
        let elapsed = end.saturating_sub(f.data.start);
        // SAFETY: `f.node` is the node `enter` kept for this frame (or `own.current`), a node of
        // `self.tree`, which lives as long as `self`.
        let n = unsafe { &*f.node };
        let own_ticks = elapsed.saturating_sub(f.child_ticks);
        let ending = at_end(Ending {
            node: f.data.node,
            flags: f.data.flags,
            section: f.data.section,
            start: f.data.start,
        });
        let mem_end = ending.mem_kb;
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
            heap_alert: ending.heap_alert,
            cpu: None,
            args: None,
        };
        self.ring.push(record.to_words());
        // The parent's share goes in before the lower depth: a reader that sees this frame closed then sees
        // the parent's `child_ticks` including it, and does not count the call (and the children whose time
        // it saw in their nodes) again as the running parent's own time.
        if d > 0
            && !self.frames.add_child(d - 1, elapsed, grown)
            && let Some(parent) = own.deep.last_mut()
        {
            parent.child_ticks += elapsed;
            parent.child_mem_kb += grown;
        }
        // It also publishes the ring push and the parent's share above.
        self.frames.publish_depth(d);
        // The call's duration into its histogram: a bucket found from its leading zeros, one owner-only
        // increment.
        let mut unrecorded: *const Block = std::ptr::null();
        if let Some(h) = n.latency() {
            if LATENCY {
                h.record(elapsed);
            } else {
                unrecorded = h;
            }
        }
        // The call's own time goes into its node last, so a reading never counts it twice: in its node and
        // again as running. (For an instant it may be missing, or subtracted twice from a running parent.)
        n.self_mem_kb.store(
            n.self_mem_kb.load(Ordering::Relaxed) + grown - f.child_mem_kb,
            Ordering::Relaxed,
        );
        // Release: pairs with the Acquire load in `read_nodes`; a reader that sees this call's time in the
        // node then sees its frame closed and its parent's `child_ticks` including it.
        n.self_ticks.store(
            n.self_ticks.load(Ordering::Relaxed) + own_ticks,
            Ordering::Release,
        );
        Closed {
            depth: d,
            grown_kb: grown,
            heap_alert: ending.heap_alert,
            elapsed,
            unrecorded,
        }
    }

    /// Reads the stack while its owner keeps recording: every node, with the running calls' self time up
    /// to `now` (ticks) added. Counts are exact; a call that ends during the reading is counted once (in
    /// its node, or as running) or, for that instant, not at all, never twice.
    pub fn read(&self, now: u64) -> Reading {
        // The open frames are read before and after the nodes, and only calls open at both reads count as
        // running: read only before, a call that ended meanwhile was counted twice (in its node, and as
        // running); read only after, a call entered meanwhile could run in a node whose count was read
        // before it started.
        let before = self.frames.read();
        let (mut nodes, index_of) = self.read_nodes(&before);
        let (after, inside) = self.frames.read_inside();
        let common = before
            .iter()
            .zip(&after)
            .take_while(|(b, a)| b.seq == a.seq && b.depth == a.depth)
            .count();
        // Running calls: self time so far = elapsed - completed children - the open child's elapsed. Their
        // frames as read after the nodes, so every child whose time (or whose descendants' time) is in the
        // nodes is in `child_ticks`, or is the open child: the parent's frame is read after that child's,
        // and a child that closed before the depth load is in `child_ticks` (`close` adds it before it
        // publishes the lower depth). The open child is the next frame read, even one the second depth load
        // cut off: the parent's `child_ticks`, read before that cut, may not include it. When a child is open
        // but could not be read (`Inside::Unknown`), the parent's time so far is not counted. A child that
        // ended after the node reads is then missing, or subtracted twice, never counted twice.
        for (k, f) in after.iter().enumerate().take(common) {
            let Some(&i) = index_of.get(&f.node).filter(|&&i| i != usize::MAX) else {
                continue;
            };
            nodes[i].running += 1;
            let inner = match (after.get(k + 1), inside) {
                (Some(&child), _) | (None, Inside::Closed(child)) => {
                    now.saturating_sub(child.start)
                }
                (None, Inside::Nothing) => 0,
                (None, Inside::Unknown) => continue,
            };
            let elapsed = now.saturating_sub(f.start);
            nodes[i].self_ticks += elapsed.saturating_sub(f.child_ticks).saturating_sub(inner);
        }
        let mut running = after;
        running.truncate(common);
        Reading { nodes, running }
    }

    /// Every published node, walked from the root, children oldest first (node indices grow with creation
    /// time); and where the nodes of the `open` calls landed (`usize::MAX` for one not published). Only
    /// those can be running, so the index holds an entry per open call, not per node (a recursion has as
    /// many nodes as it is deep).
    fn read_nodes(&self, open: &[OpenFrame]) -> (Vec<NodeReading>, HashMap<u32, usize>) {
        let len = self.tree.len() as usize;
        let mut nodes: Vec<NodeReading> = Vec::with_capacity(len);
        let mut index_of: HashMap<u32, usize> = open.iter().map(|f| (f.node, usize::MAX)).collect();
        let mut stack = vec![(0u32, None::<usize>, 0u32)];
        while let Some((id, parent, depth)) = stack.pop() {
            let Some(n) = self.tree.get(id) else { continue };
            if let Some(slot) = index_of.get_mut(&id) {
                *slot = nodes.len();
            }
            nodes.push(NodeReading {
                section: n.section.load(Ordering::Relaxed),
                parent,
                depth,
                calls: n.calls.load(Ordering::Relaxed),
                running: 0,
                self_mem_kb: n.self_mem_kb.load(Ordering::Relaxed),
                // Acquire: pairs with the Release store in `close`; a call whose time this sees is closed in
                // the frames read after it, so it is not counted again as running.
                self_ticks: n.self_ticks.load(Ordering::Acquire),
                asyncs: self
                    .tree
                    .async_get(id)
                    .map_or_else(AsyncReading::default, |a| AsyncReading {
                        polls: a.polls.load(Ordering::Relaxed),
                        wall_ticks: a.wall_ticks.load(Ordering::Relaxed),
                        max_wall_ticks: a.max_wall_ticks.load(Ordering::Relaxed),
                        cancelled: a.cancelled.load(Ordering::Relaxed),
                    }),
                // An async path's block is its futures' (moved there at its first poll).
                latency: n
                    .latency()
                    .or_else(|| self.tree.async_get(id).and_then(AsyncNode::latency))
                    .map(|h| h.read())
                    .unwrap_or_default(),
                side: self
                    .tree
                    .side_get(id)
                    .map_or_else(SideReading::default, |h| SideReading {
                        self_allocs: h.self_allocs.load(Ordering::Relaxed),
                        self_alloc_bytes: h.self_alloc_bytes.load(Ordering::Relaxed),
                        heap_growth: h.heap_growth.load(Ordering::Relaxed),
                        heap_peak: h.heap_peak.load(Ordering::Relaxed),
                        cpu_calls: h.cpu_calls.load(Ordering::Relaxed),
                        cpu: h.read_cpu(),
                    }),
            });
            let i = nodes.len() - 1;
            let mut kids: Vec<u32> = self.tree.children(id).collect();
            kids.sort_unstable_by(|a, b| b.cmp(a)); // pop order: oldest first
            stack.extend(kids.into_iter().map(|c| (c, Some(i), depth + 1)));
        }
        (nodes, index_of)
    }
}
