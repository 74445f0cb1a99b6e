//! The latency histograms' section: what a histogram adds to one section (the same `#[timed]` leaf on a
//! call path with one and on a path without, side by side in the main bench process), against the issue's
//! target; and `perfgraph merge` of many files.

use std::fmt::Write as _;

use perfgraph_benches::ids::{case, group, process};

use super::fmt;
use crate::measure::merge::{self, Merge};
use crate::measure::results::Results;

/// What the histogram may add per section, ns.
const TARGET_NS: f64 = 3.0;

/// The section.
pub fn write(doc: &mut String, r: &Results, merge: Option<&Merge>) {
    let _ = writeln!(
        doc,
        "## Latency histograms\n\n\
         What the latency histogram adds to a section: the `perfgraph/enabled` leaf next to the same leaf\n\
         function on a call path made without a histogram (`perfgraph/no_histogram`: the bench hook\n\
         `__test_hooks::without_latency_histograms`, as for a path past a thread's first 1,023). Criterion\n\
         medians of the same process (*main*), ns per call.\n\n\
         | Clock | with a histogram | without | the histogram's cost | target ≤ {TARGET_NS} ns |\n\
         |---|---:|---:|---:|---|"
    );
    for (label, g) in [
        ("wall time, 1 thread", group::ONE_THREAD),
        ("wall time, 2 threads", group::TWO_THREADS),
        ("thread CPU time, 1 thread", group::CPU_ONE_THREAD),
        ("thread CPU time, 2 threads", group::CPU_TWO_THREADS),
    ] {
        let with = r.get(process::MAIN, g, case::PERFGRAPH_ENABLED);
        let without = r.get(process::MAIN, g, case::PERFGRAPH_NO_HISTOGRAM);
        let cost = with.zip(without).map(|(a, b)| a - b);
        let _ = writeln!(
            doc,
            "| {label} | {} | {} | {} | {} |",
            fmt::ns2(with),
            fmt::ns2(without),
            fmt::ns2(cost),
            fmt::check(cost.map(|c| c <= TARGET_NS)),
        );
    }
    doc.push('\n');
    match merge {
        Some(m) => {
            let _ = writeln!(
                doc,
                "`perfgraph merge` of {} files of {} nodes each (release build, best of {} runs): {:.2} s.\n",
                merge::FILES,
                merge::NODES,
                merge::RUNS,
                m.best_s
            );
        }
        None => doc.push_str(
            "`perfgraph merge`: not measured (`record` was not given the command, `--perfgraph`).\n\n",
        ),
    }
}
