//! The demo binaries, run end to end: the fine-grained loop instrumented, off by verbosity and compiled
//! out; the print thread's CPU time; the whole-process time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use perfgraph_benches::stats::median;

/// The two demo binaries, known to support `--fine-iters`.
pub struct Demo {
    on: PathBuf,
    off: PathBuf,
}

/// Whole-process wall time (spawn to exit) of a short demo run, in ms.
pub struct ProcessTime {
    /// The run's `--fine-iters`.
    pub iters: u64,
    /// Instrumented, default settings: median.
    pub on_median: f64,
    /// Instrumented, default settings: fastest.
    pub on_min: f64,
    /// Instrumented, `PERFGRAPH_VERBOSITY=off`: median.
    pub verbosity_off_median: f64,
    /// Compiled out: median.
    pub off_median: f64,
    /// Compiled out: fastest.
    pub off_min: f64,
    /// Runs of each build.
    pub runs: usize,
}

/// The fine-grained loop's time as the demo prints it, in ms: the median of [`FineLoop::runs`] runs.
pub struct FineLoop {
    /// `--fine-iters`.
    pub iters: u64,
    /// Runs per figure.
    pub runs: usize,
    /// Instrumented, default settings.
    pub on: Option<f64>,
    /// Instrumented, `PERFGRAPH_VERBOSITY=off`.
    pub verbosity_off: Option<f64>,
    /// Compiled out.
    pub off: Option<f64>,
}

/// One demo run's print-thread CPU time and wall time (spawn to exit), in ms.
pub struct CpuRun {
    /// CPU time of the thread named `perfgraph`.
    pub cpu_ms: f64,
    /// The run's wall time.
    pub wall_ms: f64,
}

/// The print thread's CPU time over whole demo runs, default settings: for each kind of run, the run with
/// the median CPU time of [`PrintThreadCpu::runs`].
pub struct PrintThreadCpu {
    /// `--idle-secs` and `--fine-secs`.
    pub secs: u64,
    /// Runs per figure.
    pub runs: usize,
    /// Whether this kernel gives per-thread `schedstat` (which the demo reads before `stat`).
    pub schedstat: bool,
    /// `--idle-secs`: one section that sleeps.
    pub idle: Option<CpuRun>,
    /// `--fine-secs`: the fine-grained loop.
    pub fine: Option<CpuRun>,
}

/// Everything measured on the demo.
pub struct DemoFigures {
    /// Whole-process time.
    pub process: ProcessTime,
    /// The fine-grained loop.
    pub fine_loop: FineLoop,
    /// The print thread's CPU time.
    pub print_cpu: PrintThreadCpu,
}

/// Runs of the demo per print-thread CPU figure.
const CPU_RUNS: usize = 3;

/// Runs of the demo per fine-loop figure.
const FINE_RUNS: usize = 5;

impl Demo {
    /// The demo, if both binaries exist and understand `--fine-iters`.
    pub fn probe(on: &Path, off: &Path) -> Option<Demo> {
        for bin in [on, off] {
            let (out, _) = run_demo(bin, &["--fine-iters", "10"], &[])?;
            parse_after(&out, "iterations in")?;
        }
        Some(Demo {
            on: on.to_owned(),
            off: off.to_owned(),
        })
    }

    /// Whole-process wall time of a short run, instrumented (on, and off by verbosity) and compiled out,
    /// interleaved so drift hits all three alike.
    pub fn process_time(&self) -> ProcessTime {
        const RUNS: usize = 41;
        let iters = 1000u64;
        let n = iters.to_string();
        let args = ["--fine-iters", n.as_str()];
        let (mut on, mut voff, mut off) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RUNS {
            if let Some((_, ms)) = run_demo(&self.on, &args, &[]) {
                on.push(ms);
            }
            if let Some((_, ms)) = run_demo(&self.on, &args, &[("PERFGRAPH_VERBOSITY", "off")]) {
                voff.push(ms);
            }
            if let Some((_, ms)) = run_demo(&self.off, &args, &[]) {
                off.push(ms);
            }
        }
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        ProcessTime {
            iters,
            on_min: min(&on),
            off_min: min(&off),
            on_median: median(on, |&ms| ms).unwrap_or(f64::NAN),
            verbosity_off_median: median(voff, |&ms| ms).unwrap_or(f64::NAN),
            off_median: median(off, |&ms| ms).unwrap_or(f64::NAN),
            runs: RUNS,
        }
    }

