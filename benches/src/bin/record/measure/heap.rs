//! What issue 16's exact figures cost, measured in this process: the counting allocator per allocation
//! (an `alloc` + `dealloc` pair of 64 bytes through `CountingAllocator::new(System)` against the bare
//! `System`, both called directly, not installed: one binary has one global allocator), and one exact
//! resident-memory read (what a section with exact memory, `PERFGRAPH_MEM_EXACT`, makes at each boundary).
//! Alternating rounds (each allocator first in every other one), the best round of each.

use std::alloc::{GlobalAlloc, System};
use std::hint::black_box;

use perfgraph_benches::timing;
use perfgraph_core::CountingAllocator;

/// The figures, ns per operation (best round).
pub struct Heap {
    /// `alloc` + `dealloc` of 64 bytes through `System`.
    pub system_pair_ns: f64,
    /// The same through `CountingAllocator::new(System)`.
    pub counting_pair_ns: f64,
    /// Allocation pairs per round.
    pub pairs: u64,
    /// One exact resident-memory read; `None` where it cannot be read.
    pub rss_read_ns: Option<f64>,
    /// Reads per round.
    pub reads: u64,
    /// Rounds of each.
    pub rounds: usize,
}

const PAIRS: u64 = 2_000_000;
const READS: u64 = 100_000;
const ROUNDS: usize = 20;

impl Heap {
    /// Measures both (a few seconds).
    pub fn measure() -> Heap {
        static COUNTING: CountingAllocator = CountingAllocator::new(System);
        let readable = perfgraph_core::__test_hooks::read_rss_bytes().is_some();
        let (mut system, mut counting, mut read) = (f64::MAX, f64::MAX, f64::MAX);
        for round in 0..ROUNDS {
            // Each goes first in every other round.
            if round % 2 == 0 {
                system = system.min(pairs(&System));
                counting = counting.min(pairs(&COUNTING));
            } else {
                counting = counting.min(pairs(&COUNTING));
                system = system.min(pairs(&System));
            }
        }
        for _ in 0..ROUNDS {
            if readable {
                read = read.min(rss_reads());
            }
        }
        Heap {
            system_pair_ns: system,
            counting_pair_ns: counting,
            pairs: PAIRS,
            rss_read_ns: readable.then_some(read),
            reads: READS,
            rounds: ROUNDS,
        }
    }
}

/// ns per `alloc` + `dealloc` pair through `a`.
fn pairs(a: &impl GlobalAlloc) -> f64 {
    timing::alloc_pair_ns(a, PAIRS)
}

/// ns per exact resident-memory read.
fn rss_reads() -> f64 {
    timing::ns_per_call(READS, || {
        black_box(perfgraph_core::__test_hooks::read_rss_bytes());
    })
}
