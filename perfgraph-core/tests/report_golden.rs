//! Golden outputs of every report and of the folded and JSON exports, from a deterministic fake recording
//! (thread snapshots built by hand, see `report_fake`): the renderers are pure, so the text is exact.

mod report_fake;

use perfgraph_core::Verbosity;
use perfgraph_core::config::ReportSelection;
use report_fake::{solver_report, thread, tree};

#[test]
fn all_reports() {
    let r = solver_report(Verbosity::Level(3), 0);
    insta::assert_snapshot!("all_reports", r.render(&ReportSelection::all()));
}

#[test]
fn display_is_the_graph_with_its_footer() {
    let r = solver_report(Verbosity::Level(3), 0);
    let shown = r.to_string();
    assert!(shown.starts_with("Performance Graph:\n"));
    assert_eq!(
        shown,
        format!("Performance Graph:\n{}{}", r.graph_table(), r.footer())
    );
}

#[test]
fn footer_states_dropped_records_and_skipped_levels() {
    let r = solver_report(Verbosity::Level(1), 4096);
    let only_graph = ReportSelection::default().graph(true);
    insta::assert_snapshot!("graph_with_footer", r.render(&only_graph));
}

#[test]
fn sections_n_limits_the_rows() {
    let r = solver_report(Verbosity::Level(3), 0);
    let text = r.sections_table(3);
    // Rule, header, rule, 3 rows, rule.
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(text.lines().nth(3).unwrap().starts_with("| residual "));
}

#[test]
fn nothing_selected_prints_nothing() {
    let r = solver_report(Verbosity::Level(3), 0);
    assert_eq!(r.render(&ReportSelection::default()), "");
}

#[test]
fn folded_stacks() {
    let r = solver_report(Verbosity::Level(3), 0);
    insta::assert_snapshot!("folded", r.folded());
}

#[test]
fn call_tree_json() {
    let r = solver_report(Verbosity::Level(3), 0);
    let text = r.json();
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["tree"][0]["total_ns"], 10_350_000_000u64);
    insta::assert_snapshot!("json", text);
}

/// The CPU figures survive the JSON (what `perfgraph report --cpu` reads) and a merge of two runs sums
/// them: the `CPU:` table read back is the one printed, and a merge of a run with itself doubles it.
#[test]
fn cpu_figures_read_back_and_merge() {
    let r = solver_report(Verbosity::Level(3), 0);
    let back = perfgraph_core::Report::from_json(&r.json()).expect("reads back");
    assert_eq!(back.cpu_table(), r.cpu_table());
    let solve = |r: &perfgraph_core::Report| {
        r.tree
            .find(&["time_steps", "Simulation::time_step", "Simulation::solve"])
            .and_then(|n| n.cpu)
            .expect("measured")
    };
    assert_eq!(solve(&back), solve(&r));
    assert_eq!(back.tree.find(&["time_steps"]).unwrap().cpu, None);
    let twice = perfgraph_core::Report::merge_runs(&[back.clone(), back]).unwrap();
    assert_eq!(solve(&twice).cpu_ns, 2 * solve(&r).cpu_ns);
    assert_eq!(solve(&twice).self_cpu_ns, 2 * solve(&r).self_cpu_ns);
}

#[test]
fn a_deep_recursion_stays_small_and_parseable() {
    let paths: Vec<report_fake::Path> = (1..=5000).map(|d| (d, "recurse", 1, 1, 0)).collect();
    let t = tree(&paths);
    let mut run = perfgraph_core::data::RunInfo::new("deep", "tsc", 1_000_000_000);
    run.needs_every_record = true;
    let r = perfgraph_core::Report::build(run, &[thread(0, "main", 0, None, 0, t)]);
    let graph = r.render(&ReportSelection::all());
    assert!(graph.len() < 200_000, "{} bytes", graph.len());
    assert!(graph.contains("Not shown: 4900 call paths deeper than 100 levels"));
    let folded = r.folded();
    assert!(folded.len() < 2_000_000, "{} bytes", folded.len());
    let last = folded.lines().last().unwrap();
    assert!(last.ends_with(";(deeper) 4744000000"), "{last}");
    let total: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 5000 * 1_000_000);
    let v: serde_json::Value = serde_json::from_str(&r.json()).expect("parseable at any depth");
    assert_eq!(v["tree"].as_array().unwrap().len(), 5001);
}

