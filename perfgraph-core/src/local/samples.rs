//! What a section's caller and its [`Stack`](super::stack::Stack) give each other: the clock and memory
//! figures the caller takes at the section's start and end, and what the stack tells it of the section as
//! it closes it. Plain values: the stack reads no clock and no memory itself (so `tests/loom_snapshot.rs`
//! can model-check it).

use crate::base::registry::SectionId;
use crate::local::latency::Block;

/// A clock reading and the resident-memory figure, as the caller takes them when a section opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Clock ticks.
    pub ticks: u64,
    /// Resident memory, KiB.
    pub mem_kb: u32,
    /// What the section takes out of line at its end
    /// ([`FrameData::flags`](crate::local::frames::FrameData::flags): 0 for nothing, the fast path).
    pub flags: u8,
}

/// What the caller learns of a section as it closes it, to take its end figures
/// ([`Stack::exit`](super::stack::Stack::exit)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// The call's node (its index in the tree, for [`Stack::side_of`](super::stack::Stack::side_of)).
    pub node: u32,
    /// Its [`Sample::flags`].
    pub flags: u8,
    /// Its section: with `start`, what names the call in a record of its own
    /// ([`Record::cpu_figures`](crate::local::record::Record::cpu_figures)).
    pub section: SectionId,
    /// Its start, ticks.
    pub start: u64,
}

/// The caller's figures at a section's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndSample {
    /// Resident memory, KiB.
    pub mem_kb: u32,
    /// The section's exact heap growth passed live print's memory limit (goes into its record).
    pub heap_alert: bool,
}

/// One section just closed, as the caller needs it to decide whether to wake the background thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    /// The depth it was open at (0 outermost).
    pub depth: u32,
    /// Resident-memory change over the call, KiB.
    pub grown_kb: i64,
    /// Its [`EndSample::heap_alert`].
    pub heap_alert: bool,
    /// Its duration, clock ticks.
    pub elapsed: u64,
    /// Its call path's histogram if it has one and the call's duration did not go into it (closed with
    /// `LATENCY` false: see [`Stack::exit_as`](super::stack::Stack::exit_as)); null otherwise.
    pub unrecorded: *const Block,
}
