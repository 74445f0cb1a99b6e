//! A thread's open-frame table: the sections it has open now, outermost first, readable by any thread while
//! the owner keeps entering and leaving sections. The one owner of the frame's word layout.
//!
//! Frame `d` is a seqlocked [`Slot`] (its sequence number: the owner's enter count when it opened) holding
//! the call's [`FrameData`] and the time of its completed children so far (`child_ticks`, amended in place,
//! so a reader gets it from the same call as the rest of the frame), plus the memory change of those
//! children, which only the owner reads. The depth is published with a `Release` store after the frame is
//! written ([`FrameTable::publish_depth`]) and read with `Acquire` by [`FrameTable::read`], before and after
//! it reads the frames. It reads them innermost first: a frame read after its child (whose slot read
//! acquired the child's write, made while the child's parent was open) is that parent or a newer call at
//! its depth, whose sequence number is greater than the child's. So every frame whose sequence number is
//! less than the next one's is that one's parent; the read keeps the outermost run of such frames, cut to
//! the second depth. A reader gets a consistent prefix of the stack as it was at some instant (reading
//! outermost first, it could pair a parent with a child of a newer call at the parent's depth).
//! `tests/loom_frames.rs` model-checks this file itself against loom's atomics.
//!
//! This file depends only on [`crate::base::atomics`] and the ring's [`Slot`], so the model can compile it.

use crossbeam_utils::CachePadded;

use crate::base::atomics::atomic::{AtomicI64, AtomicPtr, AtomicU32, Ordering};
use crate::local::ring::{Slot, WORDS};

/// Open frames visible to other threads per thread; deeper ones are timed and aggregated all the same.
pub const PUBLIC_DEPTH: usize = 64;

/// What an open frame records when it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameData {
    /// The section.
    pub section: u32,
    /// Clock ticks at its start.
    pub start: u64,
    /// Its call-tree node's index.
    pub node: u32,
    /// Resident memory at its start, KiB.
    pub mem_start_kb: u32,
    /// What the section takes out of line at its end ([`EXACT_MEM`], [`HEAP`], [`CPU`]; 0 for none, the
    /// fast path), in the slot's first word above the section id.
    pub flags: u8,
}

/// [`FrameData::flags`]: the section reads resident memory itself at its boundaries (`PERFGRAPH_MEM_EXACT`)
/// rather than the sampled figure.
pub const EXACT_MEM: u8 = 1;
/// [`FrameData::flags`]: the section takes the counting allocator's counters (a heap frame is open for it).
pub const HEAP: u8 = 2;
/// [`FrameData::flags`]: the section reads the thread's CPU clock at its start and end (the `cpu` option,
/// `PERFGRAPH_CPU=all`; a CPU frame is open for it).
pub const CPU: u8 = 4;
/// [`FrameData::flags`]: causal profiling is on (`PERFGRAPH_CAUSAL`): the section's start and end go to
/// [`causal`](super::causal), which delays the thread or counts its time.
pub const CAUSAL: u8 = 8;

/// The slot word that holds the frame's `child_ticks` (0 when the frame opens).
const CHILD_TICKS: usize = 3;

/// The slot word that holds the frame's `start`.
const START: usize = 1;

impl FrameData {
    /// The slot's words when the frame opens: `[section | flags << 32, start, node | mem_start_kb << 32,
    /// child_ticks = 0]`.
    #[inline(always)]
    fn to_words(self) -> [u64; WORDS] {
        [
            self.section as u64 | (self.flags as u64) << 32,
            self.start,
            self.node as u64 | (self.mem_start_kb as u64) << 32,
            0,
        ]
    }

    /// Decodes [`to_words`](FrameData::to_words) (but for `child_ticks`).
    #[inline(always)]
    fn from_words(w: [u64; WORDS]) -> FrameData {
        FrameData {
            section: w[0] as u32,
            start: w[1],
            node: w[2] as u32,
            mem_start_kb: (w[2] >> 32) as u32,
            flags: (w[0] >> 32) as u8,
        }
    }
}

/// A consistent view of one open section, as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFrame {
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Enter sequence number on its thread: identifies this call.
    pub seq: u64,
    /// The section.
    pub section: u32,
    /// Clock ticks at its start.
    pub start: u64,
    /// Its call-tree node.
    pub node: u32,
    /// Resident memory at its start, KiB.
    pub mem_start_kb: u32,
    /// Time of its completed children so far, ticks.
    pub child_ticks: u64,
}

/// What a reader knows of what is open inside the innermost frame it read ([`FrameTable::read_inside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inside {
    /// Nothing, by the second depth load.
    Nothing,
    /// Its child, which the second depth load cut off: it closed during the read.
    Closed(OpenFrame),
    /// A frame the first depth load counted but the read could not get (being rewritten, or past the
    /// table): something runs inside, since a moment the reader does not know.
    Unknown,
}

/// One open section in the table: 64 bytes, one cache line, so a frame's address is a shift of its depth.
///
/// Invariant: `slot` holds a [`FrameData`]'s words with the owner's enter sequence number, its word
/// [`CHILD_TICKS`] the time of this call's completed children so far; `child_mem_kb` is their memory change
/// and `owner` a pointer the owner keeps with the frame (its call-tree node), both read by the owner only.
/// Only the owning thread writes any of it.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Frame {
    slot: Slot,
    child_mem_kb: AtomicI64,
    owner: AtomicPtr<()>,
}

// The slot (40 bytes), the memory change and the owner's pointer fill one 64-byte line (loom's atomics, in
// the model, are larger).
const _: () = assert!(crate::base::atomics::MODEL || std::mem::size_of::<Frame>() == 64);

