//! The streamed trace (`PERFGRAPH_TRACE`), measured in child processes of `record` itself
//! (`record --trace-child RATE SECONDS THREADS`): each of THREADS threads records a one-section leaf at
//! RATE sections a second (spinning between them; `max`: as fast as it can) for SECONDS, then the child
//! prints what it made and what it cost. The parent reads the losses from the child's stderr (the trace's
//! line, printed only when calls are missing) and the file's size.
//!
//! Figures: bytes per call of both formats; the highest rate per thread, of a ladder, at which two threads
//! lose nothing (and what the next rung loses, per thread); the recording threads' CPU time per section
//! with and without a trace; and a long two-thread run: the file's size, peak resident memory against the
//! same run without a trace, calls kept against calls made.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Rates per thread tried for the lossless figure, sections a second.
const LADDER: [u64; 9] = [
    100_000, 500_000, 1_000_000, 1_500_000, 2_000_000, 3_000_000, 4_000_000, 6_000_000, 8_000_000,
];

/// Seconds of each rung of the ladder.
pub const RUNG_SECONDS: u64 = 3;

/// Threads recording at once.
const THREADS: usize = 2;

/// The rate per thread of the deflation runs (`PERFGRAPH_TRACE_COMPRESS` off, on, auto).
pub const DEFLATE_RATE: u64 = 1_000_000;

/// The long run: rate per thread and seconds.
const LONG: (u64, u64) = (1_000_000, 30);

/// What a child reported, and what the parent saw.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Sections made, all threads.
    pub made: u64,
    /// Sections missing from the trace, all threads (from the trace's stderr line; 0 without one).
    pub lost: u64,
    /// The losses per thread as the trace's line states them (`rec-0: 12, rec-1: 40`), empty if none.
    pub lost_per_thread: String,
    /// The trace file's size, bytes (0 without a trace).
    pub bytes: u64,
    /// The recording threads' CPU time per section, ns (mean of the threads).
    pub cpu_ns_per_section: f64,
    /// The process's CPU time outside the recording threads, ns per section (the background thread,
    /// mostly).
    pub other_cpu_ns_per_section: f64,
    /// Peak resident memory (VmHWM), KiB.
    pub peak_kb: u64,
    /// Sections a second per thread achieved.
    pub rate: f64,
}

/// One rung of the ladder: the rate per thread and the runs of each format (each run twice: the machine is
/// shared, and a rate counts as lossless only if both runs lost nothing).
#[derive(Debug, Clone)]
pub struct Rung {
    pub rate: u64,
    pub chrome: [Run; 2],
    pub perfetto: [Run; 2],
    /// The 1-minute load average as the rung started (other work on the machine).
    pub load: f64,
}

