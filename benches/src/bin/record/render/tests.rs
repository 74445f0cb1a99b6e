//! The whole record rendered from canned data: every figure is written here by hand, so each printed
//! figure can be checked against what was "measured". `canned_record.md` is the expected text, byte for
//! byte. When it was made, every line of it was checked against text the `record` of before the split
//! (measuring and rendering in one file) wrote: its output for the same Criterion medians, short-process
//! figures and demo output, and for the header, memory and demo-timing sections the committed
//! `docs/performance.md`, whose figures the canned ones reproduce.

use perfgraph_benches::ids::{case, group, process};
use perfgraph_benches::layer_rounds::Round;

use super::render;
use crate::measure::Record;
use crate::measure::alloc_peers::AllocPeers;
use crate::measure::capture::{Capture, Flood};
use crate::measure::cpu::CpuClock;
use crate::measure::demo::{CpuRun, DemoFigures, FineLoop, PrintThreadCpu, ProcessTime};
use crate::measure::heap::Heap;
use crate::measure::layer::LayerRounds;
use crate::measure::layouts::Layouts;
use crate::measure::lifecycle::{Churn, Forks, Lifecycle, Limited};
use crate::measure::listen::Listen;
use crate::measure::machine::Machine;
use crate::measure::merge::Merge;
use crate::measure::results::Results;
use crate::measure::rss::Rss;
use crate::measure::trace::{Run, Rung, TraceFigures};
mod fixtures;

use fixtures::*;

#[test]
fn the_histogram_cost_is_with_minus_without_in_each_clock() {
    let doc = render(&canned());
    // 37.66 − 36.21 and 38.21 − 36.80: with a histogram minus without, same process and group.
    assert_eq!(
        line(&doc, "| wall time, 1 thread"),
        "| wall time, 1 thread | 37.66 | 36.21 | 1.45 | met |"
    );
    assert_eq!(
        line(&doc, "| thread CPU time, 2 threads"),
        "| thread CPU time, 2 threads | 38.21 | 36.80 | 1.41 | met |"
    );
    assert!(doc.contains(
        "`perfgraph merge` of 256 files of 1000 nodes each (release build, best of 3 runs): 1.23 s."
    ));
    let mut slow = canned();
    slow.results.insert(
        process::MAIN,
        group::ONE_THREAD,
        case::PERFGRAPH_NO_HISTOGRAM,
        33.0,
    );
    slow.merge = None;
    let doc = render(&slow);
    assert_eq!(
        line(&doc, "| wall time, 1 thread"),
        "| wall time, 1 thread | 37.66 | 33.00 | 4.66 | **missed** |"
    );
    assert!(doc.contains("`perfgraph merge`: not measured"));
}

#[test]
fn the_lifecycle_rows_check_the_targets() {
    let doc = render(&canned());
    // 27280 − 3380 = 23900 KiB of growth; 4.42 / 3.97 = 1.11.
    assert_eq!(
        line(&doc, "| peak resident KiB"),
        "| peak resident KiB | 27280 | 3380 | +23900 KiB | ≤ +32768 KiB: met |"
    );
    assert_eq!(
        line(&doc, "| wall s"),
        "| wall s | 4.42 | 3.97 | 1.11× | ≤ 1.3×: met |"
    );
    let mut slow = canned();
    slow.lifecycle.churn.as_mut().unwrap().on_s = 6.0;
    assert!(render(&slow).contains("≤ 1.3×: **missed**"));
    let mut text = String::new();
    super::lifecycle::write(&mut text, &Lifecycle::default());
    assert!(text.contains("Not measured"), "{text}");
}

#[test]
fn the_capture_rows_give_both_times_and_their_ratio() {
    let doc = render(&canned());
    assert_eq!(
        line(&doc, "| 1000 MB in 64 KiB writes"),
        "| 1000 MB in 64 KiB writes | 330 ms | 530 ms | 1.61 |"
    );
    assert_eq!(
        line(&doc, "| 100 MB in 100-byte lines"),
        "| 100 MB in 100-byte lines | 971 ms | 719 ms | 0.74 |"
    );
    let none = Capture { floods: Vec::new() };
    let mut text = String::new();
    super::capture::write(&mut text, &none);
    assert!(text.contains("Not measured"), "{text}");
}

/// The line of `doc` that starts with `start`.
fn line<'a>(doc: &'a str, start: &str) -> &'a str {
    doc.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{doc}"))
}

#[test]
fn the_whole_record_is_byte_for_byte_the_expected_text() {
    let expected = include_str!("canned_record.md");
    let actual = render(&canned());
    if actual != expected {
        let path = std::env::temp_dir().join("canned_record.actual.md");
        std::fs::write(&path, &actual).expect("write the actual text");
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .map_or("the lengths".to_owned(), |i| format!("line {}", i + 1));
        panic!(
            "the record differs from canned_record.md at {first}; the text is in {}",
            path.display()
        );
    }
}

