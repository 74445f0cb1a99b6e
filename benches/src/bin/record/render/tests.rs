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

/// A case's Criterion medians (ns per call): process, case, one thread, two threads, and for the floors
/// and perfgraph the same in thread CPU time.
type Medians = (&'static str, &'static str, f64, f64, Option<(f64, f64)>);

/// The canned medians. coarse-prof and the compiled-out `time_section!` are left out: their rows must say
/// "not measured".
#[rustfmt::skip]
const MEDIANS: &[Medians] = &[
    (process::MAIN, case::EMPTY_CALL, 1.23, 1.29, Some((1.21, 1.22))),
    (process::MAIN, case::INSTANT_PAIR, 51.31, 51.72, Some((49.42, 50.71))),
    (process::MAIN, case::RAW_CLOCK_PAIR, 29.14, 29.93, Some((28.51, 28.83))),
    (process::MAIN, case::PERFGRAPH_ENABLED, 37.66, 39.58, Some((37.44, 38.21))),
    (process::MAIN, case::PERFGRAPH_NO_HISTOGRAM, 36.21, 38.02, Some((35.97, 36.80))),
    (process::MAIN, case::PERFGRAPH_DISABLED_BY_VERBOSITY, 1.52, 1.61, Some((1.53, 1.54))),
    (process::MAIN, case::PERFGRAPH_LIVE_MESSAGE, 36.34, 38.87, Some((36.52, 38.61))),
    (process::MAIN, case::PERFGRAPH_NESTED_3_DEEP, 114.71, 121.42, Some((116.53, 118.31))),
    (process::MAIN, case::PERFGRAPH_FUTURE_POLL, 45.10, 47.02, Some((44.82, 46.13))),
    (process::MAIN, case::PERFGRAPH_ARGS, 39.12, 41.02, Some((38.90, 39.71))),
    (process::MAIN, case::PERFGRAPH_ARGS_TRACED, 44.35, 46.80, Some((44.01, 45.12))),
    (process::MAIN, case::PERFGRAPH_EVENT_TRACED, 20.41, 21.33, Some((20.12, 20.87))),
    (process::MAIN, case::PERFGRAPH_COUNTER, 14.73, 15.60, Some((14.52, 15.01))),
    (process::MAIN, case::STD_MUTEX, 9.81, 10.12, Some((9.70, 9.95))),
    (process::MAIN, case::PERFGRAPH_MUTEX, 24.30, 25.41, Some((24.02, 24.88))),
    (process::MAIN, case::PUFFIN_ON, 72.04, 75.01, None),
    (process::MAIN, case::PUFFIN_OFF, 1.02, 1.11, None),
    (process::MAIN, case::FASTRACE_ROOT_SPAN, 74.43, 157.02, None),
    (process::MAIN, case::FASTRACE_NO_ROOT, 2.41, 4.03, None),
    (process::MAIN, case::FASTRACE_FUTURE_POLL, 30.52, 31.24, None),
    (process::MAIN, case::TRACING_REGISTRY_NOOP_LAYER, 154.52, 426.93, None),
    (process::MAIN, case::TRACING_SCOPED_REGISTRY, 160.31, 430.12, None),
    (process::MAIN, case::TRACING_SCOPED_PERFGRAPH_LAYER, 215.71, 498.43, None),
    (process::MAIN, case::TIME_GRAPH_ON, 52.17, 486.12, None),
    (process::MAIN, case::TIME_GRAPH_OFF, 3.81, 3.78, None),
    (process::MAIN, case::HOTPATH_ON, 135.83, 170.61, None),
    (process::MAIN, case::HOTPATH_FUTURE_POLL, 140.22, 175.34, None),
    (process::CHROME, case::EMPTY_CALL, 1.19, 1.88, None),
    (process::CHROME, case::TRACING_REGISTRY_CHROME, 904.81, 1183.04, None),
    (process::COMPILED_OUT, case::EMPTY_CALL, 0.31, 0.32, None),
    (process::COMPILED_OUT, case::PERFGRAPH_COMPILED_OUT_TIMED, 0.29, 0.31, None),
];

