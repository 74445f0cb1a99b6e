//! The canned data the record is rendered from: Criterion medians, a machine, the demo's figures, a
//! whole record, and the layer's and trace's figures, each written by hand.

use super::*;

/// A case's Criterion medians (ns per call): process, case, one thread, two threads, and for the floors
/// and perfgraph the same in thread CPU time.
pub(super) type Medians = (&'static str, &'static str, f64, f64, Option<(f64, f64)>);

/// The canned medians. coarse-prof and the compiled-out `time_section!` are left out: their rows must say
/// "not measured".
#[rustfmt::skip]
pub(super) const MEDIANS: &[Medians] = &[
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

pub(super) fn results() -> Results {
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

pub(super) fn machine() -> Machine {
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

pub(super) fn demo() -> DemoFigures {
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
pub(super) fn canned() -> Record {
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
pub(super) fn layer_rounds() -> LayerRounds {
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
pub(super) fn canned_trace() -> TraceFigures {
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
