//! Many section calls at a pace the background thread drains without loss, to measure what the exports add
//! to the process's exit. Just before `main` returns it prints `main returned at <ns>` (`CLOCK_MONOTONIC`);
//! the caller reads the same clock once the process has exited (see docs/output-formats.md, "Cost at exit").
//!
//! ```text
//! cargo run --release -p perfgraph-core --example trace_load -- 1000000
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};

/// About 3 µs of work: the calls of 20 ms (one drain period) fit the 8192-record ring.
#[timed]
fn kernel(i: u64) -> u64 {
    let t = Instant::now();
    let mut acc = i;
    while t.elapsed() < Duration::from_micros(3) {
        acc = black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    acc
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    let calls: u64 = std::env::args()
        .nth(1)
        .map_or(100_000, |a| a.parse().expect("a number of calls"));
    {
        time_section!("load", level = 0);
        let mut acc = 0;
        for i in 0..calls.saturating_sub(1) {
            acc ^= kernel(i);
        }
        black_box(acc);
    }
    println!("main returned at {}", monotonic_ns());
}