fn results() -> Results {
    let mut r = Results::default();
    for &(p, id, one, two, cpu) in MEDIANS {
        r.insert(p, group::ONE_THREAD, id, one);
        r.insert(p, group::TWO_THREADS, id, two);
        if let Some((one, two)) = cpu {
            r.insert(p, group::CPU_ONE_THREAD, id, one);
            r.insert(p, group::CPU_TWO_THREADS, id, two);
        }
    }
    r
}

fn machine() -> Machine {
    Machine {
        command: "benches/run.sh".into(),
        date: "2026-11-23 08:59".into(),
        commit: "5ee8f05d0f43".into(),
        dirty: false,
        cpu: "Intel(R) Xeon(R) Processor".into(),
        cores: 2,
        clock_source: "tsc".into(),
        kernel_clocksource: "tsc".into(),
        kernel: "Linux 6.18.44-fc-v782".into(),
        toolchain: "rustc 1.95.0 (59807616e 2026-04-14)".into(),
        load: "1.80 1.52 1.70".into(),
    }
}

fn demo() -> DemoFigures {
    DemoFigures {
        process: ProcessTime {
            iters: 1000,
            on_median: 1.034,
            on_min: 0.904,
            verbosity_off_median: 0.85,
            off_median: 0.768,
            off_min: 0.666,
            runs: 41,
        },
        fine_loop: FineLoop {
            iters: 2_000_000,
            runs: 5,
            on: Some(408.04),
            verbosity_off: Some(236.5),
            off: Some(223.3),
        },
        print_cpu: PrintThreadCpu {
            secs: 5,
            runs: 3,
            schedstat: true,
            idle: Some(CpuRun {
                cpu_ms: 12.1,
                wall_ms: 5003.2,
            }),
            fine: Some(CpuRun {
                cpu_ms: 13.01,
                wall_ms: 5001.7,
            }),
        },
    }
}

/// The canned record: one short process far slower than the others, every demo figure measured.
fn canned() -> Record {
    Record {
        machine: machine(),
        results: results(),
        layouts: Layouts {
            aslr: vec![
                0.28, 0.30, 0.29, 0.31, 1.67, 0.326, 0.327, 0.328, 0.329, 0.321, 0.322, 0.323,
            ],
            fixed: vec![0.324, 0.326, 0.331, 0.322],
        },
        layer: Some(layer_rounds()),
        rss: Rss {
            threads: 32,
            processes: 5,
            idle: Some(392.0),
            one: Some(844.0),
            full: Some(11092.0),
        },
        demo: Some(demo()),
        capture: Capture {
            floods: vec![
                Flood {
                    mb: 1000,
                    lines: false,
                    off_ms: 330.0,
                    auto_ms: 530.0,
                    runs: 3,
                },
                Flood {
                    mb: 100,
                    lines: true,
                    off_ms: 971.0,
                    auto_ms: 719.0,
                    runs: 3,
                },
            ],
        },
        lifecycle: Lifecycle {
            churn: Some(Churn {
                threads: 100_000,
                on_kib: 27280.0,
                on_s: 4.42,
                off_kib: 3380.0,
                off_s: 3.97,
            }),
            runs: 3,
            limited: Some(Limited {
                threads: 100_000,
                limit_kib: 4_000_000,
                on_kib: 26112.0,
                on_s: 4.51,
            }),
            traced: None,
            forks: Some(Forks {
                forks: 200,
                hangs: 0,
                errors: 0,
                mean_us: 4512,
                max_us: 9120,
            }),
        },
        trace: canned_trace(),
        merge: Some(Merge { best_s: 1.234 }),
        heap: Heap {
            system_pair_ns: 13.84,
            counting_pair_ns: 14.54,
            pairs: 2_000_000,
            rss_read_ns: Some(1412.3),
            reads: 100_000,
            rounds: 15,
        },
        alloc_peers: Some(AllocPeers {
            system_ns: 8.5,
            perfgraph_ns: 10.25,
            hotpath_ns: 11.0,
            pairs: 2_000_000,
            rounds: 21,
        }),
        cpu: CpuClock {
            monotonic_ns: 24.61,
            thread_cpu_ns: Some(312.44),
            switches_ns: Some(190.5),
            reads: 200_000,
            rounds: 20,
        },
        listen: Listen {
            idle_seconds: 20,
            idle_cpu_on: Some(0.012),
            idle_cpu_off: Some(0.0),
            quiet_ns: 20.0,
            asked_ns: 20.5,
            phases: 10,
            refreshes: 98,
            refresh_ms: 52.3,
            dump_bytes: 9_000,
            windows: vec![(250_000, 1_000_000, 0, 0, 90_000_000)],
            scrape: Some((250_000, 800.0)),
            scrapes: 200,
            otlp: Some((70_000, 600.0, 95)),
            otlp_idle: Some(0.04),
        },
    }
}

