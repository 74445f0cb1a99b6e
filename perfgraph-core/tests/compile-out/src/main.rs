//! Every macro form, compiled without perfgraph-core's `enabled` feature: the code must build unchanged and
//! record nothing. Exits non-zero if anything was recorded.

use perfgraph_core::{time_section, timed};

struct Solver;

impl Solver {
    #[timed(live = "Solving", dots)]
    fn solve(&self, n: u64) -> u64 {
        time_section!("residual", level = 2, live = "Residual");
        (0..n).map(step).sum()
    }
}

#[timed(name = "mesh::step", level = 3)]
fn step(i: u64) -> u64 {
    i * 2
}

#[timed]
fn main() {
    let total = Solver.solve(10);
    assert_eq!(total, 90);
    let threads = perfgraph_core::threads();
    let sections = perfgraph_core::sections();
    println!("threads={} sections={}", threads.len(), sections.len());
    if !threads.is_empty() || !sections.is_empty() {
        std::process::exit(1);
    }
}