#[test]
fn names_are_escaped_aligned_by_display_width_and_cut() {
    let t = tree(&[
        (1, "mesh\nrefine\x1b[31m", 1, 1000, 0),
        (2, "網格::細化", 2, 2000, 0),
        (2, "🚀 launch", 1, 500, 0),
        (1, report_fake::LONG_NAME, 1, 10, 0),
    ]);
    let mut run = perfgraph_core::data::RunInfo::new("odd", "tsc", 4_000_000_000);
    run.needs_every_record = true;
    let threads = [
        thread(0, "main", 0, None, 0, t),
        thread(1, "worker\tone", 0, Some(1), 0, tree(&[])),
    ];
    let r = perfgraph_core::Report::build(run, &threads);
    let text = r.render(&ReportSelection::all());
    // Nothing raw reaches the terminal: no control character but the line ends.
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
    // Every row of a table is as wide as its rules, in terminal columns.
    for table in text.split("\n\n") {
        let widths: Vec<usize> = table
            .lines()
            .filter(|l| l.starts_with('|') || l.starts_with('-'))
            .map(unicode_width::UnicodeWidthStr::width)
            .collect();
        assert!(
            widths.windows(2).all(|w| w[0] == w[1]),
            "{widths:?}\n{table}"
        );
    }
    // The JSON keeps names whole.
    assert!(r.json().contains(report_fake::LONG_NAME));
    insta::assert_snapshot!("odd_names", text);
}

/// Every count the footer prints with a noun is singular for one: `1 call`, never `1 calls`.
#[test]
fn a_count_of_one_is_singular() {
    let mut t = tree(&[(1, "Simulation::setup", 1, 120, 0)]);
    t.nodes[1].running = 1;
    t.nodes[1].cancelled = 1;
    let mut run = perfgraph_core::data::RunInfo::new("one", "tsc", 1_000_000_000);
    run.verbosity = Verbosity::Level(1);
    run.skipped = vec!["mesh::smooth"];
    run.needs_every_record = true;
    run.overhead_ns_per_section = Some(24.5);
    let r = perfgraph_core::Report::build(run, &[thread(0, "main", 0, None, 1, t)]);
    assert_eq!(
        r.footer(),
        "Not recorded: 1 section skipped by the verbosity (now 1): mesh::smooth; PERFGRAPH_VERBOSITY=3 \
         records every level.\n\
         Dropped: 1 section record lost to ring overflow (main 1); the counts, times and memory above are \
         exact, the trace and interval statistics lack those calls.\n\
         Cancelled: 1 future dropped before completing (Simulation::setup); its busy and wall time up to \
         the drop is included.\n\
         Running: 1 call had not ended; its time so far is included.\n\
         Instrumentation: 24.5 ns per section; 0.000 s over 1 call (0.00% of the recording threads' CPU \
         time)\n"
    );
    // One call path past the table's depth.
    let paths: Vec<report_fake::Path> = (1..=101).map(|d| (d, "recurse", 1, 1, 0)).collect();
    let run = perfgraph_core::data::RunInfo::new("deep", "tsc", 1_000_000_000);
    let r = perfgraph_core::Report::build(run, &[thread(0, "main", 0, None, 0, tree(&paths))]);
    assert_eq!(
        r.footer(),
        "Not shown: 1 call path deeper than 100 levels (it is in the JSON and folded exports).\n"
    );
}

/// A lock or counter named past 80 columns (or with wide characters, or a control character) keeps the
/// `Locks:` and `Counters:` tables in line: its name is cut with `…` as the other tables cut theirs, and
/// every row is as wide as the rules.
#[test]
fn long_lock_and_counter_names_keep_their_tables_in_line() {
    let mut run = perfgraph_core::data::RunInfo::new("locked", "tsc", 2_000_000_000);
    let long = format!("{}::queue", report_fake::LONG_NAME);
    for (name, acquisitions) in [
        (long.as_str(), 1_234_567),
        ("短い名前のロック\u{1b}[2J", 12),
        ("q", 3),
    ] {
        let mut l = perfgraph_core::data::LockStats::new(name);
        l.acquisitions = acquisitions;
        l.contended = acquisitions / 3;
        l.wait_ns = acquisitions * 1_000;
        l.max_wait_ns = 2_500_000;
        l.hold_ns = acquisitions * 200;
        l.max_hold_ns = 125_000;
        l.max_waiters = 4;
        run.locks.push(l);
    }
    let mut c = perfgraph_core::data::CounterStats::new(long.as_str());
    c.samples = 2;
    c.sum = 3.0;
    (c.min, c.max, c.last) = (1.0, 2.0, 2.0);
    run.counters.push(c);
    let r = perfgraph_core::Report::build(run, &[thread(0, "main", 0, None, 0, tree(&[]))]);
    let selection = ReportSelection::default().locks(true).counters(true);
    let text = r.render(&selection);
    assert!(!text.contains(report_fake::LONG_NAME), "{text}");
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
    for table in [r.locks_table(), r.counters_table()] {
        let widths: Vec<usize> = table
            .lines()
            .map(unicode_width::UnicodeWidthStr::width)
            .collect();
        assert!(
            widths.windows(2).all(|w| w[0] == w[1]),
            "{widths:?}\n{table}"
        );
    }
    insta::assert_snapshot!("long_lock_names", text);
}