/// Five rounds, one far slower with the layer than the others (ratios 1.50, 1.75, 1.20, 4.08, 1.38;
/// stacked 2.00, 2.25, 1.60, 4.44, 2.00).
fn layer_rounds() -> LayerRounds {
    let round = |floor, enabled, registry, layer, stacked| Round {
        floor,
        enabled,
        registry,
        layer,
        stacked,
    };
    LayerRounds {
        calls: 10_000,
        processes: 3,
        rounds: vec![
            round(1.3, 37.3, 150.0, 204.0, 222.0),
            round(1.3, 37.3, 160.0, 223.0, 241.0),
            round(1.5, 41.5, 155.0, 203.0, 219.0),
            round(1.3, 37.3, 140.0, 287.0, 300.0),
            round(1.3, 33.3, 152.0, 196.0, 216.0),
        ],
    }
}

/// Two rungs (the second loses in both formats), the cost runs and the long run.
fn canned_trace() -> TraceFigures {
    let run = |made, lost, per: &str, bytes, cpu, other, peak_kb, rate| Run {
        made,
        lost,
        lost_per_thread: per.to_owned(),
        bytes,
        cpu_ns_per_section: cpu,
        other_cpu_ns_per_section: other,
        peak_kb,
        rate,
    };
    TraceFigures {
        ladder: vec![
            Rung {
                rate: 2_000_000,
                chrome: [
                    run(12_000_000, 0, "", 1_080_000_000, 0.0, 0.0, 0, 0.0),
                    run(12_000_000, 0, "", 1_080_000_000, 0.0, 0.0, 0, 0.0),
                ],
                perfetto: [
                    run(12_000_000, 0, "", 288_000_000, 0.0, 0.0, 0, 0.0),
                    run(12_000_000, 0, "", 288_000_000, 0.0, 0.0, 0, 0.0),
                ],
                load: 1.25,
            },
            Rung {
                rate: 3_000_000,
                chrome: [
                    run(
                        18_000_000,
                        500,
                        "rec-0: 200, rec-1: 300",
                        1_000_000,
                        0.0,
                        0.0,
                        0,
                        0.0,
                    ),
                    run(18_000_000, 0, "", 1_000_000, 0.0, 0.0, 0, 0.0),
                ],
                perfetto: [
                    run(18_000_000, 40, "rec-1: 40", 1_000_000, 0.0, 0.0, 0, 0.0),
                    run(18_000_000, 0, "", 1_000_000, 0.0, 0.0, 0, 0.0),
                ],
                load: 2.5,
            },
        ],
        cost: Some([
            run(40_000_000, 0, "", 0, 20.0, 0.5, 0, 10_000_000.0),
            run(30_000_000, 9_000_000, "", 1, 25.0, 60.0, 0, 7_500_000.0),
            run(36_000_000, 1_000_000, "", 1, 24.0, 30.0, 0, 9_000_000.0),
        ]),
        long: Some((
            1_000_000,
            30,
            run(60_000_000, 0, "", 0, 0.0, 0.0, 4_000, 1e6),
            run(60_000_000, 0, "", 1_680_000_000, 0.0, 0.0, 24_000, 1e6),
        )),
        deflate: vec![
            ("off", run(6_000_000, 0, "", 150_000_000, 0.0, 14.0, 0, 1e6)),
            ("on", run(6_000_000, 0, "", 27_000_000, 0.0, 52.5, 0, 1e6)),
            ("auto", run(6_000_000, 0, "", 27_000_000, 0.0, 52.0, 0, 1e6)),
        ],
    }
}

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
