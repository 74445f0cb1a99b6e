//! Enter + exit of one section: perfgraph next to the floors, on one thread and on two at once.
//! `cargo bench -p perfgraph-benches --bench overhead`. The full side-by-side with the peers is
//! `benches/peers/` (run by `benches/run.sh`).

use perfgraph_benches::{bench_cases, bench_cases_cpu, cases, criterion};

fn main() {
    let mut c = criterion();
    let all: Vec<_> = cases::FLOORS
        .iter()
        .chain(&cases::PERFGRAPH)
        .chain(&cases::LOCKS)
        .copied()
        .collect();
    bench_cases(&mut c, &all);
    bench_cases_cpu(&mut c, &all);
    c.final_summary();
}
