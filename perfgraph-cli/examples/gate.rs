//! The CI gate's test program (`tests/gate.rs`): a solver step of three sections, `assemble`, `residual`
//! and `update`, inside `solve`, each a fixed amount of arithmetic (`GATE_ROUNDS` rounds, 1,500,000 by
//! default), or with `GATE_WORK=sleep` a wait of 20 ns a round (30 ms); `residual` does `GATE_RESIDUAL`
//! times as many (1 by default). Its one argument is a knob: `residual` does that many percent more work
//! (`gate 5` is 5% slower there, and nowhere else).
//!
//! ```sh
//! cargo run -p perfgraph-cli --example gate -- 5
//! ```
//!
//! It prints the work it did (`gate: residual 1050000 rounds`), its own `Instant` times of each section
//! on standard error when `GATE_TIMES=1`, and exits 0.

use std::hint::black_box;
use std::time::Instant;

use perfgraph_core::timed;

/// Rounds of arithmetic in each section at knob 0 (`GATE_ROUNDS` sets another).
fn rounds() -> u64 {
    std::env::var("GATE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1_500_000)
}

fn work(rounds: u64) -> u64 {
    if std::env::var("GATE_WORK").is_ok_and(|w| w == "sleep") {
        std::thread::sleep(std::time::Duration::from_nanos(rounds * 20));
        return rounds;
    }
    let mut x = 0u64;
    for i in 0..rounds {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

#[timed]
fn assemble() -> u64 {
    work(rounds())
}

#[timed]
fn residual(rounds: u64) -> u64 {
    work(rounds)
}

#[timed]
fn update() -> u64 {
    work(rounds())
}

#[timed]
fn solve(rounds: u64) -> u64 {
    let times = std::env::var("GATE_TIMES").is_ok_and(|v| v == "1");
    let mut x = 0;
    for (name, f) in [
        ("assemble", &(|| assemble()) as &dyn Fn() -> u64),
        ("residual", &|| residual(rounds)),
        ("update", &|| update()),
    ] {
        let t = Instant::now();
        x ^= f();
        if times {
            eprintln!("gate: {name} {} ns", t.elapsed().as_nanos());
        }
    }
    x
}

fn main() {
    let pct: u64 = std::env::args()
        .nth(1)
        .map_or(0, |a| a.parse().expect("the knob: a whole percent"));
    let share: u64 = std::env::var("GATE_RESIDUAL")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let rounds = (rounds() + rounds() * pct / 100) * share;
    let x = solve(rounds);
    println!("gate: residual {rounds} rounds ({x:x})");
}
