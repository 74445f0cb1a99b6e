//! What `perfgraph top` shows, as plain rows: a pure function of the last snapshot (the process's status
//! and report) and the UI's state (pane, sort key, top N, filter). `draw` puts the rows on the screen.

pub use super::model::*;
use super::{figures, waits};

/// The table of pane `ui.pane`.
pub fn table(s: &Snapshot, ui: &Ui) -> Table {
    let mut t = match ui.pane {
        Pane::Running => running(s, ui),
        Pane::Graph => graph(s, ui),
        Pane::Sections => sections(s, ui),
        Pane::Threads => threads(s, ui),
        Pane::Locks => figures::locks(s, ui),
        Pane::Counters => figures::counters(s, ui),
        Pane::Waits => waits::chains(s, ui),
    };
    if ui.top_n && ui.pane != Pane::Running {
        t.rows.truncate(TOP_N);
    }
    t
}

/// Each thread's running sections, outermost first, as live print shows them.
fn running(s: &Snapshot, ui: &Ui) -> Table {
    let mut rows = Vec::new();
    for t in &s.threads {
        if !matches(&t.name, &ui.filter) && !t.running.iter().any(|(n, _)| matches(n, &ui.filter)) {
            continue;
        }
        if t.running.is_empty() {
            rows.push(vec![
                t.name.clone(),
                "(between sections)".to_owned(),
                String::new(),
            ]);
        }
        for (depth, (name, elapsed)) in t.running.iter().enumerate() {
            let thread = if depth == 0 {
                t.name.clone()
            } else {
                String::new()
            };
            rows.push(vec![
                thread,
                format!("{}{name}", "  ".repeat(depth)),
                short(*elapsed),
            ]);
        }
    }
    Table {
        header: vec!["Thread", "Running now", "Elapsed"],
        rows,
        keep: vec![0, 0, 1],
        none: "",
    }
}

/// The combined call tree, siblings sorted by `ui.sort` (the tree's shape kept), or only the rows whose
/// name matches the filter. Its first row is the root, as in the report's `Performance Graph:`: the
/// program, its total the run's wall time.
fn graph(s: &Snapshot, ui: &Ui) -> Table {
    let nodes = &s.report.tree.nodes;
    let wall = s.report.run.wall_ns.max(1) as f64;
    let mut rows = Vec::new();
    let mut order = Vec::new();
    if !nodes.is_empty() {
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            order.push(i);
            let mut children = nodes[i].children.clone();
            children.sort_by(|&a, &b| compare(ui.sort, &nodes[b], &nodes[a]));
            // Reversed onto the stack: the first child comes out first.
            stack.extend(children.into_iter().rev());
        }
    }
    for i in order {
        let n = &nodes[i];
        if !matches(n.name, &ui.filter) {
            continue;
        }
        rows.push(vec![
            format!("{}{}", "  ".repeat(n.depth as usize), n.name),
            n.calls.to_string(),
            if n.running > 0 {
                n.running.to_string()
            } else {
                String::new()
            },
            secs(n.self_ns),
            secs(n.total_ns),
            format!("{:.1}", n.total_ns as f64 * 100.0 / wall),
        ]);
    }
    Table {
        header: vec!["Section", "Calls", "Running", "Self(s)", "Total(s)", "%"],
        rows,
        keep: vec![0, 3, 1, 2, 5, 4],
        none: "",
    }
}

/// Sibling order: the larger figure first (for `Name`, alphabetical).
fn compare(
    sort: Sort,
    b: &perfgraph_core::data::CallNode,
    a: &perfgraph_core::data::CallNode,
) -> std::cmp::Ordering {
    match sort {
        Sort::Total => b.total_ns.cmp(&a.total_ns),
        Sort::SelfTime => b.self_ns.cmp(&a.self_ns),
        Sort::Calls => b.calls.cmp(&a.calls),
        Sort::Name => a.name.cmp(b.name),
    }
}

/// The sections by name (over paths and threads), with their latency percentiles.
fn sections(s: &Snapshot, ui: &Ui) -> Table {
    let mut all = s.report.heaviest_sections(usize::MAX);
    all.retain(|t| matches(t.name, &ui.filter));
    // Total time per name: the sum over the tree's nodes of that name (a recursion counts once per level).
    let total = |name: &str| -> u64 {
        s.report
            .tree
            .nodes
            .iter()
            .filter(|n| n.name == name)
            .map(|n| n.total_ns)
            .sum()
    };
    match ui.sort {
        Sort::Total => all.sort_by_key(|t| std::cmp::Reverse(total(t.name))),
        Sort::SelfTime => all.sort_by_key(|t| std::cmp::Reverse(t.self_ns)),
        Sort::Calls => all.sort_by_key(|t| std::cmp::Reverse(t.calls)),
        Sort::Name => all.sort_by(|a, b| a.name.cmp(b.name)),
    }
    let rows = all
        .iter()
        .map(|t| {
            let l = &t.latency;
            let pct = |p: f64| {
                if l.count == 0 {
                    "-".to_owned()
                } else {
                    short(l.percentile(p))
                }
            };
            vec![
                t.name.to_owned(),
                t.calls.to_string(),
                secs(t.self_ns),
                secs(total(t.name)),
                pct(50.0),
                pct(90.0),
                pct(99.0),
                if l.count == 0 {
                    "-".to_owned()
                } else {
                    short(l.max_ns)
                },
            ]
        })
        .collect();
    Table {
        header: vec![
            "Section", "Calls", "Self(s)", "Total(s)", "p50", "p90", "p99", "Max",
        ],
        rows,
        keep: vec![0, 5, 4, 7, 2, 1, 6, 3],
        none: "",
    }
}

