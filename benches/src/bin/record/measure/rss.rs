//! Resident memory per recording thread, measured in child processes of `record` itself
//! (`record --rss-child MODE N`).

use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Threads started in each child process.
const THREADS: usize = 32;

/// Child processes per figure.
const PROCESSES: usize = 5;

/// Sections each thread records in mode `full`: enough to wrap the event ring twice.
const FULL_SECTIONS: usize = 16_384;

/// Resident KiB added by [`Rss::threads`] threads, each the median of [`Rss::processes`] child processes.
pub struct Rss {
    /// Threads started together in each child.
    pub threads: usize,
    /// Child processes per figure.
    pub processes: usize,
    /// The threads record nothing (the baseline).
    pub idle: Option<f64>,
    /// Each thread records one section.
    pub one: Option<f64>,
    /// Each thread records 16,384 sections (the event ring wrapped twice).
    pub full: Option<f64>,
}

impl Rss {
    /// Runs the child processes (this executable with `--rss-child`) for each mode.
    pub fn measure() -> Rss {
        let me = std::env::current_exe().expect("own path");
        let run = |mode: &str| -> Vec<f64> {
            (0..PROCESSES)
                .filter_map(|_| {
                    let out = Command::new(&me)
                        .args(["--rss-child", mode, &THREADS.to_string()])
                        .env_remove("PERFGRAPH_VERBOSITY")
                        .stderr(Stdio::null())
                        .output()
                        .ok()?;
                    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
                })
                .collect()
        };
        let median = |v| perfgraph_benches::stats::median(v, |&kib| kib);
        let idle = median(run("idle"));
        let one = median(run("one"));
        let full = median(run("full"));
        Rss {
            threads: THREADS,
            processes: PROCESSES,
            idle,
            one,
            full,
        }
    }
}

/// Resident KiB of this process.
fn rss_kb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4
}

/// The child process: starts `n` threads that each do `mode` (`idle`, `one` section, `full`: enough
/// sections to wrap the ring twice), and prints the resident memory (KiB) they added while all are still
/// alive.
pub fn child(mode: &str, n: usize) {
    perfgraph_benches::cases::one_section(); // the runtime and the main thread's state exist before we start
    std::thread::sleep(Duration::from_millis(50));
    let before = rss_kb();
    let ready = Arc::new(Barrier::new(n + 1));
    let done = Arc::new(Barrier::new(n + 1));
    let mode = mode.to_owned();
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (ready, done, mode) = (Arc::clone(&ready), Arc::clone(&done), mode.clone());
            std::thread::spawn(move || {
                match mode.as_str() {
                    "one" => perfgraph_benches::cases::one_section(),
                    "full" => {
                        (0..FULL_SECTIONS).for_each(|_| perfgraph_benches::cases::one_section())
                    }
                    _ => {}
                }
                ready.wait();
                done.wait();
            })
        })
        .collect();
    ready.wait();
    let during = rss_kb();
    done.wait();
    for t in threads {
        let _ = t.join();
    }
    println!("{}", during as i64 - before as i64);
}
