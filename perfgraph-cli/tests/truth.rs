//! The truth harness: `examples/truth` times every call itself (its own `Instant`, inside the `#[timed]`
//! guard and around the call), counts what it does and writes that as JSON; each test runs it once (or
//! twice) and holds every figure of every output perfgraph wrote to that truth, between those two bounds
//! widened by 1% or 2 ms (whichever is larger) plus the output's own printed resolution, counts exact
//! (`tests/common/truth.rs`).
//!
//! * live lines and every `PERFGRAPH_REPORT=all` table on stderr (`truth/report.rs`), the interval lines
//!   (`truth/interval.rs`);
//! * the call-tree JSON and the folded stacks (`truth/files.rs`);
//! * the trace, Chrome JSON and Perfetto protobuf, every call's duration and start (`truth/trace.rs`,
//!   the protobuf read by `truth/pftrace.py` with Perfetto's own Python classes);
//! * the run's length.
//!
//! Runs: the default clock (the TSC here) with every output, the TSC with the Perfetto trace, the
//! monotonic clock, a drifting clock (the calibration moves during the run) with each trace format, a
//! busy machine (two CPU burners), and with `TRUTH_FULL=1` (`.ci/run`) a run whose sections start a
//! minute in. Each test prints the largest error per output (`--nocapture` shows it when it passes).

mod common;
mod truth {
    pub mod files;
    pub mod interval;
    pub mod report;
    pub mod text;
    pub mod trace;
}

use std::path::{Path, PathBuf};

use common::truth::{self as t, Burners, Truth, Worst};
use truth::{files, interval, report, trace};

/// How deep the interval lines go (`PERFGRAPH_INTERVAL_DEPTH`): down to `work;ticks;tick`.
const INTERVAL_DEPTH: usize = 3;

/// One run of the program: its stderr, its truth, and its directory (the output files), removed when the
/// test passes, kept for a look when it fails (`common::Scratch`).
struct Run {
    stderr: String,
    truth: Truth,
    dir: common::Scratch,
}