/// The threads: time alive, in sections, CPU, calls.
fn threads(s: &Snapshot, ui: &Ui) -> Table {
    let mut rows: Vec<Vec<String>> = s
        .report
        .threads
        .iter()
        .filter(|t| matches(&t.name, &ui.filter))
        .map(|t| {
            vec![
                t.name.clone(),
                secs(t.alive_ns),
                secs(t.busy_ns),
                format!("{:.1}", t.busy_ns as f64 * 100.0 / t.alive_ns.max(1) as f64),
                secs(t.cpu_ns),
                format!("{:.1}", t.cpu_ns as f64 * 100.0 / t.alive_ns.max(1) as f64),
                t.calls.to_string(),
                if t.exited {
                    "exited".to_owned()
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    let key = |r: &Vec<String>, i: usize| r[i].parse::<f64>().unwrap_or(0.0);
    match ui.sort {
        Sort::Total => rows.sort_by(|a, b| key(b, 2).total_cmp(&key(a, 2))),
        Sort::SelfTime => rows.sort_by(|a, b| key(b, 4).total_cmp(&key(a, 4))),
        Sort::Calls => rows.sort_by(|a, b| key(b, 6).total_cmp(&key(a, 6))),
        Sort::Name => rows.sort_by(|a, b| a[0].cmp(&b[0])),
    }
    Table {
        header: vec![
            "Thread", "Alive(s)", "Busy(s)", "Busy %", "CPU(s)", "CPU %", "Calls", "",
        ],
        rows,
        keep: vec![0, 1, 5, 6, 3, 7, 2, 4],
        none: "",
    }
}

/// The header line's items (the process, its time, its memory), each with its rank on a narrow terminal
/// (the lowest dropped first).
pub fn header_items(s: &Snapshot) -> Vec<(String, u8)> {
    let mut items = vec![
        (format!("{} (pid {})", s.program, s.pid), 9),
        (format!("up {}", short(s.wall_ns)), 4),
        (format!("rss {}", mb(s.rss_bytes as i64)), 3),
    ];
    if let Some(h) = s.heap_bytes {
        items.push((format!("heap {}", mb(h)), 2));
    }
    items.push((format!("threads {}", s.threads.len()), 1));
    items
}

/// A snapshot for the tests of `view` and `draw`.
#[cfg(test)]
pub mod tests_support {
    use super::*;
    use perfgraph_core::data::{
        CallNode, CallTree, CounterStats, LockStats, Report, RunInfo, ThreadSnapshot,
    };

    /// A run of `demo`: `solve` (2 calls, one running) calling `residual` (1000 calls, one of 371.8 ms),
    /// and `assemble`.
    pub fn snapshot() -> Snapshot {
        let mut root = CallNode::new(0, "(root)", 0, 0, None);
        root.children = vec![1, 3];
        let mut solve = CallNode::new(1, "solve", 1, 1, Some(0));
        solve.calls = 2;
        solve.running = 1;
        solve.total_ns = 3_000_000_000;
        solve.self_ns = 1_000_000_000;
        solve.children = vec![2];
        let mut residual = CallNode::new(2, "residual", 1, 2, Some(1));
        residual.calls = 1000;
        residual.total_ns = 2_000_000_000;
        residual.self_ns = 2_000_000_000;
        let mut assemble = CallNode::new(3, "assemble", 1, 1, Some(0));
        assemble.calls = 5000;
        assemble.total_ns = 500_000_000;
        assemble.self_ns = 500_000_000;
        // Completed calls' durations, for the percentiles: µs, ms and s.
        solve.latency.record(1_000_000_000, 1);
        residual.latency.record(1_600_000, 990);
        residual.latency.record(5_100_000, 9);
        residual.latency.record(371_800_000, 1);
        assemble.latency.record(100_000, 5000);
        root.total_ns = 3_500_000_000;
        let tree = CallTree::new(vec![root, solve, residual, assemble]);
        let mut main = ThreadSnapshot::new(0, "main", tree);
        main.is_main = true;
        let mut report = Report::build(RunInfo::new("demo", "tsc", 4_000_000_000), &[main]);
        // Two locks and two counters, for the panes of the report's `Locks:` and `Counters:`.
        let mut queue = LockStats::new("queue");
        (queue.acquisitions, queue.contended, queue.max_waiters) = (12_000, 150, 3);
        (queue.wait_ns, queue.max_wait_ns) = (42_500_000, 3_200_000);
        (queue.hold_ns, queue.max_hold_ns) = (910_000_000, 12_400_000);
        let mut log = LockStats::new("log");
        (log.acquisitions, log.hold_ns, log.max_hold_ns) = (800, 1_500_000, 20_000);
        report.run.locks = vec![log, queue];
        let mut depth = CounterStats::new("queue_depth");
        let mut residual = CounterStats::new("residual");
        for v in [3.0, 12.0, 7.0] {
            depth.add(v);
        }
        for v in [0.5, 0.125, 0.155, 0.0031] {
            residual.add(v);
        }
        report.run.counters = vec![depth, residual];
        Snapshot {
            pid: 42,
            program: "demo".into(),
            wall_ns: 4_000_000_000,
            rss_bytes: 12_500_000,
            heap_bytes: None,
            threads: vec![ThreadNow {
                index: 0,
                name: "main".into(),
                alive_ns: 4_000_000_000,
                cpu_ns: 3_000_000_000,
                running: vec![("solve".into(), 1_500_000_000), ("residual".into(), 2_000)],
                waiting: None,
            }],
            report,
        }
    }

    /// The nested contention of `examples/critical` as `top` sees it in the middle: T2 holds `L2` in
    /// `flush`, T1 (holding `L1`) waits for it, T3 waits for `L1`; a consumer waits on a channel.
    pub fn waiting_snapshot() -> Snapshot {
        let thread =
            |index: u32, name: &str, running: &[&str], waiting: Option<WaitNow>| ThreadNow {
                index,
                name: name.into(),
                alive_ns: 400_000_000,
                cpu_ns: 1_000_000,
                running: running.iter().map(|s| (s.to_string(), 1_000_000)).collect(),
                waiting,
            };
        let wait = |on: &str, holder: Option<u32>, ns: u64| {
            Some(WaitNow {
                on: on.into(),
                holder,
                ns,
            })
        };
        let mut s = snapshot();
        s.threads = vec![
            thread(0, "main", &["nested"], None),
            thread(1, "T1", &["take_both"], wait("L2", Some(2), 250_000_000)),
            thread(2, "T2", &["flush"], None),
            thread(3, "T3", &["take_l1"], wait("L1", Some(1), 200_000_000)),
            thread(4, "consumer", &[], wait("queue", None, 3_000_000)),
        ];
        s
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::snapshot;
    use super::*;

    #[test]
    fn running_shows_each_threads_stack_with_elapsed_times() {
        let t = table(&snapshot(), &Ui::default());
        assert_eq!(
            t.rows,
            [
                vec!["main".to_owned(), "solve".into(), "1.50 s".into()],
                vec![String::new(), "  residual".into(), "2.0 µs".into()],
            ]
        );
    }

    #[test]
    fn the_graph_keeps_its_shape_and_sorts_siblings() {
        let mut ui = Ui {
            pane: Pane::Graph,
            ..Ui::default()
        };
        let names = |ui: &Ui| -> Vec<String> {
            table(&snapshot(), ui)
                .rows
                .iter()
                .map(|r| r[0].clone())
                .collect()
        };
        assert_eq!(
            names(&ui),
            ["demo", "  solve", "    residual", "  assemble"]
        );
        ui.sort = Sort::Calls;
        assert_eq!(
            names(&ui),
            ["demo", "  assemble", "  solve", "    residual"]
        );
        ui.filter = "RESID".into();
        assert_eq!(names(&ui), ["    residual"]);
        let rows = table(
            &snapshot(),
            &Ui {
                pane: Pane::Graph,
                ..Ui::default()
            },
        )
        .rows;
        // The root, as in the report's graph: the program, 1 call, its total the wall time.
        assert_eq!(rows[0], ["demo", "1", "", "0.500", "4.000", "100.0"]);
        assert_eq!(rows[1][2], "1", "solve is running");
    }

    #[test]
    fn top_n_cuts_the_tables_and_sections_sort_by_self_time() {
        let ui = Ui {
            pane: Pane::Sections,
            sort: Sort::SelfTime,
            ..Ui::default()
        };
        let t = table(&snapshot(), &ui);
        let names: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        // The root (the program's time outside sections) is a row, as in `Heaviest Sections:`.
        assert_eq!(names, ["residual", "solve", "assemble", "demo"]);
        let mut big = snapshot();
        let many: Vec<ThreadNow> = (0..30)
            .map(|i| ThreadNow {
                index: i,
                name: format!("w{i}"),
                alive_ns: 1,
                cpu_ns: 1,
                running: vec![("solve".into(), 1)],
                waiting: None,
            })
            .collect();
        big.threads = many;
        let graph = Ui {
            pane: Pane::Graph,
            top_n: true,
            ..Ui::default()
        };
        assert!(table(&big, &graph).rows.len() <= TOP_N);
        // The running pane shows every thread.
        assert_eq!(table(&big, &Ui::default()).rows.len(), 30);
    }

    #[test]
    fn the_header_names_the_process_and_its_memory() {
        assert_eq!(
            header_items(&snapshot())
                .into_iter()
                .map(|(item, _)| item)
                .collect::<Vec<_>>()
                .join("  "),
            "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1"
        );
    }
}
