//! The truth harness's shared part: running `examples/truth`, reading what it measured itself, and the
//! tolerances every output is held to against it (`tests/truth.rs`, `tests/truth_live.rs`).
//!
//! * Durations and times: within 1% or 2 ms of the program's own `Instant`, whichever is larger, plus the
//!   output's own printed resolution (a live line's 0.01 s rounds by up to 5 ms). The program times each
//!   call twice, inside the `#[timed]` guard and around the call ([`Bounds`]): a figure must lie between
//!   the two, each widened by that tolerance, since the OS may preempt the thread between perfgraph's
//!   clock read and the program's.
//! * Counts, bytes and counter values: exact.
//!
//! Each check adds its error to a [`Worst`] table, printed at the end of a test: the largest error seen
//! per output, the figure the harness reports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod bounds;
pub use bounds::{Bounds, Durations};

/// One call the program timed itself (ns since its zero, taken before its first perfgraph call): inside
/// its `#[timed]` guard (`start_ns`, `end_ns`) and around it (`outer_start_ns`, `outer_end_ns`).
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub thread: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub outer_start_ns: u64,
    pub outer_end_ns: u64,
    /// A timed future's polls timed from inside, summed: the low bound of its busy time.
    pub inner_busy_ns: Option<u64>,
}

impl Call {
    /// Its duration (a future's life): between the inner and the outer interval.
    pub fn duration(&self) -> Bounds {
        Bounds {
            low: self.end_ns - self.start_ns,
            high: self.outer_end_ns - self.outer_start_ns,
        }
    }

    /// Its time in the section, what perfgraph adds to a total: its duration, or a future's busy time
    /// (inside its polls: no less than its polls timed from inside, no more than its life).
    pub fn busy(&self) -> Bounds {
        let d = self.duration();
        Bounds {
            low: self.inner_busy_ns.unwrap_or(d.low),
            high: d.high,
        }
    }

    /// When perfgraph saw it start: between the outer start and the inner one.
    pub fn start(&self) -> Bounds {
        Bounds {
            low: self.outer_start_ns,
            high: self.start_ns,
        }
    }

    /// When perfgraph saw it end: between the inner end and the outer one.
    pub fn end(&self) -> Bounds {
        Bounds {
            low: self.end_ns,
            high: self.outer_end_ns,
        }
    }
}

/// What the program measured itself (`examples/truth.rs` writes it).
#[derive(Debug, Clone)]
pub struct Truth {
    pub calls: Vec<Call>,
    /// The whole file, for the figures that are not calls (locks, counters, allocations...).
    pub raw: Value,
    /// The run's length timed from outside: from spawning the program to its exit.
    pub outside_ns: u64,
}

impl Truth {
    pub fn read(path: &Path, outside_ns: u64) -> Truth {
        let raw: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let future = &raw["future"];
        let calls = raw["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let ns = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("no {k} in {c}"));
                let name = c["name"].as_str().unwrap().to_owned();
                let busy =
                    (future["name"] == name.as_str()).then(|| ns_of(future, "inner_busy_ns"));
                Call {
                    thread: c["thread"].as_str().unwrap().to_owned(),
                    start_ns: ns("start_ns"),
                    end_ns: ns("end_ns"),
                    outer_start_ns: ns("outer_start_ns"),
                    outer_end_ns: ns("outer_end_ns"),
                    inner_busy_ns: busy,
                    name,
                }
            })
            .collect();
        Truth {
            calls,
            raw,
            outside_ns,
        }
    }

    /// The calls of section `name`, in the order they ended.
    pub fn calls_of(&self, name: &str) -> Vec<&Call> {
        self.calls.iter().filter(|c| c.name == name).collect()
    }

    /// The total time of section `name` (ns), over all its calls (a future's: busy time).
    pub fn total(&self, name: &str) -> Bounds {
        self.calls_of(name).iter().map(|c| c.busy()).sum()
    }

    /// The one call of section `name`.
    pub fn one(&self, name: &str) -> &Call {
        let calls = self.calls_of(name);
        assert_eq!(calls.len(), 1, "{name}: {calls:?}");
        calls[0]
    }

    /// The timed sections with one call each, for start-time and duration checks.
    pub fn single_calls(&self) -> Vec<&Call> {
        let mut counts = BTreeMap::<&str, usize>::new();
        for c in &self.calls {
            *counts.entry(&c.name).or_default() += 1;
        }
        self.calls
            .iter()
            .filter(|c| counts[c.name.as_str()] == 1)
            .collect()
    }
}

