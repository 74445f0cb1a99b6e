//! The fine-grained loop the benchmarks time: many short sections (an iteration is three sections around two
//! 64-element kernels; docs/performance.md has its measured time, instrumented and compiled out), the worst
//! case for instrumentation overhead.

use std::hint::black_box;
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};

/// One iteration: three sections around small kernels.
#[timed(name = "fine::step")]
fn step(i: u64, data: &mut [f64; 64]) -> f64 {
    let r = {
        time_section!("fine::residual");
        kernel(data, i)
    };
    let j = {
        time_section!("fine::jacobian", level = 2);
        kernel(data, i + 1)
    };
    r + j
}

#[inline(never)]
fn kernel(data: &mut [f64; 64], i: u64) -> f64 {
    let mut acc = 0.0;
    for (k, x) in data.iter_mut().enumerate() {
        *x = (*x * 0.999 + (i as f64 + k as f64) * 1e-9).abs();
        acc += *x;
    }
    black_box(acc)
}

/// Runs `n` iterations; returns them and the time taken.
#[timed(name = "fine::loop", level = 0, live = "Fine-grained loop", dots)]
pub fn run_iterations(n: u64) -> (u64, Duration) {
    let mut data = [1.0; 64];
    let start = Instant::now();
    for i in 0..n {
        black_box(step(i, &mut data));
    }
    (n, start.elapsed())
}

/// Runs iterations until `budget` has passed; returns how many and the time taken.
#[timed(name = "fine::loop", level = 0, live = "Fine-grained loop", dots)]
pub fn run_for(budget: Duration) -> (u64, Duration) {
    let mut data = [1.0; 64];
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < budget {
        for _ in 0..1000 {
            black_box(step(n, &mut data));
            n += 1;
        }
    }
    (n, start.elapsed())
}

/// One timed section that sleeps: what the print thread costs when nothing happens.
#[timed(name = "idle", level = 0, live = "Idling", dots)]
pub fn idle(time: Duration) {
    std::thread::sleep(time);
}
