//! What a recording thread keeps of its open sections that measure their CPU time (the `cpu` option,
//! `PERFGRAPH_CPU=all`): the thread's CPU clock as each opened, and the CPU time of its completed children
//! that measured theirs. Owner-only state, like [`super::side_frames`]; its stack holds one entry per open
//! section with the [`CPU`](super::frames::CPU) flag, innermost last, so sections without it pay nothing.
//!
//! Self CPU: a closing section adds its CPU time to the innermost enclosing section that measures its own,
//! and its self CPU is its CPU time minus that of the sections measured inside it.

use crate::base::sys;
use crate::data::figures::CpuFigures;

/// One open section's CPU clock at its start, and its measured children's CPU time so far.
#[derive(Debug, Clone, Copy)]
struct Frame {
    /// The thread's CPU time as the section started, ns.
    start_ns: u64,
    /// The CPU time of the completed sections measured inside it (inclusive), ns.
    child_ns: u64,
}

/// A thread's open CPU-measuring sections. Invariant: one entry per open section with the `CPU` flag,
/// innermost last (each such enter opens one, each such close takes one).
#[derive(Debug, Default)]
pub struct CpuFrames {
    frames: Vec<Frame>,
}

/// The thread's CPU time now, ns (0 if it cannot be read): one `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`,
/// a system call on kernels whose vDSO lacks thread CPU clocks (docs/performance.md).
#[inline(always)]
pub fn now_ns() -> u64 {
    sys::own_cpu_ns().unwrap_or(0)
}

impl CpuFrames {
    /// A CPU-measuring section opened (its CPU clock read now). Allocates only at a depth of such sections
    /// never reached before (perfgraph's own allocation: call it untracked while the counting allocator
    /// counts).
    #[inline(always)]
    pub fn open(&mut self) {
        self.frames.push(Frame {
            start_ns: now_ns(),
            child_ns: 0,
        });
    }

    /// The innermost CPU-measuring section ends (its CPU clock read now): its figures, `None` if none is
    /// open (which the invariant rules out).
    #[inline(always)]
    pub fn close(&mut self) -> Option<CpuFigures> {
        self.close_at(now_ns())
    }

    /// [`close`](Self::close) with the CPU clock at `now_ns`.
    fn close_at(&mut self, now_ns: u64) -> Option<CpuFigures> {
        let f = self.frames.pop()?;
        let cpu_ns = now_ns.saturating_sub(f.start_ns);
        if let Some(parent) = self.frames.last_mut() {
            parent.child_ns += cpu_ns;
        }
        Some(CpuFigures {
            cpu_ns,
            self_cpu_ns: cpu_ns.saturating_sub(f.child_ns),
            ..CpuFigures::default()
        })
    }

    /// Opens a frame whose CPU clock read `start_ns`, for the tests.
    #[cfg(test)]
    fn open_at(&mut self, start_ns: u64) {
        self.frames.push(Frame {
            start_ns,
            child_ns: 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_cpu_is_inclusive_minus_measured_children() {
        let mut f = CpuFrames::default();
        f.open_at(1_000);
        f.open_at(1_100);
        f.open_at(1_150);
        let grandchild = f.close_at(1_170).unwrap();
        assert_eq!((grandchild.cpu_ns, grandchild.self_cpu_ns), (20, 20));
        let child = f.close_at(1_300).unwrap();
        assert_eq!((child.cpu_ns, child.self_cpu_ns), (200, 180));
        f.open_at(1_400);
        let second = f.close_at(1_450).unwrap();
        assert_eq!((second.cpu_ns, second.self_cpu_ns), (50, 50));
        let outer = f.close_at(2_000).unwrap();
        assert_eq!((outer.cpu_ns, outer.self_cpu_ns), (1_000, 750));
        assert!(f.close_at(3_000).is_none());
    }

    #[test]
    fn the_clock_reads() {
        let mut f = CpuFrames::default();
        f.open();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        let figures = f.close().unwrap();
        assert!(figures.cpu_ns > 0 && figures.self_cpu_ns == figures.cpu_ns);
    }
}