/// `key` of `v`, a number of ns.
fn ns_of(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// One call path's truth ([`Truth::paths_on`]): its calls, and its total and self time where the program
/// timed every call in it (`tick`'s calls are counted, not timed, so `tick` has no times and `ticks` no
/// self time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathTruth {
    pub calls: u64,
    /// Its calls' time in the section (a future's: busy time).
    pub total: Option<Bounds>,
    /// Total less its children's totals: the low bound less their high ones, and the other way round.
    pub self_time: Option<Bounds>,
    /// The durations of its calls (a future's: its life), when all were timed.
    pub durations: Option<Durations>,
}

impl Truth {
    /// The call path of `call` (section names, outermost first, without the program root): the calls on
    /// its thread that enclose it, by start.
    pub fn path_of(&self, call: &Call) -> Vec<String> {
        let mut outer: Vec<&Call> = self
            .calls
            .iter()
            .filter(|c| {
                c.thread == call.thread
                    && c.start_ns <= call.start_ns
                    && call.end_ns <= c.end_ns
                    && !std::ptr::eq(*c, call)
                    && (c.start_ns, c.end_ns) != (call.start_ns, call.end_ns)
            })
            .collect();
        outer.sort_by_key(|c| (c.start_ns, std::cmp::Reverse(c.end_ns)));
        outer
            .iter()
            .map(|c| c.name.clone())
            .chain([call.name.clone()])
            .collect()
    }

    /// Every call path the program ran, on `thread` (all threads merged by path with `None`), with its
    /// truth. `tick`'s calls (counted, not timed) are under `ticks` and `phase` (1,000 a phase).
    pub fn paths_on(&self, thread: Option<&str>) -> BTreeMap<Vec<String>, PathTruth> {
        let mut paths = BTreeMap::<Vec<String>, PathTruth>::new();
        let mut phases = 0;
        for call in self
            .calls
            .iter()
            .filter(|c| thread.is_none_or(|t| t == c.thread))
        {
            let path = self.path_of(call);
            let p = paths.entry(path).or_default();
            p.calls += 1;
            p.total = Some(p.total.unwrap_or_default() + call.busy());
            p.durations
                .get_or_insert_with(Durations::default)
                .extend([call.duration()]);
        }
        for (path, p) in paths.iter() {
            if path.last().is_some_and(|n| n == "phase") {
                phases += p.calls;
            }
        }
        let ticks = self.raw["tick_calls"].as_u64().unwrap_or(0);
        let parents: Vec<Vec<String>> = paths.keys().cloned().collect();
        for parent in parents {
            let under = match parent.last().map(String::as_str) {
                Some("ticks") => ticks - 1_000 * phases,
                Some("phase") => 1_000 * paths[&parent].calls,
                _ => continue,
            };
            let mut path = parent.clone();
            path.push("tick".to_owned());
            paths.insert(
                path,
                PathTruth {
                    calls: under,
                    ..PathTruth::default()
                },
            );
        }
        // Self = total - the children's totals, known where every child's total is.
        let totals: Vec<(Vec<String>, Option<Bounds>)> =
            paths.iter().map(|(k, v)| (k.clone(), v.total)).collect();
        for (path, p) in paths.iter_mut() {
            let children = totals
                .iter()
                .filter(|(k, _)| k.len() == path.len() + 1 && k.starts_with(path));
            let mut sum = Some(Bounds::default());
            for (_, total) in children {
                sum = sum.zip(*total).map(|(a, b)| a + b);
            }
            p.self_time = p.total.zip(sum).map(|(t, c)| t - c);
        }
        paths
    }

    /// The threads that ran sections, each with its calls (futures counted once, `tick`'s added).
    pub fn threads(&self) -> BTreeMap<String, Vec<&Call>> {
        let mut threads = BTreeMap::<String, Vec<&Call>>::new();
        for c in &self.calls {
            threads.entry(c.thread.clone()).or_default().push(c);
        }
        threads
    }

    /// The run's length as the program timed it (ns from its zero to the end of its run).
    pub fn wall_ns(&self) -> u64 {
        self.raw["wall_ns"].as_u64().unwrap()
    }

