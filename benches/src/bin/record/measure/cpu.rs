//! What CPU time per section (issue 16, the `cpu` option) costs, measured in this process: one read of the
//! thread's CPU clock (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, what such a section makes at its start and
//! at its end: a system call on kernels whose vDSO has no thread CPU clocks), next to one read of the
//! monotonic clock through the vDSO (`Instant::now`) for scale, and one read of the thread's context switches
//! (`getrusage(RUSAGE_THREAD)`, what it also makes with `PERFGRAPH_SWITCHES=on`). Alternating rounds (each first in every
//! other one), the best round of each.

use std::hint::black_box;
use std::time::Instant;

use perfgraph_benches::timing;

/// The figures, ns per read (best round).
pub struct CpuClock {
    /// One `Instant::now()` (`CLOCK_MONOTONIC` through the vDSO).
    pub monotonic_ns: f64,
    /// One thread-CPU-clock read; `None` where it cannot be read.
    pub thread_cpu_ns: Option<f64>,
    /// One read of the thread's context switches (`getrusage(RUSAGE_THREAD)`, `PERFGRAPH_SWITCHES=on`);
    /// `None` where they cannot be read.
    pub switches_ns: Option<f64>,
    /// Reads per round.
    pub reads: u64,
    /// Rounds of each.
    pub rounds: usize,
}

const READS: u64 = 200_000;
const ROUNDS: usize = 20;

impl CpuClock {
    /// Measures both (about a second).
    pub fn measure() -> CpuClock {
        let readable = perfgraph_core::__test_hooks::read_thread_cpu_ns().is_some();
        let switches = perfgraph_core::__test_hooks::read_thread_switches().is_some();
        let (mut monotonic, mut cpu, mut usage) = (f64::MAX, f64::MAX, f64::MAX);
        for round in 0..ROUNDS {
            // Each goes first in every other round.
            if round % 2 == 0 {
                monotonic = monotonic.min(monotonic_reads());
            }
            if readable {
                cpu = cpu.min(cpu_reads());
            }
            if switches {
                usage = usage.min(switches_reads());
            }
            if round % 2 == 1 {
                monotonic = monotonic.min(monotonic_reads());
            }
        }
        CpuClock {
            monotonic_ns: monotonic,
            thread_cpu_ns: readable.then_some(cpu),
            switches_ns: switches.then_some(usage),
            reads: READS,
            rounds: ROUNDS,
        }
    }
}

/// ns per `Instant::now()`.
fn monotonic_reads() -> f64 {
    timing::ns_per_call(READS, || {
        black_box(Instant::now());
    })
}

/// ns per read of the thread's context switches.
fn switches_reads() -> f64 {
    timing::ns_per_call(READS, || {
        black_box(perfgraph_core::__test_hooks::read_thread_switches());
    })
}

/// ns per thread-CPU-clock read.
fn cpu_reads() -> f64 {
    timing::ns_per_call(READS, || {
        black_box(perfgraph_core::__test_hooks::read_thread_cpu_ns());
    })
}
