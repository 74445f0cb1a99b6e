//! The cost of CPU time per section (the `cpu` option): one thread-CPU-clock read, two per section.

use std::fmt::Write as _;

use crate::measure::cpu::CpuClock;

/// The section: the two reads, and what a section with `cpu` adds.
pub fn write(doc: &mut String, c: &CpuClock) {
    let _ = writeln!(
        doc,
        "\n## CPU time per section\n\n\
         Measured in `record`'s own process: {reads} reads of the thread's CPU clock \
         (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, what a section with the `cpu` option, or every section \
         with `PERFGRAPH_CPU=all`, makes at its start and at its end) and {reads} of the monotonic clock through \
         the vDSO (`Instant::now`, for scale), and {reads} reads of the thread's context switches \
         (`getrusage(RUSAGE_THREAD)`, what such a section also makes with `PERFGRAPH_SWITCHES=on`); {rounds} \
         rounds of each (alternated), the best round of each.\n\n\
         | Read | ns |\n|---|---:|\n\
         | `Instant::now()` (`CLOCK_MONOTONIC`, vDSO) | {:.1} |",
        c.monotonic_ns,
        reads = c.reads,
        rounds = c.rounds,
    );
    match c.thread_cpu_ns {
        Some(ns) => {
            let _ = writeln!(
                doc,
                "| one thread-CPU-clock read | {ns:.1} |\n\
                 | added to a section with `cpu` (two reads) | {:.1} |",
                2.0 * ns
            );
        }
        None => {
            let _ = writeln!(doc, "| one thread-CPU-clock read | not readable here |");
        }
    }
    match c.switches_ns {
        Some(ns) => {
            let _ = writeln!(
                doc,
                "| one read of the thread's context switches (`getrusage(RUSAGE_THREAD)`) | {ns:.1} |\n\
                 | added to such a section by `PERFGRAPH_SWITCHES=on` (two reads) | {:.1} |",
                2.0 * ns
            );
        }
        None => {
            let _ = writeln!(
                doc,
                "| one read of the thread's context switches | not readable here |"
            );
        }
    }
}
