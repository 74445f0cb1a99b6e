//! What a recording thread's open sections keep out of line, beside the open-frame table: how many of them
//! have flags (so an end without any stays on the fast path), the thread's CPU clock as each CPU-measuring
//! one opened ([`CpuFrames`], `cpu_frames.rs`), and the heap counters for the counting allocator. Owner-only
//! state, touched only by sections with flags.
//!
//! The heap counters: the thread's heap counters as each section opened ([`crate::base::heap`]), so that
//! its end gives the section's exact allocations, bytes, net growth and peak growth. Used only while the
//! allocator is installed; its stack of open frames runs alongside the open-frame table, one entry per open
//! section.
//!
//! Self figures: a closing section adds its inclusive allocations and bytes to its parent's `child_*`, and
//! its own self figures are its inclusive ones minus its children's. Peak: a section sets the thread's
//! peak to the heap at its start, so the counters' peak at its end is its own; it then gives back the larger
//! of that and the peak the enclosing section had seen, so the enclosing one's peak is still its own.

use crate::base::heap::{self, HeapCounts};
use crate::local::cpu_frames::CpuFrames;

/// The counters as one open section started, and its completed children's share so far.
#[derive(Debug, Clone, Copy)]
struct Frame {
    /// The thread's allocations and bytes at the section's start.
    allocs: u64,
    bytes: u64,
    /// Its completed children's allocations and bytes (inclusive).
    child_allocs: u64,
    child_bytes: u64,
    /// The thread's net heap at its start.
    live: i64,
    /// The thread's peak when it started (the enclosing section's peak so far).
    saved_peak: i64,
}

/// One call's figures, as it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapCall {
    /// Allocations made in the call and not in its children.
    pub self_allocs: u64,
    /// Bytes they asked for.
    pub self_bytes: u64,
    /// Net heap growth over the call, children included.
    pub growth: i64,
    /// The highest heap within the call above its start (0 if it never went above).
    pub peak: u64,
}

/// A thread's open sections' out-of-line state: the count of those with flags, their heap counters and
/// their CPU clocks. Invariant: while `on`, `frames` holds one entry per open section, innermost last (every
/// enter opens one, every close takes one).
#[derive(Debug)]
pub struct SideFrames {
    /// Whether the counting allocator was installed when the thread's state was made: fixed for the
    /// thread's life, so the frames always match the open sections.
    pub on: bool,
    /// Open sections whose frames have flags (exact memory, heap counters): while 0, a section's end needs
    /// not look at its frame's flags.
    pub flagged: u32,
    frames: Vec<Frame>,
    /// The open sections that measure their CPU time (owner-only state of flagged sections too).
    pub cpu: CpuFrames,
}

impl SideFrames {
    /// The state of a thread starting now: on if sections count heap figures ([`heap::counting`]).
    pub fn new() -> SideFrames {
        let on = heap::counting();
        SideFrames {
            on,
            flagged: 0,
            frames: Vec::with_capacity(if on { 64 } else { 0 }),
            cpu: CpuFrames::default(),
        }
    }

    /// Makes room for one more frame (perfgraph's own allocation: call it untracked).
    #[inline(always)]
    pub fn reserve(&mut self) {
        self.frames.reserve(1);
    }

    /// A section opened: takes the counters as they are now, and resumes counting as it was before
    /// [`heap::pause`] (`was`). Never allocates after [`reserve`](Self::reserve).
    #[inline(always)]
    pub fn open(&mut self, was: bool) {
        let c: HeapCounts = heap::resume_and_open(was);
        self.frames.push(Frame {
            allocs: c.allocs,
            bytes: c.alloc_bytes,
            child_allocs: 0,
            child_bytes: 0,
            live: c.live,
            saved_peak: c.peak,
        });
    }

    /// The innermost open section ends: its figures (`None` if no frame is open, which the invariant
    /// rules out).
    #[inline(always)]
    pub fn close(&mut self) -> Option<HeapCall> {
        let f = self.frames.pop()?;
        let c = heap::close(f.saved_peak);
        let allocs = c.allocs.wrapping_sub(f.allocs);
        let bytes = c.alloc_bytes.wrapping_sub(f.bytes);
        if let Some(parent) = self.frames.last_mut() {
            parent.child_allocs += allocs;
            parent.child_bytes += bytes;
        }
        Some(HeapCall {
            self_allocs: allocs.saturating_sub(f.child_allocs),
            self_bytes: bytes.saturating_sub(f.child_bytes),
            growth: c.live.wrapping_sub(f.live),
            peak: c.peak.saturating_sub(f.live).max(0) as u64,
        })
    }
}

impl Default for SideFrames {
    fn default() -> Self {
        SideFrames::new()
    }
}
