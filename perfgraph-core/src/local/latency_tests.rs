//! Unit tests of `latency.rs`. They live outside it because `tests/loom_snapshot.rs` compiles `latency.rs`
//! itself, where `allocate` always returns null.

use crate::base::buckets;
use crate::local::latency::*;

/// What `ticks` make, counted the plain way.
fn expected(ticks: &[u64]) -> Counts {
    let mut dense = std::collections::BTreeMap::new();
    for &t in ticks {
        *dense.entry(buckets::index(t) as u32).or_insert(0) += 1;
    }
    Counts {
        min: ticks.iter().copied().min().unwrap_or(0),
        max: ticks.iter().copied().max().unwrap_or(0),
        buckets: dense.into_iter().collect(),
    }
}

#[test]
fn a_block_reads_every_call_the_last_one_pending_included() {
    let ptr = allocate();
    // SAFETY: a fresh block from `allocate`, ours alone until freed below.
    let block = unsafe { &*ptr };
    assert_eq!(block.read(), Counts::default());
    let mut ticks = Vec::new();
    for t in [70u64, 5, 1 << 40, 300, 300, 0, u64::MAX, 12_345] {
        block.record(t);
        ticks.push(t);
        assert_eq!(block.read(), expected(&ticks), "after {ticks:?}");
    }
    // SAFETY: from `allocate`, and no longer used: it goes to the pool...
    unsafe { free(ptr) };
    // ...and comes back empty (its header cleared), though perhaps to another test.
    let again = allocate();
    // SAFETY: as above.
    let block = unsafe { &*again };
    assert_eq!(block.read(), Counts::default());
    block.record(1_000);
    assert_eq!(block.read(), expected(&[1_000]));
    // SAFETY: as above.
    unsafe { free(again) };
}

#[test]
fn slots_the_range_has_not_reached_may_hold_anything() {
    let layout = std::alloc::Layout::new::<Block>();
    // SAFETY: a block is not zero-sized.
    let ptr = unsafe { std::alloc::alloc(layout) }.cast::<Block>();
    assert!(!ptr.is_null());
    // SAFETY: fresh memory of a block's layout, ours alone: every byte dirty, then the header cleared.
    unsafe {
        ptr.cast::<u8>().write_bytes(0xa5, layout.size());
        clear(ptr);
    }
    // SAFETY: the header is zero: an empty block, ours alone.
    let block = unsafe { &*ptr };
    assert_eq!(block.read(), Counts::default());
    let mut ticks = Vec::new();
    // Each new extreme widens the range over dirty slots, which must read as zero.
    for t in [5_000u64, 4_000, 9_000_000, 3, 5_000, 1 << 50, 200] {
        block.record(t);
        ticks.push(t);
        assert_eq!(block.read(), expected(&ticks), "after {ticks:?}");
    }
    // SAFETY: allocated above with `layout`, no longer used.
    unsafe { std::alloc::dealloc(ptr.cast(), layout) };
}

#[test]
fn paths_made_inside_without_blocks_get_none() {
    assert!(without_blocks(allocate).is_null());
    let ptr = allocate();
    assert!(!ptr.is_null());
    // SAFETY: from `allocate`, unused.
    unsafe { free(ptr) };
}
