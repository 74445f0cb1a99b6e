//! The critical path of real programs with a known answer (`examples/critical`): each runs with a Chrome
//! trace, which `perfgraph_core::critical` reads back and analyses, as `perfgraph report --critical-path`
//! does (one case runs the command itself). The work is sleeps inside sections, so the answers hold with
//! both cores busy; the bounds are the (5% on a slack, 10% on a what-if).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use perfgraph_core::critical::{self, CriticalPath, Options, PieceKind, Timeline};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");
const MS: f64 = 1e6;

/// Runs `examples/critical` with `args`, its trace in `dir`; returns the trace's path.
fn run(dir: &Path, args: &[&str]) -> PathBuf {
    let trace = dir.join(format!("{}.json", args.join("-")));
    let out = Command::new(common::example("critical"))
        .args(args)
        .env("PERFGRAPH_TRACE", &trace)
        .env("PERFGRAPH_LIVE", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Nothing of the program's own, nothing of perfgraph's.
    assert_eq!(out.stdout, b"", "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{out:?}");
    trace
}

fn timeline(trace: &Path) -> Timeline {
    critical::read_timeline(std::fs::File::open(trace).unwrap()).unwrap()
}

fn analyse(t: &Timeline, options: &Options) -> CriticalPath {
    let p = critical::analyse(t, options).unwrap();
    // The invariants: pieces in order, each meeting the next, summing to the time explained.
    for w in p.pieces.windows(2) {
        assert_eq!(w[0].end_ns, w[1].start_ns, "{w:?}");
    }
    let sum: u64 = p.pieces.iter().map(|x| x.end_ns - x.start_ns).sum();
    assert_eq!(sum, p.length_ns);
    assert_eq!(p.length_ns, p.end_ns - p.start_ns);
    p
}

/// What `perfgraph report --critical-path TRACE` prints.
fn command_table(trace: &Path) -> String {
    let out = Command::new(CLI)
        .args(["report", "--critical-path"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn section<'a>(p: &'a CriticalPath, name: &str) -> &'a critical::PathSection {
    p.sections
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", p.sections))
}

/// The path's threads, in order, a run of pieces on one thread named once.
fn threads_on_path(t: &Timeline, p: &CriticalPath) -> Vec<String> {
    let mut names: Vec<String> = p
        .pieces
        .iter()
        .filter(|x| x.end_ns - x.start_ns > 1_000_000)
        .map(|x| t.threads[x.thread as usize].name.clone())
        .collect();
    names.dedup();
    names
}

#[test]
fn fork_join_path_runs_through_the_longer_child_and_the_shorter_has_the_difference_as_slack() {
    let dir = common::scratch("perfgraph-critical", "fork-join");
    let t = timeline(&run(&dir, &["fork-join"]));
    let p = analyse(&t, &Options::default());
    assert_eq!(
        threads_on_path(&t, &p),
        ["main", "B", "main"],
        "{:?}",
        p.pieces
    );
    assert_eq!(section(&p, "work_a").path_ns, 0);
    assert!(section(&p, "work_b").path_ns as f64 >= 600.0 * MS);
    // A ended 400 ms before B: that much later it could have ended (within 5%).
    let slack = section(&p, "work_a").slack_ns as f64;
    assert!((slack - 400.0 * MS).abs() <= 20.0 * MS, "slack {slack} ns");
    assert_eq!(section(&p, "work_b").slack_ns, 0);
}

#[test]
fn a_lock_convoy_alternates_between_holds_and_the_what_if_predicts_a_halved_hold() {
    let dir = common::scratch("perfgraph-critical", "convoy");
    let t = timeline(&run(&dir, &["convoy", "40"]));
    let mut options = Options::default();
    options.what_if = Some(("update".into(), 50.0));
    let p = analyse(&t, &options);
    let holders: Vec<u32> = p
        .pieces
        .iter()
        .filter(|x| match x.kind {
            PieceKind::Running { section: Some(s) } => t.names[s as usize] == "update",
            _ => false,
        })
        .map(|x| x.thread)
        .collect();
    assert!(holders.len() >= 11, "{} holds on the path", holders.len());
    assert!(holders.windows(2).all(|w| w[0] != w[1]), "{holders:?}");
    let predicted = p.what_if.unwrap().predicted_ns as f64;
    // The same program with the hold really halved.
    let real = timeline(&run(&dir, &["convoy", "20"]));
    let real = analyse(&real, &Options::default());
    let real_ns = real.length_ns as f64;
    assert!(
        (predicted - real_ns).abs() <= 0.10 * real_ns,
        "predicted {predicted} ns, really {real_ns} ns"
    );
}

#[test]
fn nested_contention_prints_the_chain_to_the_section_at_its_root() {
    let dir = common::scratch("perfgraph-critical", "nested");
    let t = timeline(&run(&dir, &["nested"]));
    let p = analyse(&t, &Options::default());
    let chains: Vec<String> = p.chains.iter().map(|c| c.text()).collect();
    assert!(
        chains.contains(
            &"T3 waits for `L1` held by T1, which waits for `L2` held by T2 in `flush`".into()
        ),
        "{chains:#?}"
    );
}

#[test]
fn a_pipeline_path_is_in_its_slow_consumer() {
    let dir = common::scratch("perfgraph-critical", "pipeline");
    let t = timeline(&run(&dir, &["pipeline"]));
    let p = analyse(&t, &Options::default());
    let consumer = t.threads.iter().position(|l| l.name == "consumer").unwrap() as u32;
    let on_consumer: u64 = p
        .pieces
        .iter()
        .filter(|x| x.thread == consumer)
        .map(|x| x.end_ns - x.start_ns)
        .sum();
    assert!(
        on_consumer * 10 >= p.length_ns * 9,
        "{on_consumer} of {} ns on the consumer",
        p.length_ns
    );
}

#[test]
fn a_pipeline_through_crossbeam_channels_is_read_as_std_s() {
    let dir = common::scratch("perfgraph-critical", "pipeline-crossbeam");
    let t = timeline(&run(&dir, &["pipeline-crossbeam"]));
    let p = analyse(&t, &Options::default());
    let consumers: Vec<u32> = (t.threads.iter().enumerate())
        .filter(|(_, l)| l.name.starts_with("consumer"))
        .map(|(i, _)| i as u32)
        .collect();
    assert_eq!(consumers.len(), 2);
    let on_consumers: u64 = p
        .pieces
        .iter()
        .filter(|x| consumers.contains(&x.thread))
        .map(|x| x.end_ns - x.start_ns)
        .sum();
    assert!(
        on_consumers * 10 >= p.length_ns * 9,
        "{on_consumers} of {} ns on the consumers",
        p.length_ns
    );
    // The producer's sends that waited for room were ended by a consumer's receive.
    let producer = t.threads.iter().find(|l| l.name == "producer").unwrap();
    let woken: Vec<u32> = producer
        .blocked
        .iter()
        .filter_map(|b| b.waker.map(|w| w.thread))
        .collect();
    assert!(!woken.is_empty(), "{:?}", producer.blocked);
    assert!(woken.iter().all(|w| consumers.contains(w)), "{woken:?}");
}

#[test]
fn a_wait_on_std_condvar_is_blocked_unknown_in_the_command_s_table() {
    let dir = common::scratch("perfgraph-critical", "blind");
    let trace = run(&dir, &["blind"]);
    let p = analyse(&timeline(&trace), &Options::default());
    assert!(
        p.other.blocked_unknown_ns as f64 >= 150.0 * MS,
        "{:?}",
        p.other
    );
    assert!((section(&p, "wait_std").path_self_ns as f64) < 50.0 * MS);
    let text = command_table(&trace);
    assert!(text.starts_with("Critical Path:\n"), "{text}");
    assert!(text.contains("| (blocked (unknown))"), "{text}");
}

#[test]
fn a_perfetto_trace_a_missing_section_or_a_bad_what_if_is_refused() {
    let dir = common::scratch("perfgraph-critical", "errors");
    let pf = dir.join("run.pftrace");
    std::fs::write(&pf, b"\x0a\x00").unwrap();
    let trace = run(&dir, &["blind"]);
    let trace = trace.to_str().unwrap();
    for (args, says) in [
        (
            vec!["report", "--critical-path", pf.to_str().unwrap()],
            "reads Chrome JSON traces only",
        ),
        (
            vec!["report", "--critical-path", trace, "--section", "nothing"],
            "no section named \"nothing\"",
        ),
        (
            vec![
                "report",
                "--critical-path",
                trace,
                "--what-if",
                "wait_std=150",
            ],
            "PCT from 0 to 100",
        ),
    ] {
        let out = Command::new(CLI).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.lines().next().unwrap_or("").contains(says),
            "{args:?}: {err}"
        );
    }
}

/// Seeded random programs of spawns, sleeps, a lock, a condvar, a barrier and a channel: every edge the
/// trace recorded runs forward in time, and the path's pieces meet end to end and sum to the run's time
/// (`analyse` above checks those). 4 programs by default, 20 with `TESTS_FULL=1`.
#[test]
fn random_programs_give_paths_that_add_up_and_edges_that_run_forward() {
    let dir = common::scratch("perfgraph-critical", "random");
    let programs = if common::full() { 20 } else { 4 };
    for seed in 0..programs {
        let seed = seed.to_string();
        let t = timeline(&run(&dir, &["random", &seed]));
        let mut edges = 0;
        for line in &t.threads {
            for b in &line.blocked {
                if let Some(w) = b.waker {
                    assert!(w.at_ns <= b.end_ns, "seed {seed}: {b:?} in {}", line.name);
                    edges += 1;
                }
            }
            if let Some(w) = line.spawned_by {
                assert!(
                    w.at_ns <= line.start_ns,
                    "seed {seed}: {}'s start",
                    line.name
                );
                edges += 1;
            }
        }
        assert!(edges > 0, "seed {seed}: no edge recorded");
        let p = analyse(&t, &Options::default());
        let main = t.threads.iter().position(|l| l.name == "main").unwrap();
        assert_eq!(p.end_ns, t.threads[main].end_ns, "seed {seed}");
        assert_eq!(p.other.not_recorded_ns, 0, "seed {seed}: {:?}", p.other);
    }
}

/// Runs `examples/critical` with `args` and `PERFGRAPH_REPORT=critical`, its trace (`trace`, a file name
/// in `dir`) and its JSON report beside it: its stderr, and the JSON's `critical_path`.
fn run_reporting(dir: &Path, args: &[&str], trace: &str) -> (String, serde_json::Value) {
    let json = dir.join(format!("{trace}.report.json"));
    let out = Command::new(common::example("critical"))
        .args(args)
        .env("PERFGRAPH_TRACE", dir.join(trace))
        .env("PERFGRAPH_JSON", &json)
        .env("PERFGRAPH_REPORT", "critical")
        .env("PERFGRAPH_LIVE", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"", "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (stderr, report["critical_path"].clone())
}

/// The pieces on a Chrome trace's `critical path` row: (start, end, thread), in time order.
fn path_row(trace: &Path) -> Vec<(u64, u64, String)> {
    let text = std::fs::read_to_string(trace).unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1000.0).round() as u64;
    let mut pieces: Vec<(u64, u64, String)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim_end_matches(',')).ok())
        .filter(|e| e["cat"] == "critical" && e["ph"] == "X")
        .map(|e| {
            let start = ns(&e["ts"]);
            let thread = e["args"]["thread"].as_str().unwrap().to_owned();
            (start, start + ns(&e["dur"]), thread)
        })
        .collect();
    pieces.sort();
    pieces
}

