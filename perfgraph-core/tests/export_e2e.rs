//! Reports and exports end to end: this test binary runs the `workload` example's code in a child process
//! (itself, with `EXPORT_CHILD` set) with `PERFGRAPH_REPORT=all`, `PERFGRAPH_INTERVAL` and the three file
//! exports, then checks the child's stderr and reads every file back. Also: an unwritable path costs one
//! error line and nothing else, and `PERFGRAPH_TRACE_LIMIT` (a file size) cuts the trace with the rest
//! counted.

mod common;
#[path = "../examples/workload.rs"]
mod workload;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use workload::{CHUNKS, ITERATIONS, RESIDUALS, TOTAL_CALLS};

#[test]
fn child_entry() {
    if std::env::var_os("EXPORT_CHILD").is_some() {
        workload::run();
    }
}

struct Run {
    stderr: String,
    /// Removed when the run is dropped.
    dir: common::Scratch,
    program: String,
}

/// Runs the workload in a child with `env`; files go to a fresh directory named after `tag`.
fn run_child(tag: &str, env: &[(&str, String)]) -> Run {
    let dir = common::scratch(&format!("e2e-{tag}"));
    let exe = std::env::current_exe().unwrap();
    let mut cmd = common::child_command(&exe);
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("EXPORT_CHILD", "1")
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_VERBOSITY", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v.replace("{dir}", dir.to_str().unwrap()));
    }
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    let out = child.wait_with_output().unwrap();
    // Generous: catches a hang at exit, not slowness.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "child took {:?}",
        start.elapsed()
    );
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert!(out.status.success(), "child failed: {stderr}");
    Run {
        stderr,
        dir,
        program: exe.file_name().unwrap().to_string_lossy().into_owned(),
    }
}

/// A Chrome trace as the JSON array it is: its events, and the args of its closing `perfgraph trace end`
/// event (the last one, present only in a complete trace).
fn read_trace(path: &Path) -> (Vec<Value>, Value) {
    let trace = read_json(path);
    let events = trace.as_array().unwrap().clone();
    let end = events.last().unwrap();
    assert_eq!(end["name"], "perfgraph trace end", "the last event");
    let args = end["args"].clone();
    (events, args)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The cells of the table row whose first cell (trimmed) is `name`, after `heading`.
fn row<'a>(stderr: &'a str, heading: &str, name: &str) -> Vec<&'a str> {
    let table = &stderr[stderr
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading}"))..];
    let line = table
        .lines()
        .find(|l| l.split('|').nth(1).is_some_and(|c| c.trim() == name))
        .unwrap_or_else(|| panic!("no row {name} under {heading}:\n{table}"));
    line.split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// An interval line without its time (`[   1.050 s] `), or `None` for another line.
fn interval_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('[')?;
    let (time, body) = rest.split_once(" s] ")?;
    time.trim().parse::<f64>().ok()?;
    Some(body)
}

