//! What a section's start and end read: the clock, and resident memory (the background thread's last
//! sample, or a read now for the sections that read memory themselves, `PERFGRAPH_MEM_EXACT`).

use super::frames::EXACT_MEM;
use super::samples::Sample;
use crate::base::{clock, process, sys};

/// A section's start with `flags` ([`FrameData::flags`](super::frames::FrameData::flags)): the clock, and
/// resident memory (read now with [`EXACT_MEM`], else the last sample).
#[inline(always)]
pub(super) fn sample(flags: u8) -> Sample {
    // The memory first: an exact read (a system call, and the preemption it may meet) stays out of the
    // section's time, as it does at the section's end, which reads the clock before the memory.
    let mem_kb = mem_kb(flags & EXACT_MEM != 0);
    Sample {
        ticks: clock::now().0,
        mem_kb,
        flags,
    }
}

/// Resident memory, KiB: read now if `exact`, else the last sample.
#[inline(always)]
pub(super) fn mem_kb(exact: bool) -> u32 {
    if exact {
        exact_rss_kb()
    } else {
        process::rss_kb()
    }
}

/// Resident memory read now, in KiB (a `pread` of `/proc/self/statm` on Linux): what the sections that
/// read memory themselves (`PERFGRAPH_MEM_EXACT`) take at their start and end. The last sample if it cannot
/// be read, or with a test's fake figure.
#[cold]
#[inline(never)]
fn exact_rss_kb() -> u32 {
    if process::fake_rss() {
        return process::rss_kb();
    }
    match sys::rss_bytes() {
        Some(bytes) => (bytes / 1024).min(u32::MAX as u64) as u32,
        None => process::rss_kb(),
    }
}