#[test]
fn at_exit_the_table_the_json_and_the_trace_s_row_are_the_answer_read_from_the_trace() {
    let dir = common::scratch("perfgraph-critical", "at-exit");
    let (stderr, member) = run_reporting(&dir, &["fork-join"], "run.json");
    let trace = dir.join("run.json");
    // The table at exit is the command's on the run's own trace, to the byte: one clock, one reading.
    let table = command_table(&trace);
    assert!(
        stderr.contains(&table),
        "at exit:\n{stderr}\nfrom the trace:\n{table}"
    );
    // The known answer (A 400 ms shorter than B), in the JSON.
    let t = timeline(&trace);
    let p = analyse(&t, &Options::default());
    let row = |name: &str| {
        let rows = member["sections"].as_array().unwrap();
        let row = rows.iter().find(|s| s["name"] == name);
        row.unwrap_or_else(|| panic!("no {name} in {member}"))
            .clone()
    };
    assert_eq!(row("work_a")["path_ns"], 0);
    assert!(row("work_b")["path_ns"].as_f64().unwrap() >= 600.0 * MS);
    let slack = row("work_a")["slack_ns"].as_f64().unwrap();
    assert!((slack - 400.0 * MS).abs() <= 20.0 * MS, "slack {slack} ns");
    assert_eq!(member["end_thread"], "main");
    assert_eq!(member["length_ns"], p.length_ns);
    assert_eq!(member["pieces"], p.pieces.len());
    // The trace's `critical path` row: those pieces, end to end; the reader passes over it.
    let expect: Vec<(u64, u64, String)> = p
        .pieces
        .iter()
        .map(|x| {
            (
                x.start_ns,
                x.end_ns,
                t.threads[x.thread as usize].name.clone(),
            )
        })
        .collect();
    assert_eq!(path_row(&trace), expect);
    assert!(t.threads.iter().all(|l| l.name != "critical path"));
}