#[test]
fn header_prints_the_machine_as_read() {
    let mut record = canned();
    record.machine.dirty = true;
    let doc = render(&record);
    assert!(doc.starts_with("# Performance record\n\n"));
    assert_eq!(
        line(&doc, "| Commit"),
        "| Commit | 5ee8f05d0f43 (with uncommitted changes) |"
    );
    assert_eq!(
        line(&doc, "| CPU"),
        "| CPU | Intel(R) Xeon(R) Processor, 2 cores available |"
    );
    assert_eq!(
        line(&doc, "| Clock"),
        "| Clock | perfgraph uses `tsc`; kernel clocksource `tsc` |"
    );
    assert_eq!(
        line(&doc, "| Load average"),
        "| Load average when the report was written | 1.80 1.52 1.70 |"
    );
}

#[test]
fn overhead_rows_print_the_medians_and_what_they_add() {
    let doc = render(&canned());
    // 37.66 − 1.23 = 36.43 added; 39.58 − 1.29 = 38.29; 39.58 / 37.66 = 1.05.
    assert_eq!(
        line(&doc, "| **perfgraph, enabled**"),
        "| **perfgraph, enabled** | `#[timed]`-style section, default settings | 37.7 | 36.4 | 1.00× | 39.6 | 38.3 | 1.00× | 1.05× |"
    );
    // Three sections per call: (114.71 − 3 × 1.23) / 3 = 37.01.
    assert_eq!(
        line(&doc, "| perfgraph, nested three deep"),
        "| perfgraph, nested three deep (per section) | three nested sections per call | 114.7 | 37.0 | 1.02× | 121.4 | 39.2 | 1.02× | 1.06× |"
    );
    // tracing-chrome subtracts its own process's empty call (1.19 and 1.88).
    assert_eq!(
        line(&doc, "| tracing 0.1 + `Registry` + tracing-chrome"),
        "| tracing 0.1 + `Registry` + tracing-chrome | writer `io::sink()`; separate process | 904.8 | 903.6 | 24.80× | 1183.0 | 1181.2 | 30.85× | 1.31× |"
    );
    assert_eq!(
        line(&doc, "| coarse-prof 0.2"),
        "| coarse-prof 0.2 | `profile!` | not measured | | | | | | |"
    );
    assert_eq!(
        line(&doc, "| perfgraph, compiled out (`time_section!`)"),
        "| perfgraph, compiled out (`time_section!`) | no `enabled` feature; separate binary | not measured | | | | | | |"
    );
}

#[test]
fn targets_give_their_verdicts() {
    let doc = render(&canned());
    assert_eq!(
        line(&doc, "| enabled ≤ 0.5 ×"),
        "| enabled ≤ 0.5 × a pair of `Instant::now()` | 36.4 ns vs 50.1 ns: 0.73× | **missed** |"
    );
    // The cheapest recording peer; puffin off, fastrace without a root span and time-graph off do not count.
    assert_eq!(
        line(&doc, "| enabled below every peer"),
        "| enabled below every peer (recording) | 36.4 ns; cheapest peer: time-graph 0.3, 50.9 ns | met |"
    );
    // 43.87 / 36.43 ns.
    assert_eq!(
        line(&doc, "| a timed future's poll"),
        "| a timed future's poll ≤ 1.5 × a synchronous section | 43.9 ns vs 36.4 ns: 1.20× | met |"
    );
    // The median round by ratio, the first: (204 − 150) / (37.3 − 1.3); the stacked ratios' median.
    assert_eq!(
        line(&doc, "| `TracingLayer` adds"),
        "| `TracingLayer` adds ≤ 2 × perfgraph's section on top of tracing + `Registry` | 54.0 ns vs 36.0 ns: 1.50× (median of 5 side-by-side rounds in 3 processes; stacked on a no-op layer: 2.00×) | met |"
    );
    assert_eq!(
        line(&doc, "| the same, median over"),
        "| the same, median over 12 short processes (each between 0.28 and 1.67 ns; see below) | 0.3 ns over an empty call | met |"
    );
    assert_eq!(
        line(&doc, "| the same in wall time"),
        "| the same in wall time | 38.3 ns vs 36.4 ns: +5.1% | met |"
    );
    // 1.034 − 0.768 ms.
    assert_eq!(
        line(&doc, "| process exit latency"),
        "| process exit latency added < 5 ms | 0.27 ms (median whole-process time, instrumented − compiled out) | met |"
    );
    assert!(!doc.contains("are not valid"));
    assert!(doc.contains(
        "so on this machine the target of 0.5× cannot be met by any design that reads the clock twice per section"
    ));
}

#[test]
fn a_disturbed_run_says_its_two_thread_wall_times_are_not_valid() {
    let mut record = canned();
    // The clock floors 1.3 and 1.25 times slower per thread on two threads.
    record.results.insert(
        process::MAIN,
        group::TWO_THREADS,
        case::INSTANT_PAIR,
        51.31 * 1.3,
    );
    record.results.insert(
        process::MAIN,
        group::TWO_THREADS,
        case::RAW_CLOCK_PAIR,
        29.14 * 1.25,
    );
    let doc = render(&record);
    assert!(
        line(&doc, "| the same in wall time").ends_with("| not valid in this run (see below) |")
    );
    assert!(doc.contains(
        "**The wall-time two-thread figures of this run are not valid:** the floors themselves ran\n1.30× slower"
    ));
}

