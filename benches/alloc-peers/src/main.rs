//! perfgraph's `CountingAllocator` against the bare `System` allocator and hotpath's allocation tracking
//! (`hotpath::CountingAllocator` with the `hotpath-alloc` feature, its `HotpathGuard` alive so that its
//! per-thread tracking is on), in one process: `alloc` + `dealloc` pairs of 64 bytes through each, called
//! directly (one binary has one global allocator), in alternating rounds (the order rotates every round),
//! the best round of each. Prints one line per allocator, `<name> <ns per pair>`, which `record` reads
//! (`benches/run.sh` runs it).
//!
//! ```sh
//! cd benches/alloc-peers && cargo run --release
//! ```

use std::alloc::{GlobalAlloc, System};

use perfgraph_benches::timing;

const PAIRS: u64 = 2_000_000;
const ROUNDS: usize = 21;

static PERFGRAPH: perfgraph_core::CountingAllocator =
    perfgraph_core::CountingAllocator::new(System);
static HOTPATH: hotpath::CountingAllocator = hotpath::CountingAllocator::new();

fn main() {
    // What `#[hotpath::main]` makes: hotpath's tracking on for the run.
    // Kept alive and never dropped: its report at drop would go to stdout, which is ours.
    std::mem::forget(hotpath::HotpathGuardBuilder::new("alloc-peers").build());
    let allocators: [(&str, &dyn GlobalAlloc); 3] = [
        ("system", &System),
        ("perfgraph", &PERFGRAPH),
        ("hotpath", &HOTPATH),
    ];
    let mut best = [f64::MAX; 3];
    for round in 0..ROUNDS {
        for k in 0..3 {
            let i = (round + k) % 3;
            best[i] = best[i].min(timing::alloc_pair_ns(allocators[i].1, PAIRS));
        }
    }
    println!("pairs {PAIRS}");
    println!("rounds {ROUNDS}");
    for (i, (name, _)) in allocators.iter().enumerate() {
        println!("{name} {:.3}", best[i]);
    }
}
