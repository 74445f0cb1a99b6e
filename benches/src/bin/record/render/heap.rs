//! The cost of issue 16's exact figures: the counting allocator per allocation, one exact memory read.

use std::fmt::Write as _;

use crate::measure::heap::Heap;

/// The section: a table of the three figures.
pub fn write(doc: &mut String, h: &Heap) {
    let _ = writeln!(
        doc,
        "## Exact heap accounting and exact memory\n\n\
         Measured in `record`'s own process: {pairs} `alloc` + `dealloc` pairs of 64 bytes through the bare \
         `System` allocator and through `CountingAllocator::new(System)` (called directly, not installed), \
         {reads} exact resident-memory reads (`pread` of `/proc/self/statm`, what a section with exact memory \
         makes at its start and at its end: `PERFGRAPH_MEM_EXACT`, by default the sections with a `live` \
         message); {rounds} rounds of each (the allocators alternated, each first in every other round), the best round of each.\n\n\
         | Operation | ns | added (ns) |\n|---|---:|---:|\n\
         | `System`: alloc + dealloc of 64 B | {:.2} | — |\n\
         | `CountingAllocator::new(System)`: alloc + dealloc of 64 B | {:.2} | {:.2} |",
        h.system_pair_ns,
        h.counting_pair_ns,
        h.counting_pair_ns - h.system_pair_ns,
        pairs = h.pairs,
        reads = h.reads,
        rounds = h.rounds,
    );
    let read = h
        .rss_read_ns
        .map_or_else(|| "not readable here".to_owned(), |ns| format!("{ns:.0}"));
    let _ = writeln!(doc, "| one exact resident-memory read | {read} | — |");
}
