//! What a reading of a thread's sections holds, as plain data: every call path's figures and the calls
//! running, as [`Stack::read`](crate::local::stack::Stack::read) returns them and `snapshot.rs` and
//! `retired.rs` fold them. The protocol that takes a consistent reading stays in `stack.rs`.

use crate::base::registry::SectionId;
use crate::data::figures::CpuFigures;
use crate::local::frames::OpenFrame;
use crate::local::latency::Counts;

/// One call path as a [`Reading`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReading {
    /// The section (0 for the root).
    pub section: SectionId,
    /// The parent's position in [`Reading::nodes`]; `None` for the root.
    pub parent: Option<usize>,
    /// Depth in the tree, 0 for the root.
    pub depth: u32,
    /// Calls started.
    pub calls: u64,
    /// Of those, the ones running (open at both reads of the frames).
    pub running: u64,
    /// Self time of the completed calls, plus the running ones' self time so far, ticks.
    pub self_ticks: u64,
    /// Memory change of the completed calls minus their children's, KiB.
    pub self_mem_kb: i64,
    /// What timed futures added (all zero for a path no future entered).
    pub asyncs: AsyncReading,
    /// The completed calls' durations (ticks); empty for a path without a histogram.
    pub latency: Counts,
    /// What the counting allocator counted, and the CPU time of the calls that measured it (all zero
    /// without them).
    pub side: SideReading,
}

/// A [`SideNode`](crate::local::tree::SideNode) as a [`Reading`] saw it: heap and CPU figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideReading {
    /// Allocations made in the path and not in its children.
    pub self_allocs: u64,
    /// Bytes they asked for.
    pub self_alloc_bytes: u64,
    /// Net heap growth over the completed calls, children included, bytes.
    pub heap_growth: i64,
    /// The largest heap growth within one call, bytes.
    pub heap_peak: u64,
    /// Calls that measured their CPU time (0: the path never did, and has no CPU figures).
    pub cpu_calls: u64,
    /// What they measured, summed.
    pub cpu: CpuFigures,
}

impl SideReading {
    /// Adds `other`'s figures (the maximum of the peaks).
    pub fn add(&mut self, other: &SideReading) {
        self.self_allocs += other.self_allocs;
        self.self_alloc_bytes += other.self_alloc_bytes;
        self.heap_growth += other.heap_growth;
        self.heap_peak = self.heap_peak.max(other.heap_peak);
        self.cpu_calls += other.cpu_calls;
        self.cpu = self.cpu.plus(&other.cpu);
    }
}

/// An [`AsyncNode`](crate::local::tree::AsyncNode) as a [`Reading`] saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AsyncReading {
    /// Polls.
    pub polls: u64,
    /// Wall time of the futures that ended at the node, summed, ticks.
    pub wall_ticks: u64,
    /// The longest of those, ticks.
    pub max_wall_ticks: u64,
    /// Futures dropped before they completed.
    pub cancelled: u64,
}

impl AsyncReading {
    /// Adds `other`'s figures (the maximum of the maxima).
    pub fn add(&mut self, other: &AsyncReading) {
        self.polls += other.polls;
        self.wall_ticks += other.wall_ticks;
        self.max_wall_ticks = self.max_wall_ticks.max(other.max_wall_ticks);
        self.cancelled += other.cancelled;
    }
}

/// A consistent reading of a [`Stack`](crate::local::stack::Stack), taken while its owner keeps recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// Every node, the root first; each after its parent, siblings oldest first.
    pub nodes: Vec<NodeReading>,
    /// The running calls, outermost first.
    pub running: Vec<OpenFrame>,
}
