//! A report's figures by section name, every call path and thread summed, as the metrics exports give
//! them (Prometheus's text, [`prometheus`](super::prometheus); OTLP, [`otlp`](super::otlp)): one series per
//! section, at most [`MAX_SECTIONS`], and one histogram scheme ([`BOUNDS_NS`]) for both.
//!
//! A section that recurses counts its calls on every path, but its inclusive figures (time, allocations,
//! CPU time) on its outermost calls only, so nothing is counted twice.

use std::collections::HashMap;

use crate::base::buckets;
use crate::data::Report;

/// Sections exported at most: the heaviest by total time.
pub const MAX_SECTIONS: usize = 500;

/// The duration histograms' upper bounds, ns: 1, 2.5 and 5 of every power of ten from 1 µs to 10 s
/// (`+Inf` after). perfgraph's own histogram is finer (log-linear, 64 buckets per power of two): each of
/// its buckets counts under the first bound at or above its midpoint, so a call within 1.6% of a bound
/// may land on either side of it, and the histogram's sum is the sum of those midpoints.
pub const BOUNDS_NS: [u64; 22] = [
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// The process's own figures, next to the sections'.
#[derive(Debug, Clone, Copy)]
pub struct Process {
    /// Resident memory, as last sampled.
    pub rss_bytes: u64,
    /// The heap (bytes allocated and not freed), with the counting allocator.
    pub heap_bytes: Option<i64>,
    /// Live threads that recorded a section.
    pub threads: usize,
}

/// One section's figures, by name.
#[derive(Debug, Clone, PartialEq)]
pub struct Section<'a> {
    pub name: &'a str,
    /// Calls started.
    pub calls: u64,
    /// Time in the section, children included (outermost calls of a recursion only), ns.
    pub total_ns: u64,
    /// Time in the section not in its children, ns.
    pub self_ns: u64,
    /// Completed calls per bound of [`BOUNDS_NS`] and `+Inf` (not cumulative).
    pub counts: [u64; BOUNDS_NS.len() + 1],
    /// The sum of the completed calls' durations (bucket midpoints), ns.
    pub sum_ns: u128,
    /// The shortest and longest completed call, ns (`None` without one).
    pub min_max_ns: Option<(u64, u64)>,
    /// Heap allocations and their bytes, children included (the counting allocator; 0 without it).
    pub allocs: u64,
    pub alloc_bytes: u64,
    /// CPU time, children included, for a section that measured it.
    pub cpu_ns: Option<u64>,
}

impl Section<'_> {
    /// Completed calls (the histogram's count).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub fn completed(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// The threads that recorded a section and are alive at `report`'s snapshot: the `threads` gauge of both
/// exports. At exit (`exiting`) the main thread counts as alive though its exit hook has run: `exit()` runs
/// the main thread's thread-local destructors (which mark it exited) on that very thread, before the last
/// export.
pub fn live_threads(report: &Report, exiting: bool) -> usize {
    report
        .threads
        .iter()
        .filter(|t| !t.exited || (exiting && t.is_main))
        .count()
}

/// The sections of `report`'s tree by name, heaviest (total time) first, and how many more there were
/// past [`MAX_SECTIONS`].
pub fn sections(report: &Report) -> (Vec<Section<'_>>, usize) {
    let nodes = &report.tree.nodes;
    let mut out: Vec<Section> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for n in nodes.iter().skip(1) {
        let k = *at.entry(n.name).or_insert_with(|| {
            out.push(Section {
                name: n.name,
                calls: 0,
                total_ns: 0,
                self_ns: 0,
                counts: [0; BOUNDS_NS.len() + 1],
                sum_ns: 0,
                min_max_ns: None,
                allocs: 0,
                alloc_bytes: 0,
                cpu_ns: None,
            });
            out.len() - 1
        });
        let s = &mut out[k];
        s.calls += n.calls;
        s.self_ns += n.self_ns;
        // Inclusive figures on outermost calls only: no ancestor of the same name.
        let mut up = n.parent;
        let mut nested = false;
        while let Some(p) = up.filter(|&p| p != 0) {
            if nodes[p].name == n.name {
                nested = true;
                break;
            }
            up = nodes[p].parent;
        }
        if !nested {
            s.total_ns += n.total_ns;
            s.allocs += n.allocs;
            s.alloc_bytes += n.alloc_bytes;
            if let Some(cpu) = n.cpu {
                s.cpu_ns = Some(s.cpu_ns.unwrap_or(0) + cpu.cpu_ns);
            }
        }
        let mut any = false;
        for &(bucket, calls) in &n.latency.buckets {
            let mid = buckets::middle(bucket as usize).clamp(n.latency.min_ns, n.latency.max_ns);
            let b = BOUNDS_NS.partition_point(|&bound| bound < mid);
            s.counts[b] += calls;
            s.sum_ns += mid as u128 * calls as u128;
            any |= calls > 0;
        }
        if any {
            let (lo, hi) = (n.latency.min_ns, n.latency.max_ns);
            s.min_max_ns = Some(
                s.min_max_ns
                    .map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))),
            );
        }
    }
    out.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(b.name)));
    let left_out = out.len().saturating_sub(MAX_SECTIONS);
    out.truncate(MAX_SECTIONS);
    (out, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CallNode, CallTree, RunInfo, ThreadSnapshot};

    #[test]
    fn live_threads_at_exit_count_the_main_thread() {
        let tree = || CallTree::new(vec![CallNode::new(0, "(root)", 0, 0, None)]);
        // At exit: main's exit hook has run (in `exit()`), a worker was joined, another still runs.
        let mut main = ThreadSnapshot::new(0, "main", tree());
        main.is_main = true;
        main.exited_ns = Some(5);
        let mut joined = ThreadSnapshot::new(1, "worker", tree());
        joined.exited_ns = Some(3);
        let running = ThreadSnapshot::new(2, "worker#2", tree());
        let report = Report::build(RunInfo::new("demo", "tsc", 10), &[main, joined, running]);
        assert_eq!(live_threads(&report, true), 2);
        // While the program runs, an exited main thread (`pthread_exit`) is not alive.
        assert_eq!(live_threads(&report, false), 1);
    }
}
