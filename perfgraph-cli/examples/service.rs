//! A long-running program, for the tests of `perfgraph ps`, `dump`, `trace` and `top`: a main thread in
//! one long section (`Solving nonlinear system`) that runs `residual` sections until stdin closes (or a
//! line arrives), and a worker thread doing the same, so there is always a section running to see.
//!
//! ```sh
//! cargo run -p perfgraph-cli --example service &
//! perfgraph top $!
//! ```

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

use perfgraph_core::{time_section, timed};

static STOP: AtomicBool = AtomicBool::new(false);

#[timed]
fn residual(i: u64) -> u64 {
    (0..200).fold(i, |a, b| a.wrapping_mul(31).wrapping_add(b))
}

#[timed(live = "Solving nonlinear system", dots)]
fn solve() -> u64 {
    spin()
}

/// `residual` until told to stop, a millisecond's rest every hundred calls (some 50,000 calls a second);
/// with `SERVICE_CALLS=N`, N calls only, then nothing more until told to stop (the counts then hold
/// still for a test to compare).
fn spin() -> u64 {
    let limit: u64 = std::env::var("SERVICE_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX);
    let mut sum = 0u64;
    let mut i = 0u64;
    while !STOP.load(Ordering::Relaxed) {
        if i < limit {
            sum = sum.wrapping_add(residual(i));
            i += 1;
        }
        if i.is_multiple_of(100) || i == limit {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    sum
}

fn main() {
    if std::env::var_os("SERVICE_CLOSE_STDERR").is_some() {
        // A daemon's way: its standard error closed before anything else runs (tests/attach.rs checks that
        // nothing of perfgraph's then lands on fd 2).
        // SAFETY: closing fd 2, which nothing in this process uses after.
        unsafe { libc::close(2) };
    }
    let worker = std::thread::Builder::new()
        .name("worker".into())
        .spawn(|| {
            time_section!("assemble");
            spin()
        })
        .unwrap();
    std::thread::spawn(|| {
        let mut byte = [0u8; 1];
        let _ = std::io::stdin().read(&mut byte);
        STOP.store(true, Ordering::Relaxed);
    });
    let sum = solve();
    let other = worker.join().unwrap();
    println!("done {}", sum.wrapping_add(other) % 10);
}