#[test]
fn all_reports_and_every_export() {
    let run = run_child(
        "all",
        &[
            ("PERFGRAPH_REPORT", "all".into()),
            ("PERFGRAPH_INTERVAL", "0.05".into()),
            ("PERFGRAPH_INTERVAL_DEPTH", "2".into()),
            ("PERFGRAPH_TRACE", "{dir}/trace.json".into()),
            ("PERFGRAPH_FOLDED", "{dir}/stacks.folded".into()),
            ("PERFGRAPH_JSON", "{dir}/tree.json".into()),
        ],
    );
    let err = &run.stderr;

    // Reports: MOOSE's headings in MOOSE's order, then ours; the exact header; exact counts.
    let at = |h: &str| err.find(h).unwrap_or_else(|| panic!("no {h:?} in:\n{err}"));
    assert!(at("\n\nPerformance Graph:\n") < at("\nHeaviest Branch:\n"));
    assert!(at("\nHeaviest Branch:\n") < at("\nHeaviest Sections:\n"));
    assert!(at("\nHeaviest Sections:\n") < at("\nThreads:\n"));
    let header = err
        .lines()
        .nth(err[..at("Performance Graph:")].lines().count() + 2)
        .unwrap();
    assert!(
        header.ends_with(
            "| Calls |   Self(s)  |   Avg(s)   |    %   | Mem(MB) |  Total(s)  |   Avg(s)   |    %   | Mem(MB) |"
        ),
        "{header}"
    );
    let root = row(err, "Performance Graph:", &run.program);
    assert_eq!(root[1], "1");
    assert_eq!(
        root[8], "100.00",
        "the root's total is the run's wall time: {root:?}"
    );
    assert_eq!(
        row(err, "Performance Graph:", "residual")[1],
        (ITERATIONS * RESIDUALS).to_string()
    );
    assert_eq!(
        row(err, "Performance Graph:", "assemble")[1],
        ITERATIONS.to_string()
    );
    assert_eq!(
        row(err, "Performance Graph:", "write_chunk")[1],
        CHUNKS.to_string()
    );
    assert_eq!(
        row(err, "Heaviest Sections:", "residual")[1],
        (ITERATIONS * RESIDUALS).to_string()
    );
    let worker = row(err, "Threads:", "io-worker");
    assert_eq!(worker[6], (1 + CHUNKS).to_string());
    // The default verbosity (1) skipped the workload's level-2 section: the footer names it.
    assert!(
        err.contains(
            "Not recorded: 1 section skipped by the verbosity (now 1): check_convergence; \
             PERFGRAPH_VERBOSITY=3 records every level."
        ),
        "{err}"
    );

    // Interval statistics: Preshing's lines for the top-level sections, each after the run's time, and
    // (PERFGRAPH_INTERVAL_DEPTH=2) their callees indented under them.
    let interval: Vec<&str> = err
        .lines()
        .filter_map(interval_line)
        .filter(|l| {
            l.starts_with("child_entry \"run\": ") || l.starts_with("io-worker \"write_output\": ")
        })
        .collect();
    assert!(!interval.is_empty(), "{err}");
    assert!(
        err.lines()
            .filter_map(interval_line)
            .any(|l| l.starts_with("child_entry   \"solve\": ")),
        "no nested line:\n{err}"
    );
    for line in &interval {
        let stats = line.split("\": ").nth(1).unwrap();
        let parts: Vec<&str> = stats.split(' ').collect();
        assert_eq!(parts.len(), 4, "{line}");
        let (inside, length) = parts[0].split_once('/').unwrap();
        assert!(
            inside.parse::<u64>().unwrap() <= length.parse::<u64>().unwrap() + 1,
            "{line}"
        );
        assert_eq!(parts[1], "ms");
        assert!(parts[2].ends_with('%') && parts[3].ends_with('x'), "{line}");
    }
    // Nothing else went to stderr but reports, footers and interval lines: no error lines.
    assert!(!err.contains("perfgraph: error"), "{err}");

    // Trace: one complete event per call, named threads, nesting by time, the memory counter.
    let (events, end) = read_trace(&run.dir.join("trace.json"));
    let complete: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(complete.len() as u64, TOTAL_CALLS);
    let count = |name: &str| complete.iter().filter(|e| e["name"] == name).count() as u64;
    assert_eq!(count("residual"), ITERATIONS * RESIDUALS);
    assert_eq!(count("write_chunk"), CHUNKS);
    let thread_names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(thread_names, ["child_entry", "io-worker"]);
    // The interval statistics as counter tracks of each thread: calls per second and the share of each
    // interval in top-level sections (never above 100%).
    let share: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "In sections % child_entry (tid 1)")
        .map(|e| {
            e["args"]["In sections % child_entry (tid 1)"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert!(
        !share.is_empty() && share.iter().all(|p| (0.0..=100.0).contains(p)),
        "{share:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["name"] == "Sections/s io-worker (tid 2)"),
        "no Sections/s track for io-worker"
    );
    let tid_of = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == "thread_name" && e["args"]["name"] == name)
            .unwrap()["tid"]
            .clone()
    };
    let span = |e: &Value| {
        let ts = e["ts"].as_f64().unwrap();
        (ts, ts + e["dur"].as_f64().unwrap())
    };
    let solve = span(complete.iter().find(|e| e["name"] == "solve").unwrap());
    for e in complete.iter().filter(|e| e["name"] == "residual") {
        let (s, t) = span(e);
        assert!(
            s >= solve.0 && t <= solve.1 + 0.001,
            "residual outside solve"
        );
        assert_eq!(e["tid"], tid_of("child_entry"));
        assert!(e["pid"].is_u64());
    }
    for e in complete.iter().filter(|e| e["name"] == "write_chunk") {
        assert_eq!(e["tid"], tid_of("io-worker"));
    }
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["args"]["MB"].as_f64().unwrap() > 1.0)
    );
    assert_eq!(end["dropped_ring_overflow"], 0);
    assert_eq!(end["dropped_past_trace_limit"], 0);
    assert_eq!(end["events"], TOTAL_CALLS);
    // The args: the section's level, and its live message where it has one.
    let solve = complete.iter().find(|e| e["name"] == "solve").unwrap();
    assert_eq!(solve["args"]["level"], 0);
    assert_eq!(solve["args"]["message"], "Solving");
    assert_eq!(
        complete.iter().find(|e| e["name"] == "residual").unwrap()["args"]["level"],
        1
    );

    // Folded stacks: every line `path count`, the kernels under their path.
    let folded = std::fs::read_to_string(run.dir.join("stacks.folded")).unwrap();
    for line in folded.lines() {
        let (path, ns) = line.rsplit_once(' ').unwrap();
        assert!(!path.is_empty() && ns.parse::<u64>().unwrap() > 0, "{line}");
    }
    assert!(
        folded.lines().any(|l| l.starts_with("run;solve;residual ")),
        "{folded}"
    );
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("write_output;write_chunk ")),
        "{folded}"
    );

    // Call-tree JSON: the merged tree, exact counts, the root is the program.
    let tree = read_json(&run.dir.join("tree.json"));
    assert_eq!(tree["format"], "perfgraph-call-tree");
    let nodes = tree["tree"].as_array().unwrap();
    assert_eq!(nodes[0]["name"], run.program.as_str());
    assert_eq!(nodes[0]["total_ns"], tree["wall_ns"]);
    let residual = nodes.iter().find(|n| n["name"] == "residual").unwrap();
    assert_eq!(residual["calls"], ITERATIONS * RESIDUALS);
    let parent = &nodes[residual["parent"].as_u64().unwrap() as usize];
    assert_eq!(parent["name"], "solve");
    assert_eq!(tree["threads"].as_array().unwrap().len(), 2);
}

