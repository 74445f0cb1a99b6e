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

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

const PAIRS: u64 = 2_000_000;
const ROUNDS: usize = 21;

static PERFGRAPH: perfgraph_core::CountingAllocator =
    perfgraph_core::CountingAllocator::new(System);
static HOTPATH: hotpath::CountingAllocator = hotpath::CountingAllocator::new();

/// ns per `alloc` + `dealloc` pair through `a`.
fn pairs(a: &dyn GlobalAlloc) -> f64 {
    let layout = Layout::from_size_align(64, 8).expect("a valid layout");
    let t = Instant::now();
    for _ in 0..PAIRS {
        // SAFETY: a non-zero-sized layout.
        let p = black_box(unsafe { a.alloc(layout) });
        // SAFETY: `p` came from `a` with `layout`, and is freed once.
        unsafe { a.dealloc(p, layout) };
    }
    t.elapsed().as_nanos() as f64 / PAIRS as f64
}

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
            best[i] = best[i].min(pairs(allocators[i].1));
        }
    }
    println!("pairs {PAIRS}");
    println!("rounds {ROUNDS}");
    for (i, (name, _)) in allocators.iter().enumerate() {
        println!("{name} {:.3}", best[i]);
    }
}
