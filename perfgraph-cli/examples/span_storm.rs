//! Many short calls on several threads, for the outputs' memory budget (`tests/output_memory.rs`): each of
//! `THREADS` threads (default 4) makes `CALLS` calls (default 400,000) of `outer`, each calling `inner`,
//! in `ROUNDS` rounds (default 4) with a pause of 20 ms between them, so the background thread drains
//! rings full of records while the next round fills them. With `PERFGRAPH_OTLP_SPANS=all` every call is a
//! span. At the end it prints its own address-space figures (`VmPeak`, `VmHWM` from `/proc/self/status`)
//! on stdout, so a harness can measure what the program needs.
//!
//! ```sh
//! PERFGRAPH_OTLP=http://127.0.0.1:4318 PERFGRAPH_OTLP_SPANS=all cargo run -p perfgraph-cli --example span_storm
//! ```

use std::hint::black_box;
use std::time::Duration;

use perfgraph_core::timed;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[timed]
fn inner(i: u64) -> u64 {
    black_box(i.wrapping_mul(31))
}

#[timed]
fn outer(i: u64) -> u64 {
    inner(i) ^ i
}

/// `VmPeak` and `VmHWM` lines of this process, as the kernel wrote them.
fn vm_lines() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmPeak:") || l.starts_with("VmHWM:"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("; ")
}

fn main() {
    let threads = env("THREADS", 4);
    let calls = env("CALLS", 400_000);
    let rounds = env("ROUNDS", 4).max(1);
    let mut sum = 0u64;
    for _ in 0..rounds {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                std::thread::Builder::new()
                    .name(format!("storm-{t}"))
                    .spawn(move || {
                        (0..calls / rounds).fold(0u64, |a, i| a.wrapping_add(outer(i + t)))
                    })
                    .unwrap()
            })
            .collect();
        for w in workers {
            sum = sum.wrapping_add(w.join().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("storm: {} ({})", sum % 7, vm_lines());
}
