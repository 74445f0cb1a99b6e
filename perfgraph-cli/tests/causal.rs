//! Causal profiling's known answers: `perfgraph causal` runs each program of `examples/causal` with two of
//! its sections virtually sped up by 0, 25 and 50%, and each prediction is checked against the program
//! really made that much faster (its knob), timed by the program itself. For every tested speed-up the
//! prediction must agree with the real speed-up within max(3 percentage points, 2 × the prediction's 95%
//! interval's half-width), and a section's 0% point must stay within ±2%.
//!
//! * serial Amdahl: one thread, `a` 30% of each step (`b` the rest): the answer is 0.3·s (and 0.7·s);
//! * two threads joined at the end: `foo` 0.7 of `bar`: speeding `foo` gives 0, `bar` min(s, 30%);
//! * lock-bound: three threads, `outside` the lock and a longer `hold` inside it: 0 and s;
//! * a pipeline over a bounded `sync` channel: `produce` faster than `consume`: 0 and s (up to 62%).
//!
//! The default `cargo test` runs the serial Amdahl program, briefly (10 s profiled, its real runs beside
//! it); `CAUSAL_FULL=1` (`.ci/run`'s own
//! step, run alone: these compare wall times) runs all four at full size (20 s of profiling each), and also checks the overhead of
//! profiling against coz's mean of 17.6%. Each prints its table (`--nocapture` shows it);
//! `CAUSAL_PROGRAMS=lock,joined` runs only those.

mod common;

use std::path::Path;
use std::process::Command;

use common::{example, scratch};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// coz's mean overhead while profiling (CACM 2018).
const COZ_OVERHEAD: f64 = 0.176;

fn full() -> bool {
    std::env::var("CAUSAL_FULL").is_ok_and(|v| v == "1")
}

/// One known-answer program: its progress point and the two sections sped up.
struct Program {
    name: &'static str,
    progress: &'static str,
    sections: [&'static str; 2],
}

const AMDAHL: Program = Program {
    name: "amdahl",
    progress: "step",
    sections: ["a", "b"],
};

/// The sizes: seconds of the causal run, its experiments' length, seconds of each real run, and how many
/// real runs of each knob (interleaved).
struct Size {
    causal_s: f64,
    experiment_s: f64,
    real_s: f64,
    reps: usize,
}

fn size() -> Size {
    if full() {
        Size {
            causal_s: 20.0,
            experiment_s: 0.2,
            real_s: 0.8,
            reps: 4,
        }
    } else {
        Size {
            causal_s: 10.0,
            experiment_s: 0.1,
            real_s: 0.6,
            reps: 3,
        }
    }
}

/// `examples/causal` with perfgraph's settings cleared and live print off.
fn program(args: &[String]) -> Command {
    let mut c = Command::new(example("causal"));
    for (name, _) in std::env::vars() {
        if name.starts_with("PERFGRAPH_") {
            c.env_remove(name);
        }
    }
    c.env("PERFGRAPH_LIVE", "off").args(args);
    c
}

/// The program's own `period_ns` (ns per progress visit) in `stdout`.
fn period(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("visits="))
        .unwrap_or_else(|| panic!("no period in {stdout:?}"));
    line.split_once("period_ns=")
        .unwrap()
        .1
        .trim()
        .parse()
        .unwrap()
}