    /// The run's length as perfgraph times it (its root's total): from its runtime's start, at the first
    /// call into perfgraph, which lies between the program's zero and `work`'s inner start (a slow
    /// start-up of perfgraph's, or a preemption, inside `work`'s guard falls between them), to the end of
    /// the run. That end comes at the exit, after the program read its end: the high bound is that
    /// reading, the exit's delay unknown to the program (the run timed from outside bounds it).
    pub fn run_length(&self) -> Bounds {
        let wall = self.wall_ns();
        Bounds {
            low: wall - self.one("work").start_ns,
            high: wall,
        }
    }

    /// When the program had joined `thread` (ns since its zero): it had exited by then.
    pub fn joined_ns(&self, thread: &str) -> Option<u64> {
        self.raw["joined_ns"][thread].as_u64()
    }

    /// The lock acquisitions: (thread, wait ns, hold ns), in the order they were released.
    pub fn lock_acquisitions(&self) -> Vec<(String, u64, u64)> {
        self.raw["locks"]["acquisitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["thread"].as_str().unwrap().to_owned(),
                    a["wait_ns"].as_u64().unwrap(),
                    a["hold_ns"].as_u64().unwrap(),
                )
            })
            .collect()
    }
}

/// The largest duration difference allowed against the truth `true_ns`: 1% or 2 ms, whichever is larger.
pub fn tolerance_ns(true_ns: u64) -> u64 {
    (true_ns / 100).max(2_000_000)
}

/// What a percentile may be off by past its truth `exact` (the program's bounds on the `p`th
/// percentile), by perfgraph's histogram alone: it gives the midpoint of the log-linear bucket the call
/// falls in, re-bucketed from ticks to ns, at most 1.6% off (`perfgraph_core::Latency::percentile`). The
/// shortest and longest calls (`p` 0 and 100) are kept exactly.
pub fn histogram_ns(p: f64, exact: Bounds) -> u64 {
    if p <= 0.0 || p >= 100.0 {
        0
    } else {
        exact.high * 16 / 1000
    }
}

/// The largest error seen, per output (ns for times; counts must be exact, so they add nothing).
#[derive(Debug, Default)]
pub struct Worst {
    by_output: BTreeMap<String, (u64, String)>,
    pub checks: usize,
    failures: Vec<String>,
}

impl Worst {
    /// Checks that `output`'s `what` (`got_ns`) lies between the truth's bounds, each widened by the
    /// tolerance of the low one (the inner interval's, for a duration) plus `resolution_ns`, the output's
    /// own rounding; the error noted is the distance outside the bounds (0 within).
    pub fn time(
        &mut self,
        output: &str,
        what: &str,
        got_ns: u64,
        truth: Bounds,
        resolution_ns: u64,
    ) {
        self.checks += 1;
        let error = if got_ns < truth.low {
            truth.low - got_ns
        } else {
            got_ns.saturating_sub(truth.high)
        };
        let entry = self
            .by_output
            .entry(output.to_owned())
            .or_insert((0, String::new()));
        if error >= entry.0 {
            *entry = (error, what.to_owned());
        }
        if error > tolerance_ns(truth.low) + resolution_ns {
            let ms = |ns: u64| ns as f64 / 1e6;
            let truth = match truth.low == truth.high {
                true => format!("{:.3}", ms(truth.low)),
                false => format!("{:.3} to {:.3}", ms(truth.low), ms(truth.high)),
            };
            self.failures.push(format!(
                "{output}: {what}: {:.3} ms, true {truth} ms (off by {:.3} ms)",
                ms(got_ns),
                ms(error)
            ));
        }
    }

    /// Checks that `output`'s `what` (`got_ns`) lies between `low_ns` and `high_ns`, where the program
    /// knows only bounds (a thread's exit lies between its last call's end and its join), each widened
    /// by the tolerance and `resolution_ns`; the error noted is the distance outside them (0 within).
    pub fn between(
        &mut self,
        output: &str,
        what: &str,
        got_ns: u64,
        (low_ns, high_ns): (u64, u64),
        resolution_ns: u64,
    ) {
        let nearest = got_ns.clamp(low_ns, high_ns.max(low_ns));
        self.time(output, what, got_ns, Bounds::single(nearest), resolution_ns);
    }

    /// Checks that `output`'s `what` equals the truth exactly.
    pub fn exact<T: PartialEq + std::fmt::Debug>(
        &mut self,
        output: &str,
        what: &str,
        got: T,
        truth: T,
    ) {
        self.checks += 1;
        self.by_output
            .entry(output.to_owned())
            .or_insert((0, String::new()));
        if got != truth {
            self.failures
                .push(format!("{output}: {what}: {got:?}, true {truth:?}"));
        }
    }

