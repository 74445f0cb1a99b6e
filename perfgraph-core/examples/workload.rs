//! A small two-thread workload for the reports and exports: a set-up that grows memory, a solve loop of
//! small kernels with known call counts, and an I/O thread writing chunks meanwhile. At the end it reads
//! its own numbers back with `perfgraph_core::report()`.
//!
//! ```text
//! PERFGRAPH_REPORT=all PERFGRAPH_INTERVAL=0.1 PERFGRAPH_TRACE=trace.json \
//!     PERFGRAPH_FOLDED=stacks.folded PERFGRAPH_JSON=tree.json cargo run -p perfgraph-core --example workload
//! ```
//!
//! The end-to-end test (`tests/export_e2e.rs`) runs this same code in a child process and checks every
//! output against the counts below.

use std::hint::black_box;
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};

/// Solver iterations; each calls `assemble` once and `residual` [`RESIDUALS`] times.
pub const ITERATIONS: u64 = 40;
/// `residual` calls per iteration.
pub const RESIDUALS: u64 = 25;
/// Chunks the I/O thread writes.
pub const CHUNKS: u64 = 8;
/// Every section call the workload makes at verbosity 1: `run`, `setup`, `solve`, the kernels,
/// `write_output` and its chunks (`check_convergence`, level 2, is not recorded then).
pub const TOTAL_CALLS: u64 = 1 + 1 + 1 + ITERATIONS * (1 + RESIDUALS) + 1 + CHUNKS;

#[timed(level = 0)]
fn setup() -> Vec<u64> {
    // 40 MB, touched so it is resident.
    (0..5_000_000u64)
        .map(|i| i.wrapping_mul(2654435761))
        .collect()
}

#[timed(level = 1)]
fn assemble(data: &[u64]) -> u64 {
    data.iter().step_by(64).fold(0, |a, b| a ^ b)
}

#[timed(level = 1)]
fn residual(data: &[u64], i: u64) -> u64 {
    let t = Instant::now();
    // About 0.2 ms of work each, so the run lasts long enough for a few intervals.
    let mut acc = i;
    while t.elapsed() < Duration::from_micros(200) {
        acc = acc.wrapping_add(black_box(data[(acc % data.len() as u64) as usize]));
    }
    acc
}

/// A detail below the default verbosity: recorded only at `PERFGRAPH_VERBOSITY=2` or more.
#[timed(level = 2)]
fn check_convergence(acc: u64) -> bool {
    black_box(acc) != 0
}

#[timed(level = 0, live = "Solving")]
fn solve(data: &[u64]) -> u64 {
    let mut acc = 0;
    for it in 0..ITERATIONS {
        acc ^= assemble(data);
        for r in 0..RESIDUALS {
            acc ^= residual(data, it * RESIDUALS + r);
        }
        black_box(check_convergence(acc));
    }
    acc
}

#[timed(level = 0)]
fn write_output() {
    for _ in 0..CHUNKS {
        time_section!("write_chunk", level = 1);
        std::thread::sleep(Duration::from_millis(15));
    }
}

/// The whole workload: one top-level section, `run`.
#[timed(level = 0)]
pub fn run() {
    let data = setup();
    let io = std::thread::Builder::new()
        .name("io-worker".into())
        .spawn(write_output)
        .expect("spawn the I/O thread");
    black_box(solve(&data));
    io.join().expect("I/O thread");
}

#[allow(dead_code)] // reason: the end-to-end test includes this file and calls `run` itself.
fn main() {
    run();
    // Read the numbers back while the program still runs (here: after the work is done).
    let report = perfgraph_core::report();
    let solve = report.tree.find(&["run", "solve"]).expect("solve recorded");
    println!(
        "solve: {} calls, {:.3} s; residual: {} calls",
        solve.calls,
        solve.total_ns as f64 / 1e9,
        report
            .tree
            .find(&["run", "solve", "residual"])
            .map_or(0, |n| n.calls)
    );
}