/// One real run of `p` with `knob` (`section=percent`, or none): its period.
fn real_run(p: &Program, seconds: f64, knob: Option<String>) -> f64 {
    let mut args = vec![p.name.to_owned(), seconds.to_string()];
    args.extend(knob);
    let out = program(&args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    period(&String::from_utf8_lossy(&out.stdout))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The real speed-ups: for each section and 25 and 50%, `1 − period / baseline period`, the median over
/// rounds of runs interleaved with the baseline's. Also the baseline period (the median).
fn real_speedups(p: &Program, s: &Size) -> (Vec<(String, u32, f64)>, f64) {
    let knobs: Vec<(String, u32)> = p
        .sections
        .iter()
        .flat_map(|sec| [25, 50].map(|pct| (sec.to_string(), pct)))
        .collect();
    let mut base = Vec::new();
    let mut runs: Vec<Vec<f64>> = vec![Vec::new(); knobs.len()];
    for _ in 0..s.reps {
        base.push(real_run(p, s.real_s, None));
        for (i, (sec, pct)) in knobs.iter().enumerate() {
            runs[i].push(real_run(p, s.real_s, Some(format!("{sec}={pct}"))));
        }
    }
    eprintln!(
        "{}: real periods (ns), without the knob {base:?}, with each {runs:?}",
        p.name
    );
    // Each knob's run against the baseline's run of the same round, the median of those: a round's runs
    // are seconds apart, so the machine's drift over the whole measurement cancels.
    let real = knobs
        .into_iter()
        .zip(runs)
        .map(|((sec, pct), r)| {
            let paired = r.iter().zip(&base).map(|(k, b)| 1.0 - k / b).collect();
            (sec, pct, median(paired))
        })
        .collect();
    (real, median(base))
}

/// What `perfgraph causal` predicted: (section, speed-up, estimate, half-width), and the profiled run's
/// own period.
struct Predicted {
    cells: Vec<(String, u32, f64, f64)>,
    period_ns: f64,
    seconds: f64,
}

fn predict(p: &Program, s: &Size, dir: &Path) -> Predicted {
    let json = dir.join(format!("{}.json", p.name));
    let mut c = Command::new(CLI);
    c.args(["causal", "--progress", p.progress, "--speedups", "0,25,50"])
        .args(["--section", p.sections[0], "--section", p.sections[1]])
        .arg("--experiment")
        .arg(s.experiment_s.to_string())
        .arg("-o")
        .arg(dir.join(format!("{}.coz", p.name)))
        .arg("--json")
        .arg(&json)
        .arg("--")
        .arg(example("causal"))
        .args([p.name.to_owned(), s.causal_s.to_string()]);
    for (name, _) in std::env::vars() {
        if name.starts_with("PERFGRAPH_") {
            c.env_remove(name);
        }
    }
    c.env("PERFGRAPH_LIVE", "off");
    let started = std::time::Instant::now();
    let out = c.output().unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{out:?}");
    eprintln!("{stdout}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cells = doc["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let half = (c["high"].as_f64().unwrap() - c["low"].as_f64().unwrap()) / 2.0;
            (
                c["section"].as_str().unwrap().to_owned(),
                c["speedup"].as_u64().unwrap() as u32,
                c["program_speedup"].as_f64().unwrap(),
                half,
            )
        })
        .collect();
    Predicted {
        cells,
        period_ns: period(&stdout),
        seconds,
    }
}

/// Runs `p`'s check; returns its overhead while profiling (its period under `perfgraph causal` over its
/// real baseline's, less 1).
fn known_answer(p: &Program) -> f64 {
    let dir = scratch("perfgraph-causal", p.name);
    let s = size();
    let (predicted, (real, base)) = if full() {
        (predict(p, &s, &dir), real_speedups(p, &s))
    } else {
        // Briefly: the real runs beside the profiled one (the programs sleep: they hardly compete).
        std::thread::scope(|scope| {
            let real = scope.spawn(|| real_speedups(p, &s));
            (predict(p, &s, &dir), real.join().unwrap())
        })
    };
    let mut failures = Vec::new();
    eprintln!("{}: section  speed-up  predicted (±half)  real", p.name);
    for (sec, pct, est, half) in &predicted.cells {
        let tolerance = if *pct == 0 {
            0.02
        } else {
            0.03_f64.max(2.0 * half)
        };
        let truth = if *pct == 0 {
            0.0
        } else {
            real.iter()
                .find(|r| r.0 == *sec && r.1 == *pct)
                .map_or(f64::NAN, |r| r.2)
        };
        let ok = (est - truth).abs() <= tolerance;
        eprintln!(
            "{}: {sec:8} {pct:>3}%  {:+6.1}% (±{:.1})  {:+6.1}%  {}",
            p.name,
            est * 100.0,
            half * 100.0,
            truth * 100.0,
            if ok { "ok" } else { "MISSED" }
        );
        if !ok {
            failures.push(format!(
                "{sec} at {pct}%: predicted {est:.3}, real {truth:.3}"
            ));
        }
    }
    let overhead = predicted.period_ns / base - 1.0;
    eprintln!(
        "{}: answered in {:.0} s; overhead while profiling {:+.1}% ({:.3} ms a visit, {:.3} ms without)",
        p.name,
        predicted.seconds,
        overhead * 100.0,
        predicted.period_ns / 1e6,
        base / 1e6
    );
    let tested = predicted.cells.iter().filter(|c| c.1 != 0).count();
    assert_eq!(
        tested, 4,
        "every section at 25 and 50%: {:?}",
        predicted.cells
    );
    assert!(failures.is_empty(), "{}: {failures:?}", p.name);
    overhead
}

#[test]
fn serial_amdahl_predicts_the_fraction_times_the_speedup() {
    if full() || common::full() {
        // `.ci/run` sets TESTS_FULL for the whole suite, and runs this binary again alone with CAUSAL_FULL.
        eprintln!(
            "causal: the serial Amdahl program did not run here: at full size it runs with the three \
             others (CAUSAL_FULL=1, .ci/run's own step)"
        );
        return;
    }
    known_answer(&AMDAHL);
}

#[test]
fn joined_lock_bound_and_pipeline_programs_and_the_overhead() {
    if !full() {
        eprintln!(
            "causal: the joined, lock-bound and pipeline programs did not run: they run at full size, \
             alone, in .ci/run's own step (CAUSAL_FULL=1)"
        );
        return;
    }
    let programs = [
        Program {
            name: "joined",
            progress: "round",
            sections: ["foo", "bar"],
        },
        Program {
            name: "lock",
            progress: "item",
            sections: ["outside", "hold"],
        },
        Program {
            name: "pipeline",
            progress: "item",
            sections: ["produce", "consume"],
        },
    ];
    // CAUSAL_PROGRAMS=lock,joined runs only those (to look at one; the overhead's mean is then theirs).
    let only = std::env::var("CAUSAL_PROGRAMS").unwrap_or_default();
    let chosen = |p: &&Program| only.is_empty() || only.split(',').any(|n| n == p.name);
    let overheads: Vec<f64> = std::iter::once(&AMDAHL)
        .chain(&programs)
        .filter(chosen)
        .map(known_answer)
        .collect();
    let mean = overheads.iter().sum::<f64>() / overheads.len() as f64;
    eprintln!(
        "causal: mean overhead while profiling {:+.1}%",
        mean * 100.0
    );
    assert!(mean <= COZ_OVERHEAD, "{overheads:?}");
}