/// Every trace figure.
#[derive(Debug, Clone, Default)]
pub struct TraceFigures {
    /// The rungs run, up to the first that lost calls in both formats.
    pub ladder: Vec<Rung>,
    /// As fast as the threads go, a fixed time: no trace, Chrome, Perfetto.
    pub cost: Option<[Run; 3]>,
    /// The long run `(rate, seconds, without a trace, with a Perfetto trace)`.
    pub long: Option<(u64, u64, Run, Run)>,
    /// Perfetto at [`DEFLATE_RATE`] with each `PERFGRAPH_TRACE_COMPRESS` (off, on, auto), one run each.
    pub deflate: Vec<(&'static str, Run)>,
}

/// Measures every figure in a scratch directory under `dir`.
pub fn measure(dir: &Path) -> TraceFigures {
    let dir = dir.join("trace");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let mut ladder = Vec::new();
    for rate in LADDER {
        let load = load_average();
        let twice =
            |file| [0, 1].map(|_| run(&dir, Some(file), None, &rate.to_string(), RUNG_SECONDS));
        let chrome = twice("t.json");
        let perfetto = twice("t.pftrace");
        eprintln!(
            "   trace at {rate}/s per thread (load {load}): chrome lost {} and {}, perfetto lost {} and {}",
            chrome[0].lost, chrome[1].lost, perfetto[0].lost, perfetto[1].lost
        );
        let done = chrome.iter().chain(&perfetto).all(|r| r.lost > 0);
        ladder.push(Rung {
            rate,
            chrome,
            perfetto,
            load,
        });
        if done {
            break;
        }
    }
    let deflate = ["off", "on", "auto"]
        .into_iter()
        .map(|mode| {
            let rate = DEFLATE_RATE.to_string();
            let r = run(&dir, Some("d.pftrace"), Some(mode), &rate, RUNG_SECONDS);
            eprintln!(
                "   perfetto, compress {mode}: {} bytes, lost {}",
                r.bytes, r.lost
            );
            (mode, r)
        })
        .collect();
    let cost = [None, Some("t.json"), Some("t.pftrace")].map(|f| run(&dir, f, None, "max", 2));
    let (rate, seconds) = LONG;
    let without = run(&dir, None, None, &rate.to_string(), seconds);
    let with = run(&dir, Some("long.pftrace"), None, &rate.to_string(), seconds);
    let _ = std::fs::remove_dir_all(&dir);
    TraceFigures {
        ladder,
        cost: Some(cost),
        long: Some((rate, seconds, without, with)),
        deflate,
    }
}

/// The 1-minute load average.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Runs one child with the trace written to `file` in `dir` (`None`: no trace), with
/// `PERFGRAPH_TRACE_COMPRESS=compress` when given.
fn run(dir: &Path, file: Option<&str>, compress: Option<&str>, rate: &str, seconds: u64) -> Run {
    let me = std::env::current_exe().expect("own path");
    let mut cmd = Command::new(me);
    cmd.args([
        "--trace-child",
        rate,
        &seconds.to_string(),
        &THREADS.to_string(),
    ])
    .env("PERFGRAPH_LIVE", "off")
    .env("PERFGRAPH_CAPTURE", "off");
    let path: Option<PathBuf> = file.map(|f| dir.join(f));
    if let Some(path) = &path {
        cmd.env("PERFGRAPH_TRACE", path);
    }
    if let Some(mode) = compress {
        cmd.env("PERFGRAPH_TRACE_COMPRESS", mode);
    }
    let out = cmd.output().expect("run the trace child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let figures: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("trace child: {e}\n{stdout}\n{stderr}"));
    let made = figures["made"].as_u64().unwrap_or(0);
    let (lost, lost_per_thread) = losses(&stderr);
    let bytes = path
        .as_ref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map_or(0, |m| m.len());
    if let Some(path) = &path {
        let _ = std::fs::remove_file(path);
    }
    let thread_cpu = figures["thread_cpu_ns"].as_u64().unwrap_or(0) as f64;
    let process_cpu = figures["process_cpu_ns"].as_u64().unwrap_or(0) as f64;
    Run {
        made,
        lost,
        lost_per_thread,
        bytes,
        cpu_ns_per_section: thread_cpu / made.max(1) as f64,
        other_cpu_ns_per_section: (process_cpu - thread_cpu).max(0.0) / made.max(1) as f64,
        peak_kb: figures["peak_kb"].as_u64().unwrap_or(0),
        rate: figures["rate"].as_f64().unwrap_or(0.0),
    }
}

/// From the trace's stderr line: calls missing, and the ring losses per thread as stated.
fn losses(stderr: &str) -> (u64, String) {
    let Some(line) = stderr
        .lines()
        .find(|l| l.contains(" section calls are not in this trace: "))
    else {
        return (0, String::new());
    };
    let after = line.split("section calls written; ").nth(1).unwrap_or(line);
    let total = after
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let per_thread = after
        .split("lost to ring overflow (")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or("")
        .to_owned();
    (total, per_thread)
}

#[perfgraph_core::timed(name = "trace::leaf", level = 1)]
fn leaf(i: u64) -> u64 {
    std::hint::black_box(i)
}

/// The child: `threads` threads record [`leaf`] at `rate` a second each (`max`: unpaced) for `seconds`;
/// prints `{"made", "thread_cpu_ns", "process_cpu_ns", "peak_kb", "rate"}` on stdout.
pub fn child(rate: &str, seconds: u64, threads: usize) {
    let rate: Option<u64> = rate.parse().ok();
    let run_for = Duration::from_secs(seconds);
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::Builder::new()
                .name(format!("rec-{t}"))
                .spawn(move || {
                    let begin = Instant::now();
                    let cpu0 = perfgraph_benches::thread_cpu_time();
                    let mut made = 0u64;
                    match rate {
                        Some(rate) => {
                            // Spin to each section's due time: `made / rate` seconds after the start.
                            let period_ns = 1e9 / rate as f64;
                            loop {
                                let elapsed = begin.elapsed();
                                if elapsed >= run_for {
                                    break;
                                }
                                let due = (made as f64 * period_ns) as u128;
                                if elapsed.as_nanos() >= due {
                                    leaf(made);
                                    made += 1;
                                }
                            }
                        }
                        None => {
                            while begin.elapsed() < run_for {
                                for _ in 0..1000 {
                                    leaf(made);
                                    made += 1;
                                }
                            }
                        }
                    }
                    let cpu = perfgraph_benches::thread_cpu_time() - cpu0;
                    (made, cpu.as_nanos() as u64, begin.elapsed())
                })
                .expect("spawn")
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let made: u64 = results.iter().map(|r| r.0).sum();
    let thread_cpu: u64 = results.iter().map(|r| r.1).sum();
    let wall = start.elapsed().as_secs_f64();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    println!(
        "{}",
        serde_json::json!({
            "made": made,
            "thread_cpu_ns": thread_cpu,
            "process_cpu_ns": process_cpu_ns(),
            "peak_kb": field("VmHWM:"),
            "rate": made as f64 / threads as f64 / wall,
        })
    );
}

/// The process's CPU time so far, ns.
fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_PROCESS_CPUTIME_ID is supported on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_trace_line_gives_the_losses() {
        let line = "perfgraph: trace \"/t/t.json\": 100 section calls written; 52 section calls are not in \
                    this trace: 52 lost to ring overflow (rec-0: 12, rec-1: 40), 0 past \
                    PERFGRAPH_TRACE_LIMIT=unlimited, 0 not written (disk full or reader too slow) (the file \
                    says so too)";
        assert_eq!(
            super::losses(&format!("x\n{line}\n")),
            (52, "rec-0: 12, rec-1: 40".to_owned())
        );
        assert_eq!(super::losses("nothing"), (0, String::new()));
    }
}
