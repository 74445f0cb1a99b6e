//! What the counting allocator adds per allocation (issue 16), in one process: the same loop of
//! `alloc` + `dealloc` pairs (64 bytes) through the bare `System` allocator and through
//! `CountingAllocator::new(System)`, called directly (not installed: one binary has one global allocator),
//! alternating rounds, best round of each. Prints a Markdown table for docs/performance.md.
//!
//! ```sh
//! cargo run --release -p perfgraph-benches --bin alloc_cost
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

use perfgraph_core::CountingAllocator;

const PAIRS: u64 = 2_000_000;
const ROUNDS: usize = 15;

/// ns per alloc + dealloc pair through `a`.
fn round(a: &dyn Fn(Layout) -> *mut u8, free: &dyn Fn(*mut u8, Layout)) -> f64 {
    let layout = Layout::from_size_align(64, 8).expect("a valid layout");
    let t = Instant::now();
    for _ in 0..PAIRS {
        let p = black_box(a(layout));
        free(p, layout);
    }
    t.elapsed().as_nanos() as f64 / PAIRS as f64
}

fn main() {
    static COUNTING: CountingAllocator = CountingAllocator::new(System);
    // SAFETY: `round` passes a non-zero-sized layout.
    let bare_alloc = |l: Layout| unsafe { System.alloc(l) };
    // SAFETY: `round` frees each pointer once, with its layout, through the allocator that made it.
    let bare_free = |p: *mut u8, l: Layout| unsafe { System.dealloc(p, l) };
    // SAFETY: as `bare_alloc`.
    let counting_alloc = |l: Layout| unsafe { COUNTING.alloc(l) };
    // SAFETY: as `bare_free`.
    let counting_free = |p: *mut u8, l: Layout| unsafe { COUNTING.dealloc(p, l) };
    let (mut bare, mut counting) = (f64::MAX, f64::MAX);
    for _ in 0..ROUNDS {
        bare = bare.min(round(&bare_alloc, &bare_free));
        counting = counting.min(round(&counting_alloc, &counting_free));
    }
    println!("| Allocator | alloc + dealloc of 64 B (ns) | added (ns) |");
    println!("|---|---:|---:|");
    println!("| `System` | {bare:.2} | — |");
    println!(
        "| `CountingAllocator::new(System)` | {counting:.2} | {:.2} |",
        counting - bare
    );
}
