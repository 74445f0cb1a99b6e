//! The counting allocator against the bare `System` allocator and hotpath's allocation tracking, from one
//! process (`benches/alloc-peers`).

use std::fmt::Write as _;

use crate::measure::alloc_peers::AllocPeers;

/// The table, or a line saying it was not measured.
pub fn write(doc: &mut String, p: Option<&AllocPeers>) {
    let _ = writeln!(doc, "\n### Against hotpath's allocation tracking\n");
    let Some(p) = p else {
        let _ = writeln!(
            doc,
            "Not measured in this run (`benches/alloc-peers` was not given to `record`)."
        );
        return;
    };
    let added = |ns: f64| format!("{:.2}", ns - p.system_ns);
    let _ = writeln!(
        doc,
        "`benches/alloc-peers` (its own build: hotpath's `hotpath-alloc` feature changes what its \
         `#[measure]` records), one process: {pairs} `alloc` + `dealloc` pairs of 64 bytes through each \
         allocator, called directly through `&dyn GlobalAlloc` (neither inlined into the loop); {rounds} rounds, the order rotated each round, the best round of each. \
         hotpath's `HotpathGuard` is alive, so its per-thread tracking is on.\n\n\
         | Allocator | ns per pair | added (ns) | × `System` |\n|---|---:|---:|---:|\n\
         | `System` | {:.2} | — | 1.00 |\n\
         | perfgraph `CountingAllocator::new(System)` | {:.2} | {} | {:.2} |\n\
         | hotpath 0.30 `CountingAllocator` (`hotpath-alloc`) | {:.2} | {} | {:.2} |",
        p.system_ns,
        p.perfgraph_ns,
        added(p.perfgraph_ns),
        p.perfgraph_ns / p.system_ns,
        p.hotpath_ns,
        added(p.hotpath_ns),
        p.hotpath_ns / p.system_ns,
        pairs = p.pairs,
        rounds = p.rounds,
    );
}