/// The table: `frames` for the outermost open sections, and how many are open.
///
/// Invariant: only the owning thread writes; `depth` (on a cache line of its own, which the hot path
/// writes and readers only load) counts open sections, public or deeper.
#[derive(Debug)]
pub struct FrameTable {
    frames: Box<[Frame]>,
    depth: CachePadded<AtomicU32>,
}

impl FrameTable {
    /// A table showing the outermost `public` open frames.
    pub fn new(public: usize) -> FrameTable {
        FrameTable {
            frames: (0..public).map(|_| Frame::default()).collect(),
            depth: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// How many frames the table holds (the open sections it shows).
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Owner only: writes the frame at `depth` (the first call of a new open section), if it is public.
    /// Returns `false` for a frame too deep for the table, which the owner keeps privately.
    #[inline(always)]
    pub fn open(&self, depth: u32, seq: u64, data: FrameData, owner: *const ()) -> bool {
        let Some(frame) = self.frames.get(depth as usize) else {
            return false;
        };
        frame.child_mem_kb.store(0, Ordering::Relaxed);
        frame.owner.store(owner.cast_mut(), Ordering::Relaxed);
        // `child_ticks` starts at 0 inside the seqlocked write: a reader never pairs it with another call.
        frame.slot.write(seq, data.to_words());
        true
    }

    /// Owner only: publishes `depth` open sections. Called after [`open`](FrameTable::open) and after a
    /// section's end record went out, so a reader that sees the depth sees the frames.
    #[inline(always)]
    pub fn publish_depth(&self, depth: u32) {
        // Release: pairs with the Acquire loads in `read`; a reader that sees the depth sees the frame (and,
        // for a lower depth, the end record pushed before it).
        self.depth.store(depth, Ordering::Release);
    }

    /// Owner only: the public frame at `depth` as written, with its completed children's time and memory,
    /// and the pointer the owner kept with it.
    #[inline(always)]
    pub fn peek(&self, depth: u32) -> Option<(FrameData, u64, i64, *const ())> {
        let frame = self.frames.get(depth as usize)?;
        let words = frame.slot.peek();
        Some((
            FrameData::from_words(words),
            words[CHILD_TICKS],
            frame.child_mem_kb.load(Ordering::Relaxed),
            frame.owner.load(Ordering::Relaxed),
        ))
    }

    /// Owner only: the start ticks of the public frame at `depth` (the one word of [`peek`](Self::peek)).
    #[inline(always)]
    pub fn start_at(&self, depth: u32) -> Option<u64> {
        Some(self.frames.get(depth as usize)?.slot.peek_word(START))
    }

    /// Owner only: adds a completed child's time and memory change to the public frame at `depth`.
    /// Returns `false` for a frame too deep for the table.
    #[inline(always)]
    pub fn add_child(&self, depth: u32, ticks: u64, mem_kb: i64) -> bool {
        let Some(frame) = self.frames.get(depth as usize) else {
            return false;
        };
        // Single writer: plain load and store, never a read-modify-write. In place in the slot, so a reader
        // that accepts the frame gets this call's `child_ticks`, older or newer (see `Slot::amend`).
        frame
            .slot
            .amend(CHILD_TICKS, frame.slot.peek_word(CHILD_TICKS) + ticks);
        frame.child_mem_kb.store(
            frame.child_mem_kb.load(Ordering::Relaxed) + mem_kb,
            Ordering::Relaxed,
        );
        true
    }

    /// The sections open now, outermost first: a consistent stack (up to the table's size) even while the
    /// owner keeps entering and leaving sections.
    pub fn read(&self) -> Vec<OpenFrame> {
        self.read_inside().0
    }

    /// [`read`](FrameTable::read), and what is open inside the innermost frame it returns. A snapshot
    /// needs it to subtract that child's time from the innermost frame's running time: the frame's
    /// `child_ticks`, read before the child closed, may not include it.
    pub fn read_inside(&self) -> (Vec<OpenFrame>, Inside) {
        // Acquire: pairs with the Release store in `publish_depth`; the frames below it are written.
        let depth = self.depth.load(Ordering::Acquire) as usize;
        let public = depth.min(self.frames.len());
        // Innermost first (see the module docs); `inward` ends up the outermost run of frames each the parent
        // of the next, innermost first.
        let mut inward: Vec<OpenFrame> = Vec::with_capacity(public);
        for (d, frame) in self.frames.iter().enumerate().take(public).rev() {
            let Some((seq, w)) = frame.slot.read_latest() else {
                inward.clear(); // being rewritten: the frames inside it are of no stack we can name
                continue;
            };
            // Not older than its child: a newer call at this depth, so the child is of an older stack.
            if inward.last().is_some_and(|c| c.seq <= seq) {
                inward.clear();
            }
            let data = FrameData::from_words(w);
            inward.push(OpenFrame {
                depth: d as u32,
                seq,
                section: data.section,
                start: data.start,
                node: data.node,
                mem_start_kb: data.mem_start_kb,
                child_ticks: w[CHILD_TICKS],
            });
        }
        inward.reverse();
        let mut out = inward;
        // Acquire: pairs with the Release store in `publish_depth`; frames popped meanwhile are not open.
        let now_depth = self.depth.load(Ordering::Acquire) as usize;
        let inside = if let Some(&cut) = out.get(now_depth) {
            Inside::Closed(cut)
        } else if out.len() < depth {
            Inside::Unknown
        } else {
            Inside::Nothing
        };
        out.truncate(now_depth);
        (out, inside)
    }
}
