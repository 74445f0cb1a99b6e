//! A `#[timed]` function and a `time_section!` with perfgraph compiled out, next to the same empty call
//! `perfgraph-benches` measures, timed by the same harness (`perfgraph_benches`, without its `cases` feature
//! so that perfgraph-core stays without `enabled` in this build) in the same Criterion groups and ids: one
//! thread (`one_thread`) and two threads at once (`two_threads`, the per-thread cost). `benches/run.sh` puts
//! them in one table with the others. Compiled out there is no batch context to open: each batch is a plain
//! loop of leaf calls.

use std::hint::black_box;

use perfgraph_benches::ids::case;
use perfgraph_benches::{Case, bench_cases, criterion, repeat};
use perfgraph_core::{time_section, timed};

#[inline(never)]
fn empty_call() {
    black_box(());
}

#[timed]
#[inline(never)]
fn timed_leaf() {
    black_box(());
}

#[inline(never)]
fn section_leaf() {
    time_section!("leaf");
    black_box(());
}

const CASES: [Case; 3] = [
    Case::new(case::EMPTY_CALL, |n| repeat(n, empty_call)),
    Case::new(case::PERFGRAPH_COMPILED_OUT_TIMED, |n| {
        repeat(n, timed_leaf)
    }),
    Case::new(case::PERFGRAPH_COMPILED_OUT_SECTION, |n| {
        repeat(n, section_leaf)
    }),
];

fn main() {
    let mut c = criterion();
    bench_cases(&mut c, &CASES);
    c.final_summary();
}
