//! A `#[timed]` function and a `time_section!` with perfgraph compiled out, next to the same empty call
//! `perfgraph-benches` measures, in the same Criterion groups and ids, so `benches/run.sh` puts them in one
//! table. Each leaf is called in a plain loop: compiled out, there is no batch context to open.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
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

fn time(iters: u64, leaf: fn()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        leaf();
    }
    start.elapsed()
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut group = c.benchmark_group("one_thread");
        group.bench_function("floor/empty_call", |b| {
            b.iter_custom(|iters| time(iters, empty_call))
        });
        group.bench_function("perfgraph/compiled_out_timed", |b| {
            b.iter_custom(|iters| time(iters, timed_leaf))
        });
        group.bench_function("perfgraph/compiled_out_section", |b| {
            b.iter_custom(|iters| time(iters, section_leaf))
        });
        group.finish();
    }
    c.final_summary();
}