#[test]
fn a_cheap_clock_leaves_room_under_the_target() {
    let mut record = canned();
    record.results.insert(
        process::MAIN,
        group::ONE_THREAD,
        case::RAW_CLOCK_PAIR,
        11.23,
    );
    let doc = render(&record);
    // 10.0 of 36.43 ns; 10.0 / 50.08 = 0.20.
    assert!(
        doc.contains(
            "With `tsc`, that pair alone costs 10.0 ns here\n(27% of perfgraph's 36.4 ns)"
        )
    );
    assert!(doc.contains(
        "are 0.20× a pair of `Instant::now()` here (10.0 ns vs 50.1 ns; `Instant::now()` reads the same counter \
         through the vDSO and scales it), so the clock leaves room under the target of 0.5×; perfgraph's \
         bookkeeping adds 26.4 ns on top of the clock.\n"
    ));
}

#[test]
fn demo_figures_are_printed_as_measured() {
    let doc = render(&canned());
    assert_eq!(
        line(&doc, "| instrumented, default settings | 408"),
        "| instrumented, default settings | 408.0 | +82.7% |"
    );
    assert_eq!(
        line(&doc, "| `--fine-secs 5`"),
        "| `--fine-secs 5`: the fine-grained loop | 13.0 | 5.00 | 2.60 ms/s | 0.260% |"
    );
    assert_eq!(
        line(&doc, "| **added by perfgraph**"),
        "| **added by perfgraph** | **0.27** | 0.24 |"
    );
    // The demo's section ends with its last table, then the capture's section follows.
    assert!(doc.contains("| **added by perfgraph** | **0.27** | 0.24 |\n\n## Capture"));
}

#[test]
fn without_the_demo_the_record_says_so() {
    let mut record = canned();
    record.demo = None;
    let doc = render(&record);
    assert_eq!(
        line(&doc, "| process exit latency"),
        "| process exit latency added < 5 ms | — | not measured |"
    );
    assert!(doc.contains(
        "## Demo measurements\n\nNot measured: the demo binaries do not support `--fine-iters` yet.\n\n\
         ## Capture"
    ));
    assert!(!doc.contains("## Whole-process time"));
}

#[test]
fn the_heap_rows_give_the_added_cost_and_the_read() {
    let doc = render(&canned());
    // 14.54 − 13.84 = 0.70.
    assert_eq!(
        line(&doc, "| `CountingAllocator::new(System)`"),
        "| `CountingAllocator::new(System)`: alloc + dealloc of 64 B | 14.54 | 0.70 |"
    );
    assert_eq!(
        line(&doc, "| one exact resident-memory read"),
        "| one exact resident-memory read | 1412 | — |"
    );
    let mut unreadable = canned();
    unreadable.heap.rss_read_ns = None;
    assert!(
        render(&unreadable).contains("| one exact resident-memory read | not readable here | — |")
    );
}

#[test]
fn the_cpu_rows_give_one_read_and_a_sections_two() {
    let doc = render(&canned());
    assert_eq!(
        line(&doc, "| one thread-CPU-clock read"),
        "| one thread-CPU-clock read | 312.4 |"
    );
    // 2 × 312.44 = 624.88.
    assert_eq!(
        line(&doc, "| added to a section with `cpu`"),
        "| added to a section with `cpu` (two reads) | 624.9 |"
    );
    let mut unreadable = canned();
    unreadable.cpu.thread_cpu_ns = None;
    let doc = render(&unreadable);
    assert!(doc.contains("| one thread-CPU-clock read | not readable here |"));
    assert!(!doc.contains("| added to a section with `cpu`"));
}

#[test]
fn the_layer_target_is_the_median_rounds_and_says_when_missing() {
    let mut slow = canned();
    // Three more rounds like the slow one: 4 of 8 above 2, and the median is the upper middle round.
    let rounds = &mut slow.layer.as_mut().unwrap().rounds;
    let outlier = rounds[3];
    rounds.extend([outlier; 3]);
    let doc = render(&slow);
    assert_eq!(
        line(&doc, "| `TracingLayer` adds"),
        "| `TracingLayer` adds ≤ 2 × perfgraph's section on top of tracing + `Registry` | 147.0 ns vs 36.0 ns: 4.08× (median of 8 side-by-side rounds in 3 processes; stacked on a no-op layer: 4.44×) | **missed** |"
    );
    assert!(doc.contains("4 of 8 above 2.0."), "{doc}");
    let mut old = canned();
    old.layer = None;
    let doc = render(&old);
    assert_eq!(
        line(&doc, "| `TracingLayer` adds"),
        "| `TracingLayer` adds ≤ 2 × perfgraph's section on top of tracing + `Registry` | — | not measured |"
    );
    assert!(doc.contains(
        "### `TracingLayer` on tracing + `Registry`, side by side\n\nNot measured in this run"
    ));
}
