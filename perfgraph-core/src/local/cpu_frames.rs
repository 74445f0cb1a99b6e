//! What a recording thread keeps of its open sections that measure their CPU time (the `cpu` option,
//! `PERFGRAPH_CPU=all`): the thread's CPU clock as each opened, and the CPU time of its completed children
//! that measured theirs. Owner-only state, like [`super::side_frames`]; its stack holds one entry per open
//! section with the [`CPU`](super::frames::CPU) flag, innermost last, so sections without it pay nothing.
//!
//! Self CPU: a closing section adds its CPU time to the innermost enclosing section that measures its own,
//! and its self CPU is its CPU time minus that of the sections measured inside it.
//!
//! With `PERFGRAPH_SWITCHES=on` ([`count_switches`]) each also reads the thread's context switches at its
//! start and end (`getrusage(RUSAGE_THREAD)`, one more system call each).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::sys;
use crate::data::figures::CpuFigures;

/// Whether CPU-measuring sections also count context switches (`PERFGRAPH_SWITCHES=on`), set once at the
/// start.
static SWITCHES: AtomicBool = AtomicBool::new(false);

/// Sets whether CPU-measuring sections count the thread's context switches too.
pub fn count_switches(on: bool) {
    // Relaxed: a plain setting; a section opened before it reads it without, and closes without.
    SWITCHES.store(on, Ordering::Relaxed);
}

/// One open section's CPU clock at its start, and its measured children's CPU time so far.
#[derive(Debug, Clone, Copy)]
struct Frame {
    /// The thread's CPU time as the section started, ns.
    start_ns: u64,
    /// The CPU time of the completed sections measured inside it (inclusive), ns.
    child_ns: u64,
    /// The thread's context switches as the section started, `(voluntary, involuntary)`, if it counts them.
    start_switches: Option<(u64, u64)>,
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
    /// counts). Out of line: it makes system calls anyway, and inline it made a timed future's `poll` too
    /// big for the compiler to inline into the program's code (a poll without `cpu` cost 21 instructions
    /// more under callgrind).
    #[inline(never)]
    pub fn open(&mut self) {
        // Relaxed: see `count_switches`.
        let start_switches = match SWITCHES.load(Ordering::Relaxed) {
            true => sys::own_switches(),
            false => None,
        };
        self.frames.push(Frame {
            start_ns: now_ns(),
            child_ns: 0,
            start_switches,
        });
    }

    /// The innermost CPU-measuring section ends (its CPU clock read now): its figures, `None` if none is
    /// open (which the invariant rules out). Out of line, as [`open`](Self::open).
    #[inline(never)]
    pub fn close(&mut self) -> Option<CpuFigures> {
        let counts = self.frames.last()?.start_switches.is_some();
        let switches = if counts { sys::own_switches() } else { None };
        self.close_at(now_ns(), switches)
    }

    /// [`close`](Self::close) with the CPU clock at `now_ns` and the context switches at `switches`.
    fn close_at(&mut self, now_ns: u64, switches: Option<(u64, u64)>) -> Option<CpuFigures> {
        let f = self.frames.pop()?;
        let cpu_ns = now_ns.saturating_sub(f.start_ns);
        if let Some(parent) = self.frames.last_mut() {
            parent.child_ns += cpu_ns;
        }
        let (voluntary, involuntary) = match (f.start_switches, switches) {
            (Some((v0, i0)), Some((v1, i1))) => (v1.saturating_sub(v0), i1.saturating_sub(i0)),
            _ => (0, 0),
        };
        Some(CpuFigures {
            cpu_ns,
            self_cpu_ns: cpu_ns.saturating_sub(f.child_ns),
            voluntary_switches: voluntary,
            involuntary_switches: involuntary,
        })
    }

    /// Opens a frame whose CPU clock read `start_ns`, for the tests.
    #[cfg(test)]
    fn open_at(&mut self, start_ns: u64) {
        self.frames.push(Frame {
            start_ns,
            child_ns: 0,
            start_switches: Some((10, 20)),
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
        let grandchild = f.close_at(1_170, None).unwrap();
        assert_eq!((grandchild.cpu_ns, grandchild.self_cpu_ns), (20, 20));
        let child = f.close_at(1_300, None).unwrap();
        assert_eq!((child.cpu_ns, child.self_cpu_ns), (200, 180));
        f.open_at(1_400);
        let second = f.close_at(1_450, None).unwrap();
        assert_eq!((second.cpu_ns, second.self_cpu_ns), (50, 50));
        let outer = f.close_at(2_000, None).unwrap();
        assert_eq!((outer.cpu_ns, outer.self_cpu_ns), (1_000, 750));
        assert!(f.close_at(3_000, None).is_none());
    }

    #[test]
    fn switches_are_the_change_over_the_call() {
        let mut f = CpuFrames::default();
        f.open_at(0);
        let c = f.close_at(5, Some((13, 21))).unwrap();
        assert_eq!((c.voluntary_switches, c.involuntary_switches), (3, 1));
        f.open_at(0);
        let c = f.close_at(5, None).unwrap();
        assert_eq!((c.voluntary_switches, c.involuntary_switches), (0, 0));
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
