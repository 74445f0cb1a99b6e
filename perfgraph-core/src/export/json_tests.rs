//! Unit tests of the JSON writer (`export::json`): its output, field by field, and its failed writes.

use serde_json::{Value, json};

use super::*;
use crate::data::report::{Merged, ThreadSummary};
use crate::data::tree::{CallNode, testing};

fn node(name: &'static str, depth: u32, parent: Option<usize>) -> CallNode {
    CallNode {
        section: depth,
        name,
        level: 1,
        depth,
        parent,
        children: Vec::new(),
        calls: 3,
        running: 1,
        self_ns: 5,
        total_ns: u64::MAX,
        self_mem_bytes: -4096,
        total_mem_bytes: i64::MIN,
        // Nodes at depth 2 are async, so both layouts of a node are checked.
        polls: if depth == 2 { 7 } else { 0 },
        wall_ns: if depth == 2 { u64::MAX } else { 0 },
        max_wall_ns: if depth == 2 { 9 } else { 0 },
        cancelled: if depth == 2 { 1 } else { 0 },
        latency: if depth == 1 {
            let mut l = Latency::default();
            l.record(120, 2);
            l.record(9_000_000, 1);
            l
        } else {
            Latency::default()
        },
        allocs: 1000 + depth as u64,
        alloc_bytes: u64::MAX - 1,
        self_allocs: 1000,
        self_alloc_bytes: 1_024_000,
        heap_growth_bytes: -5,
        heap_peak_bytes: 1 << 40,
        // Nodes at depth 1 measured their CPU time.
        cpu: (depth == 1).then_some(crate::data::CpuFigures {
            cpu_ns: u64::MAX,
            self_cpu_ns: 3,
            ..Default::default()
        }),
    }
}

fn report(nodes: Vec<CallNode>, threads: usize, verbosity: Verbosity) -> Report {
    let tree = CallTree { nodes };
    let run = RunInfo {
        program: "prog \"quoted\"\n\u{1}é",
        clock: "tsc",
        wall_ns: 7,
        rss_change_bytes: tree.nodes.first().map_or(0, |n| n.total_mem_bytes),
        verbosity,
        skipped: vec!["a\tb", "c"],
        needs_every_record: false,
        process: ProcessInfo {
            pid: 12,
            rank: 3,
            host: "h\"1".to_owned(),
            start_unix_ns: 1_700_000_000_123_456_789,
        },
        overhead_ns_per_section: Some(21.25),
        heap_counted: false,
        counters: Vec::new(),
        locks: Vec::new(),
    };
    Report {
        run,
        threads: (0..threads)
            .map(|i| ThreadSummary {
                index: i as u32,
                name: format!("t\\{i}"),
                is_main: i == 0,
                exited: i == 1,
                alive_ns: 1,
                busy_ns: 2,
                cpu_ns: 5,
                calls: 3,
                dropped: 4,
                tree: tree.clone(),
            })
            .collect(),
        tree: tree.clone(),
        dropped: 9,
        merged: None,
    }
}

/// `report` with its run info changed by `f`.
fn with_run(mut r: Report, f: impl FnOnce(&mut RunInfo)) -> Report {
    f(&mut r.run);
    r
}