#[test]
fn an_unwritable_path_is_one_error_line_and_the_rest_still_happens() {
    let run = run_child(
        "unwritable",
        &[
            ("PERFGRAPH_REPORT", "graph".into()),
            (
                "PERFGRAPH_TRACE",
                "/nonexistent-perfgraph-dir/trace.json".into(),
            ),
            // A directory cannot be written as a file.
            ("PERFGRAPH_JSON", "{dir}".into()),
            ("PERFGRAPH_FOLDED", "{dir}/stacks.folded".into()),
        ],
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("perfgraph: error"))
        .collect();
    assert_eq!(
        errors,
        [
            "perfgraph: error: cannot write PERFGRAPH_TRACE file \"/nonexistent-perfgraph-dir/trace.json\": \
             No such file or directory (os error 2)"
                .to_owned(),
            format!(
                "perfgraph: error: cannot write PERFGRAPH_JSON file {:?}: Is a directory (os error 21)",
                run.dir.display().to_string()
            ),
        ]
    );
    assert!(run.stderr.contains("\nPerformance Graph:\n"));
    let folded = std::fs::read_to_string(run.dir.join("stacks.folded")).unwrap();
    assert!(folded.contains("run;solve;residual "));
}

#[test]
fn the_trace_limit_cuts_the_trace_and_counts_the_rest() {
    let run = run_child(
        "limit",
        &[
            ("PERFGRAPH_TRACE", "{dir}/trace.json".into()),
            ("PERFGRAPH_TRACE_LIMIT", "4096".into()),
        ],
    );
    let path = run.dir.join("trace.json");
    let (events, end) = read_trace(&path);
    let written = events.iter().filter(|e| e["ph"] == "X").count() as u64;
    // How many calls fit depends on what came first (memory samples, thread names): on a busy machine the
    // samples taken before the first drain may fill the 4096 bytes alone. Not all of them fit, ever.
    assert!(written < TOTAL_CALLS, "{written}");
    // The limit holds but for the closing event: every byte before it is within the limit. (Its own length
    // is not the re-serialised event's: the file writes it with its separator and may move it to the next
    // page, as every event that would cross a page boundary.)
    let bytes = std::fs::read(&path).unwrap();
    let closing = bytes
        .windows(b"perfgraph trace end".len())
        .rposition(|w| w == b"perfgraph trace end")
        // Each event starts a line of its own.
        .and_then(|at| bytes[..at].windows(2).rposition(|w| w == b"\n{"))
        .expect("the closing event");
    let before = bytes[..closing]
        .iter()
        .rposition(|&b| !b.is_ascii_whitespace() && b != b',')
        .map_or(0, |i| i + 1);
    assert!(before <= 4096, "{before} bytes before the closing event");
    assert_eq!(end["dropped_past_trace_limit"], TOTAL_CALLS - written);
    assert_eq!(end["trace_limit_bytes"], 4096);
    let note = format!(
        "{} section calls are not in this trace",
        TOTAL_CALLS - written
    );
    assert!(end["missing"].as_str().unwrap().contains(&note), "{end}");
    let line = format!(
        "perfgraph: trace {:?}: {written} section calls written; {} section calls are not in this trace: \
         0 lost to ring overflow, {} past PERFGRAPH_TRACE_LIMIT=4096, 0 not written (disk full or reader \
         too slow) (the file says so too)",
        path.display().to_string(),
        TOTAL_CALLS - written,
        TOTAL_CALLS - written
    );
    assert!(run.stderr.lines().any(|l| l == line), "{}", run.stderr);
}