    /// The rest of the demo's figures (the fine-grained loop, then the print thread's CPU time), with the
    /// whole-process time measured before.
    pub fn figures(&self, process: ProcessTime) -> DemoFigures {
        const ITERS: u64 = 2_000_000;
        let fine_loop = FineLoop {
            iters: ITERS,
            runs: FINE_RUNS,
            on: self.fine_loop(&self.on, ITERS, &[]),
            verbosity_off: self.fine_loop(&self.on, ITERS, &[("PERFGRAPH_VERBOSITY", "off")]),
            off: self.fine_loop(&self.off, ITERS, &[]),
        };
        const SECS: u64 = 5;
        let secs = SECS.to_string();
        let idle = self.cpu(&["--idle-secs", &secs]);
        let fine = self.cpu(&["--fine-secs", &secs]);
        DemoFigures {
            process,
            fine_loop,
            print_cpu: PrintThreadCpu {
                secs: SECS,
                runs: CPU_RUNS,
                schedstat: schedstat_available(),
                idle,
                fine,
            },
        }
    }

    /// Fine-loop time (ms) reported by the demo, median of [`FINE_RUNS`] runs.
    fn fine_loop(&self, bin: &Path, iters: u64, env: &[(&str, &str)]) -> Option<f64> {
        let n = iters.to_string();
        median(
            (0..FINE_RUNS)
                .filter_map(|_| {
                    let (out, _) = run_demo(bin, &["--fine-iters", &n], env)?;
                    parse_after(&out, "iterations in")
                })
                .collect(),
            |&ms| ms,
        )
    }

    /// Print-thread CPU time reported by the demo with `--cpu`, over [`CPU_RUNS`] runs: the run with the
    /// median CPU time, with its own wall time.
    fn cpu(&self, args: &[&str]) -> Option<CpuRun> {
        let mut args = args.to_vec();
        args.push("--cpu");
        let runs: Vec<CpuRun> = (0..CPU_RUNS)
            .filter_map(|_| {
                let (out, wall_ms) = run_demo(&self.on, &args, &[])?;
                let cpu_ms = parse_after(&out, "perfgraph thread cpu:")?;
                Some(CpuRun { cpu_ms, wall_ms })
            })
            .collect();
        median(runs, |r| r.cpu_ms)
    }
}

/// Whether this kernel gives per-thread `schedstat` (which the demo reads before `stat`).
fn schedstat_available() -> bool {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .is_some()
}

/// Runs `bin args` with `env`, stdout captured, stderr discarded; returns stdout and wall time (ms).
fn run_demo(bin: &Path, args: &[&str], env: &[(&str, &str)]) -> Option<(String, f64)> {
    let mut cmd = Command::new(bin);
    cmd.args(args).stderr(Stdio::null()).stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("PERFGRAPH_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd.output().ok()?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    out.status
        .success()
        .then(|| (String::from_utf8_lossy(&out.stdout).into_owned(), ms))
}

/// The number after `prefix` on the first stdout line that has it.
fn parse_after(stdout: &str, prefix: &str) -> Option<f64> {
    stdout.lines().find_map(|l| {
        let rest = &l[l.find(prefix)? + prefix.len()..];
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::parse_after;

    #[test]
    fn parse_after_reads_the_first_number_after_the_prefix() {
        let out = "fine loop\n2000000 iterations in 408.04 ms\nperfgraph thread cpu: 12.1 ms\n";
        assert_eq!(parse_after(out, "iterations in"), Some(408.04));
        assert_eq!(parse_after(out, "perfgraph thread cpu:"), Some(12.1));
        assert_eq!(parse_after(out, "missing"), None);
    }
}
