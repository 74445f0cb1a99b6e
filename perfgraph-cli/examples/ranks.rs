//! One rank of a job, for `perfgraph-cli`'s tests (run by hand or by `mpirun`): a fixed amount of work
//! whose call counts depend on the rank, which perfgraph reads from the launcher's environment.
//!
//! ```sh
//! PERFGRAPH_JSON=run.{rank}.json mpirun -n 4 --oversubscribe target/debug/examples/ranks
//! ```

use perfgraph_core::{CountingAllocator, time_section, timed};

// The heap figures too, for `perfgraph report --alloc`.
#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator::new(std::alloc::System);

/// The rank as perfgraph reads it (the first launcher variable that is set).
fn rank() -> u64 {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
        "RANK",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse().ok())
    .unwrap_or(0)
}

#[timed]
fn step(i: u64) -> u64 {
    // One allocation a step, so the `Allocations:` table has a row.
    let terms: Vec<u64> = (0..200 + i % 7).collect();
    std::hint::black_box(terms.iter().sum::<u64>())
}

fn main() {
    let r = rank();
    time_section!("solve");
    // 100 steps, plus as many as the rank: 406 over ranks 0-3.
    let total: u64 = (0..100 + r).map(step).sum();
    std::hint::black_box(total);
    // One counter, for `perfgraph report --counters` and the merge of counters: the rank, set once.
    perfgraph_core::counter!("rank", r);
    // One lock, for `perfgraph report --locks`: taken once.
    static DONE: perfgraph_core::sync::Mutex<u64> = perfgraph_core::sync::Mutex::new("done", 0);
    *DONE.lock().unwrap() += total;
}