    /// Prints the largest error per output; panics with every failure, if any.
    pub fn finish(self, test: &str) {
        eprintln!("truth harness, {test}: {} checks", self.checks);
        for (output, (error, what)) in &self.by_output {
            eprintln!(
                "  {output:<24} largest error {:>8.3} ms ({what})",
                *error as f64 / 1e6
            );
        }
        assert!(
            self.failures.is_empty(),
            "{test}: {} of {} checks failed:\n  {}",
            self.failures.len(),
            self.checks,
            self.failures.join("\n  ")
        );
    }
}

/// Whether the long form runs (`TRUTH_FULL=1`, or `TESTS_FULL=1`; `.ci/run` sets both): the run that goes
/// past a minute.
pub fn full() -> bool {
    std::env::var("TRUTH_FULL").is_ok_and(|v| v == "1") || super::full()
}

/// `examples/truth` with perfgraph's settings cleared, then `envs`, and `TRUTH_OUT` in `dir`.
pub fn command(dir: &Path, envs: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(super::example("truth"));
    for (name, _) in std::env::vars() {
        if name.starts_with("PERFGRAPH_") || name.starts_with("TRUTH_") || name.starts_with("OTEL_")
        {
            cmd.env_remove(name);
        }
    }
    cmd.env("XDG_RUNTIME_DIR", dir)
        .env("TRUTH_OUT", truth_path(dir))
        .envs(envs.iter().copied())
        .stdin(Stdio::null());
    cmd
}

/// Builds `examples/truth` (once per test process) when its binary is missing or older than a source it
/// is built from: `cargo test --test truth` builds the test alone, not the examples, and an edit of
/// perfgraph-core would otherwise be tested with the program built before it. Under `cargo test` (all
/// targets, as CI runs it) the example is fresh and nothing is built.
pub fn build_example() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap();
        let binary = profile_dir.join("examples").join("truth");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest.parent().unwrap();
        let sources = [
            root.join("perfgraph-core/src"),
            root.join("perfgraph-core/Cargo.toml"),
            root.join("perfgraph-macros/src"),
            manifest.join("examples/truth.rs"),
            manifest.join("Cargo.toml"),
        ];
        let built = std::fs::metadata(&binary).and_then(|m| m.modified()).ok();
        if built.is_some_and(|b| sources.iter().all(|s| newest(s) <= b)) {
            return;
        }
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
        cargo.current_dir(root).args([
            "build",
            "--quiet",
            "-p",
            "perfgraph-cli",
            "--example",
            "truth",
        ]);
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cargo.arg("--release");
            }
            Some(other) => {
                cargo.args(["--profile", other]);
            }
        }
        let out = cargo.output().unwrap();
        assert!(
            out.status.success(),
            "could not build examples/truth: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// The newest modification time of `path`, a file or every file below a directory.
fn newest(path: &Path) -> std::time::SystemTime {
    let meta = std::fs::metadata(path).unwrap();
    let mut t = meta.modified().unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            t = t.max(newest(&entry.unwrap().path()));
        }
    }
    t
}

pub fn truth_path(dir: &Path) -> PathBuf {
    dir.join("truth.json")
}

/// Runs `examples/truth` to its end (see [`command`]): its output, and its truth with the run's length
/// timed from outside.
pub fn run(dir: &Path, envs: &[(&str, &str)]) -> (Output, Truth) {
    let start = Instant::now();
    let out = command(dir, envs).output().unwrap();
    let outside = start.elapsed().as_nanos() as u64;
    assert!(
        out.status.success(),
        "examples/truth failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (out, Truth::read(&truth_path(dir), outside))
}

/// Two CPU burners for as long as they are kept: the busy-machine run.
pub struct Burners(Vec<super::Reaped>);

impl Burners {
    pub fn start() -> Burners {
        Burners(
            (0..2)
                .map(|_| {
                    super::Reaped(
                        Command::new("sh")
                            .args(["-c", "while :; do :; done"])
                            .stdout(Stdio::null())
                            .spawn()
                            .unwrap(),
                    )
                })
                .collect(),
        )
    }
}

/// Generous: only a hang fails it.
pub const PATIENCE: Duration = Duration::from_secs(120);