/// What serde_json's pretty printer makes of the same document: the layout the streaming writer keeps.
fn by_serde(r: &Report) -> String {
    let spread = r.merged.as_ref().map(|m| &m.spread);
    let nodes = |t: &CallTree, merged: bool| -> Vec<Value> {
        let node = |(i, n): (usize, &CallNode)| {
            let l = &n.latency;
            let some = |v: u64| (l.count > 0).then_some(v);
            let mut v = json!({"id": i, "parent": n.parent, "depth": n.depth, "name": n.name,
                "section": n.section, "level": n.level, "calls": n.calls, "running": n.running,
                "self_ns": n.self_ns, "total_ns": n.total_ns, "self_mem_bytes": n.self_mem_bytes,
                "total_mem_bytes": n.total_mem_bytes, "min_ns": some(l.min_ns),
                "max_ns": some(l.max_ns), "p50_ns": some(l.percentile(50.0)),
                "p90_ns": some(l.percentile(90.0)), "p99_ns": some(l.percentile(99.0)),
                "histogram": (l.count > 0).then(|| json!({"sub_buckets": 64, "buckets": l.buckets}))});
            if r.run.heap_counted {
                v["allocs"] = json!(n.allocs);
                v["alloc_bytes"] = json!(n.alloc_bytes);
                v["self_allocs"] = json!(n.self_allocs);
                v["self_alloc_bytes"] = json!(n.self_alloc_bytes);
                v["heap_growth_bytes"] = json!(n.heap_growth_bytes);
                v["heap_peak_bytes"] = json!(n.heap_peak_bytes);
            }
            if let Some(cpu) = n.cpu {
                v["cpu_ns"] = json!(cpu.cpu_ns);
                v["self_cpu_ns"] = json!(cpu.self_cpu_ns);
            }
            if n.is_async() {
                v["polls"] = json!(n.polls);
                v["wall_ns"] = json!(n.wall_ns);
                v["max_wall_ns"] = json!(n.max_wall_ns);
                v["cancelled"] = json!(n.cancelled);
            }
            if let Some(s) = spread.filter(|_| merged).and_then(|s| s.get(i)) {
                v["processes"] = json!({"count": s.processes, "min_ns": s.min_ns,
                    "sum_ns": s.sum_ns, "max_ns": s.max_ns, "max_rank": s.max_rank});
            }
            v
        };
        t.nodes.iter().enumerate().map(node).collect()
    };
    let threads: Vec<Value> = r
        .threads
        .iter()
        .map(|t| {
            json!({"index": t.index, "name": t.name, "main": t.is_main, "exited": t.exited,
                "alive_ns": t.alive_ns, "busy_ns": t.busy_ns, "calls": t.calls,
                "cpu_ns": t.cpu_ns, "dropped": t.dropped, "tree": nodes(&t.tree, false)})
        })
        .collect();
    let verbosity = match r.run.verbosity {
        Verbosity::Off => Value::Null,
        Verbosity::Level(v) => json!(v),
    };
    let p = &r.run.process;
    let mut value = json!({"format": "perfgraph-call-tree", "version": VERSION, "program": r.run.program,
        "clock": r.run.clock, "wall_ns": r.run.wall_ns, "verbosity": verbosity,
        "skipped_sections": r.run.skipped, "dropped": r.dropped, "tree": nodes(&r.tree, true),
        "threads": threads, "pid": p.pid, "rank": p.rank, "host": p.host,
        "start_unix_ns": p.start_unix_ns, "needs_every_record": r.run.needs_every_record,
        "overhead_ns_per_section": r.run.overhead_ns_per_section});
    if !r.run.counters.is_empty() {
        let counters: serde_json::Map<String, Value> = r
            .run
            .counters
            .iter()
            .map(|c| {
                let n = |v: f64| {
                    if v.is_finite() {
                        json!(v)
                    } else {
                        json!(v.to_string())
                    }
                };
                (
                    c.name.clone(),
                    json!({"samples": c.samples, "last": n(c.last), "min": n(c.min),
                    "max": n(c.max), "mean": n(c.mean()), "sum": n(c.sum)}),
                )
            })
            .collect();
        value["counters"] = Value::Object(counters);
    }
    if !r.run.locks.is_empty() {
        let locks: Vec<Value> = r
            .run
            .locks
            .iter()
            .map(|l| {
                json!({"name": l.name, "acquisitions": l.acquisitions, "contended": l.contended,
                    "wait_ns": l.wait_ns, "max_wait_ns": l.max_wait_ns, "hold_ns": l.hold_ns,
                    "max_hold_ns": l.max_hold_ns, "max_waiters": l.max_waiters})
            })
            .collect();
        value["locks"] = json!(locks);
    }
    if let Some(m) = &r.merged {
        let list: Vec<Value> = m
            .processes
            .iter()
            .map(|q| {
                json!({"pid": q.pid, "rank": q.rank,
            "host": q.host, "start_unix_ns": q.start_unix_ns})
            })
            .collect();
        value["processes"] = json!(list);
    }
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

/// Counters with awkward names and values: a quote, a float that is no integer, an infinity.
fn counters() -> Vec<crate::data::CounterStats> {
    let mut a = crate::data::CounterStats::new("queue \"depth\"");
    a.add(3.0);
    a.add(-0.5);
    let mut b = crate::data::CounterStats::new("residual");
    b.add(f64::INFINITY);
    vec![a, b]
}

/// Locks with a name to escape.
fn locks() -> Vec<crate::data::LockStats> {
    let mut a = crate::data::LockStats::new("queue \"a\"");
    (a.acquisitions, a.contended, a.wait_ns, a.max_wait_ns) = (10, 3, 5_000_000, 4_000_000);
    (a.hold_ns, a.max_hold_ns, a.max_waiters) = (9_000_000, 2_500_000, 2);
    vec![a, crate::data::LockStats::new("z")]
}

/// A one-node report with `fill` applied to its run, written and read back: the report read back, whose
/// table for `selection` must hold `row`.
fn read_back_run(
    fill: impl FnOnce(&mut RunInfo),
    selection: &crate::config::ReportSelection,
    row: &str,
) -> Report {
    let r = with_run(
        report(vec![node("(root)", 0, None)], 1, Verbosity::Off),
        fill,
    );
    let back = Report::from_json(&r.json()).unwrap();
    let table = back.render(selection);
    assert!(table.contains(row), "{table}");
    back
}

#[test]
fn locks_read_back_as_written() {
    let back = read_back_run(
        |r| r.locks = locks(),
        &crate::config::ReportSelection::default().locks(true),
        "| queue \"a\" |           10 |         3 |      0.005 |        4.000 |      0.009 |        2.500 |           2 |",
    );
    assert_eq!(back.run.locks, locks());
}

#[test]
fn counters_read_back_as_written() {
    let back = read_back_run(
        |r| r.counters = counters(),
        &crate::config::ReportSelection::default().counters(true),
        "| queue \"depth\" |       2 | -0.5 | -0.5 |   3 | 1.25 |",
    );
    assert_eq!(back.run.counters, counters());
}

#[test]
fn the_layout_is_serde_json_pretty_printers() {
    let deep = vec![
        node("(root)", 0, None),
        node("a\"b", 1, Some(0)),
        node("ç\u{7f}\u{1f}", 2, Some(1)),
    ];
    for r in [
        report(deep.clone(), 2, Verbosity::Level(3)),
        with_run(report(deep.clone(), 2, Verbosity::Level(3)), |r| {
            r.heap_counted = true
        }),
        report(deep, 0, Verbosity::Off),
        report(Vec::new(), 1, Verbosity::Level(0)),
        with_run(
            report(vec![node("(root)", 0, None)], 0, Verbosity::Off),
            |r| {
                r.skipped = Vec::new();
                r.overhead_ns_per_section = None;
            },
        ),
        with_run(
            report(vec![node("(root)", 0, None)], 1, Verbosity::Off),
            |r| {
                r.counters = counters();
            },
        ),
        Report {
            merged: Some(Merged {
                processes: vec![ProcessInfo::default(), ProcessInfo::default()],
                spread: vec![ProcessSpread::default(); 2],
            }),
            ..report(
                vec![node("(root)", 0, None), node("a", 1, Some(0))],
                1,
                Verbosity::Off,
            )
        },
    ] {
        assert_eq!(r.json(), by_serde(&r));
    }
}

#[test]
fn written_from_the_snapshots_it_is_the_reports_json() {
    let deep: Vec<(u32, &str)> = (1..=300).map(|d| (d, "r")).collect();
    let snapshot = |index: u32, name: &str, tree: CallTree| ThreadSnapshot {
        index,
        name: name.to_owned(),
        is_main: index == 1,
        started_ns: 10 * index as u64,
        exited_ns: (index == 0).then_some(900),
        recorded: 5,
        dropped: index as u64 * 7,
        cpu_ns: index as u64 * 11,
        tree,
        running: Vec::new(),
        group: None,
    };
    let threads = vec![
        snapshot(0, "deep", testing::tree(&deep)),
        snapshot(1, "main", testing::tree(&[(1, "a"), (2, "b"), (1, "c")])),
        snapshot(2, "w\"2\"", testing::tree(&[(1, "a"), (2, "d"), (1, "e")])),
    ];
    for (verbosity, threads) in [
        (Verbosity::Level(2), threads.clone()),
        (Verbosity::Off, threads[1..].to_vec()),
        (Verbosity::Off, threads[..1].to_vec()),
        (Verbosity::Off, Vec::new()),
    ] {
        let run = RunInfo {
            program: "prog",
            clock: "tsc",
            wall_ns: 1000,
            rss_change_bytes: -4096,
            verbosity,
            skipped: vec!["x"],
            needs_every_record: true,
            process: ProcessInfo::default(),
            overhead_ns_per_section: Some(3.5),
            heap_counted: true,
            counters: counters(),
            locks: locks(),
        };
        let expected = Report::from_snapshots(run.clone(), threads.clone()).json();
        let mut out = Vec::new();
        write_snapshots(&mut out, run, threads, None).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}

#[test]
fn rendering_a_large_tree_counts_as_progress_of_the_exit() {
    let n = 3 * process::PROGRESS_EVERY as u32;
    let deep: Vec<(u32, &str)> = (1..=n).map(|d| (d, "r")).collect();
    let r = report(testing::tree(&deep).nodes, 1, Verbosity::Off);
    // Other tests may report progress meanwhile: only a lower bound holds.
    let before = process::progress_count();
    let json = r.json();
    let after_json = process::progress_count();
    assert!(after_json - before >= 6, "3 per tree, 2 trees");
    let folded = r.folded();
    assert!(process::progress_count() - after_json >= 3);
    assert!(json.len() > folded.len());
}

#[test]
fn a_failed_write_stops_the_render() {
    struct Full(usize);
    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 < buf.len() {
                return Err(io::Error::other("full"));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let r = report(vec![node("(root)", 0, None)], 3, Verbosity::Off);
    let err = write(&mut Full(100), &r).unwrap_err();
    assert_eq!(err.to_string(), "full");
}

#[test]
fn the_critical_path_member_is_written_in_the_same_layout() {
    let r = with_run(
        report(vec![node("(root)", 0, None)], 1, Verbosity::Off),
        |r| r.counters = counters(),
    );
    let member = json!({
        "chains": [{"links": [{"held": true, "holder": "T\u{1b}1", "on": "L1"}], "root": null}],
        "end_ns": 9,
        "other": {},
        "sections": [],
        "ratio": 0.5,
    });
    let mut out = Vec::new();
    super::write_with(&mut out, &r, Some(&member)).unwrap();
    let out = String::from_utf8(out).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(parsed["critical_path"], member);
    assert_eq!(out, serde_json::to_string_pretty(&parsed).unwrap() + "\n");
}