impl Run {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// The busy-machine test runs alone (its burners would load the other tests' runs too, which then wait for a
/// core at any instant of theirs); the others run side by side, two at a time on two cores.
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs `examples/truth` in a scratch directory named `name` with `envs`; `{dir}` in a value is that
/// directory.
fn run(name: &str, envs: &[(&str, &str)]) -> Run {
    let _side_by_side = ALONE.read().unwrap_or_else(|e| e.into_inner());
    run_now(name, envs)
}

fn run_now(name: &str, envs: &[(&str, &str)]) -> Run {
    let dir = common::scratch("truth", name);
    let envs: Vec<(String, String)> = envs
        .iter()
        .map(|(k, v)| (k.to_string(), v.replace("{dir}", dir.to_str().unwrap())))
        .collect();
    let refs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    t::build_example();
    let (out, truth) = t::run(&dir, &refs);
    // Beside the output files, for a look when the test fails.
    std::fs::write(dir.join("stderr.txt"), &out.stderr).unwrap();
    Run {
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        truth,
        dir,
    }
}

/// Every output but the Perfetto trace: the reports, the JSON, the folded stacks, the Chrome trace, the
/// interval lines, the live lines.
const EVERYTHING: &[(&str, &str)] = &[
    ("PERFGRAPH_REPORT", "all"),
    ("PERFGRAPH_JSON", "{dir}/run.json"),
    ("PERFGRAPH_FOLDED", "{dir}/run.folded"),
    ("PERFGRAPH_TRACE", "{dir}/trace.json"),
    ("PERFGRAPH_INTERVAL", "0.5"),
    ("PERFGRAPH_INTERVAL_DEPTH", "3"),
];

fn check_everything(w: &mut Worst, r: &Run) {
    report::live_lines(w, &r.stderr, &r.truth);
    report::tables(w, &r.stderr, &r.truth);
    interval::intervals(w, &r.stderr, &r.truth, INTERVAL_DEPTH);
    files::json(w, &r.file("run.json"), &r.truth);
    files::folded(w, &r.file("run.folded"), &r.truth);
    trace::check(
        w,
        "chrome trace",
        &trace::chrome(&r.file("trace.json")),
        &r.truth,
    );
}

/// The Perfetto trace of `r`, if a Python with Perfetto's classes is here (else it says so, visibly).
fn check_perfetto(w: &mut Worst, test: &str, r: &Run, file: &Path) {
    if let Some(python) = trace::perfetto_python(test) {
        trace::check(
            w,
            "perfetto trace",
            &trace::perfetto(&python, file),
            &r.truth,
        );
    }
}

#[test]
fn truth_tsc_every_output() {
    let r = run("tsc", EVERYTHING);
    let mut w = Worst::default();
    check_everything(&mut w, &r);
    w.finish("truth_tsc_every_output");
}

#[test]
fn truth_tsc_perfetto() {
    let r = run(
        "tsc-pftrace",
        &[
            ("PERFGRAPH_TRACE", "{dir}/trace.pftrace"),
            ("PERFGRAPH_JSON", "{dir}/run.json"),
        ],
    );
    let mut w = Worst::default();
    report::live_lines(&mut w, &r.stderr, &r.truth);
    files::json(&mut w, &r.file("run.json"), &r.truth);
    check_perfetto(&mut w, "truth_tsc_perfetto", &r, &r.file("trace.pftrace"));
    w.finish("truth_tsc_perfetto");
}

#[test]
fn truth_monotonic_clock() {
    let r = run(
        "monotonic",
        &[
            ("PERFGRAPH_CLOCK", "monotonic"),
            ("PERFGRAPH_REPORT", "all"),
            ("PERFGRAPH_JSON", "{dir}/run.json"),
            ("PERFGRAPH_TRACE", "{dir}/trace.json"),
        ],
    );
    let mut w = Worst::default();
    report::live_lines(&mut w, &r.stderr, &r.truth);
    report::tables(&mut w, &r.stderr, &r.truth);
    files::json(&mut w, &r.file("run.json"), &r.truth);
    trace::check(
        &mut w,
        "chrome trace",
        &trace::chrome(&r.file("trace.json")),
        &r.truth,
    );
    w.finish("truth_monotonic_clock");
}

/// A clock whose rate drifts by 0.4% from 0.7 s to 2.2 s: every figure must follow it.
#[test]
fn truth_drifting_clock_chrome() {
    let r = run(
        "drift-chrome",
        &[
            ("TRUTH_DRIFT", "1"),
            ("PERFGRAPH_JSON", "{dir}/run.json"),
            ("PERFGRAPH_TRACE", "{dir}/trace.json"),
        ],
    );
    let mut w = Worst::default();
    report::live_lines(&mut w, &r.stderr, &r.truth);
    files::json(&mut w, &r.file("run.json"), &r.truth);
    trace::check(
        &mut w,
        "chrome trace",
        &trace::chrome(&r.file("trace.json")),
        &r.truth,
    );
    w.finish("truth_drifting_clock_chrome");
}

#[test]
fn truth_drifting_clock_perfetto() {
    let r = run(
        "drift-pftrace",
        &[
            ("TRUTH_DRIFT", "1"),
            ("PERFGRAPH_JSON", "{dir}/run.json"),
            ("PERFGRAPH_TRACE", "{dir}/trace.pftrace"),
        ],
    );
    let mut w = Worst::default();
    report::live_lines(&mut w, &r.stderr, &r.truth);
    files::json(&mut w, &r.file("run.json"), &r.truth);
    check_perfetto(
        &mut w,
        "truth_drifting_clock_perfetto",
        &r,
        &r.file("trace.pftrace"),
    );
    w.finish("truth_drifting_clock_perfetto");
}

/// Both cores busy with two CPU burners: the counts stay exact, the times within the tolerance.
#[test]
fn truth_busy_machine() {
    let alone = ALONE.write().unwrap_or_else(|e| e.into_inner());
    let burners = Burners::start();
    let r = run_now("busy", EVERYTHING);
    drop(burners);
    drop(alone);
    let mut w = Worst::default();
    check_everything(&mut w, &r);
    w.finish("truth_busy_machine");
}

/// Sections a minute into the run (`TRUTH_MINUTE=1`), both trace formats: only with `TRUTH_FULL=1`.
#[test]
fn truth_after_a_minute() {
    if !t::full() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: truth_after_a_minute did not run: it takes a minute; TRUTH_FULL=1 (or TESTS_FULL=1) runs it (.ci/run sets both)"
        );
        return;
    }
    let perfetto = std::thread::spawn(|| {
        run(
            "minute-pftrace",
            &[
                ("TRUTH_MINUTE", "1"),
                ("PERFGRAPH_JSON", "{dir}/run.json"),
                ("PERFGRAPH_TRACE", "{dir}/trace.pftrace"),
            ],
        )
    });
    let r = run("minute", &[&[("TRUTH_MINUTE", "1")], EVERYTHING].concat());
    let p = perfetto.join().unwrap();
    let mut w = Worst::default();
    check_everything(&mut w, &r);
    report::live_lines(&mut w, &p.stderr, &p.truth);
    files::json(&mut w, &p.file("run.json"), &p.truth);
    check_perfetto(&mut w, "truth_after_a_minute", &p, &p.file("trace.pftrace"));
    w.finish("truth_after_a_minute");
}