#[test]
fn interval_lines_never_split_a_live_line() {
    let run = run_child(
        "live",
        &[
            ("PERFGRAPH_LIVE", "on".into()),
            ("PERFGRAPH_TIME_LIMIT", "0.05".into()),
            ("PERFGRAPH_INTERVAL", "0.02".into()),
        ],
    );
    let err = &run.stderr;
    // Live print showed the solve while interval lines came in between.
    assert!(err.contains("Solving"), "{err}");
    let interval = |l: &str| l.contains("\"run\": ") || l.contains("\"write_output\": ");
    assert!(err.lines().filter(|l| interval(l)).count() >= 2, "{err}");
    for line in err.lines().filter(|l| interval(l)) {
        let body = interval_line(line).unwrap_or("");
        assert!(
            body.starts_with("child_entry \"run\": ")
                || body.starts_with("io-worker \"write_output\": "),
            "an interval line glued to other text: {line:?}\n{err}"
        );
    }
}

#[test]
fn a_file_that_takes_no_writes_is_given_up_at_exit_after_the_reports() {
    // Not `run_child`'s directory, which it empties first.
    let dir = common::scratch("e2e-pipe");
    // A named pipe nobody opens for reading: opening it for writing blocks for ever.
    let fifo = dir.join("trace.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let run = run_child(
        "fifo",
        &[
            ("PERFGRAPH_REPORT", "graph".into()),
            ("PERFGRAPH_TRACE", fifo.to_str().unwrap().into()),
        ],
    );
    let err = &run.stderr;
    // The reports came out before the stuck file, and the exit said what it gave up on.
    let report = err.find("\nPerformance Graph:\n").expect(err);
    let line = format!(
        "perfgraph: error: exit: writing PERFGRAPH_TRACE file {:?} made no progress for 2 s; gave up, and \
         the outputs after it are not written",
        fifo.display().to_string()
    );
    let gave_up = err
        .find(&line)
        .unwrap_or_else(|| panic!("no {line:?} in:\n{err}"));
    assert!(report < gave_up, "{err}");
}