#[test]
fn at_exit_a_perfetto_trace_has_the_path_on_a_track_of_its_own() {
    let dir = common::scratch("perfgraph-critical", "at-exit-pftrace");
    let (stderr, member) = run_reporting(&dir, &["pipeline"], "run.pftrace");
    assert!(stderr.contains("\nCritical Path:\n"), "{stderr}");
    let length = member["length_ns"].as_u64().unwrap();
    let Some(v) = common::check_pftrace(&dir.join("run.pftrace"), "the critical path's track")
    else {
        return;
    };
    let path = v["critical_path"].as_array().unwrap();
    assert_eq!(path.len() as u64, member["pieces"].as_u64().unwrap());
    let dur = |x: &serde_json::Value| x[3].as_u64().unwrap() - x[2].as_u64().unwrap();
    assert_eq!(path.iter().map(dur).sum::<u64>(), length);
    let on_consumer: u64 = path.iter().filter(|x| x[1] == "consumer").map(dur).sum();
    assert!(
        on_consumer * 10 >= length * 9,
        "{on_consumer} of {length} ns"
    );
}

#[test]
fn at_exit_a_timeline_past_the_output_budget_is_dropped_and_the_table_says_so() {
    let dir = common::scratch("perfgraph-critical", "at-exit-budget");
    let json = dir.join("report.json");
    // Two million calls: 160 MB of timeline counted at twice a call's 40 bytes, past the 64 MiB budget
    // however many a busy machine's rings lose.
    let out = Command::new(common::example("critical"))
        .args(["many", "2000000"])
        .env("PERFGRAPH_JSON", &json)
        .env("PERFGRAPH_REPORT", "critical")
        .env("PERFGRAPH_LIVE", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = "not worked out: the run's calls and waits (";
    let line = stderr
        .lines()
        .skip_while(|l| *l != "Critical Path:")
        .nth(1)
        .unwrap_or_else(|| panic!("no table:\n{stderr}"));
    assert!(line.starts_with(why), "{stderr}");
    assert!(
        line.ends_with(
            "kept by then) passed perfgraph's 64 MiB output budget; write a trace \
             (PERFGRAPH_TRACE=run.json) and run `perfgraph report --critical-path run.json`"
        ),
        "{line}"
    );
    // Kept until the budget said no: some 800,000 calls, not the two million.
    let kept: u64 = line[why.len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((500_000..1_000_000).contains(&kept), "{kept}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["critical_path"]["error"].as_str(), Some(line));
}
