//! Unit tests of `ring.rs`. They live outside it because `tests/loom_ring.rs` compiles `ring.rs` itself
//! against loom's atomics, where these std-thread tests cannot run.

use crate::local::ring::*;

fn collect(ring: &Ring, cursor: &mut Cursor) -> Vec<u64> {
    let mut out = Vec::new();
    ring.drain(cursor, |w| out.push(w[0]));
    out
}

#[test]
fn in_order_and_wraps_around() {
    let ring = Ring::new(4);
    let mut cursor = Cursor::default();
    for round in 0..5u64 {
        for i in 0..3 {
            ring.push([round * 10 + i, 1, 2, 3]);
        }
        assert_eq!(
            collect(&ring, &mut cursor),
            vec![round * 10, round * 10 + 1, round * 10 + 2]
        );
    }
    assert_eq!(cursor.dropped, 0);
    assert_eq!(ring.pushed(), 15);
}

#[test]
fn overflow_keeps_newest_and_counts_the_rest() {
    let ring = Ring::new(4);
    let mut cursor = Cursor::default();
    for i in 0..11 {
        ring.push([i, 0, 0, 0]);
    }
    assert_eq!(collect(&ring, &mut cursor), vec![7, 8, 9, 10]);
    assert_eq!(cursor.dropped, 7);
    ring.push([11, 0, 0, 0]);
    assert_eq!(collect(&ring, &mut cursor), vec![11]);
    assert_eq!(cursor.dropped, 7);
}

#[test]
fn a_slot_rejects_other_laps_and_unwritten_records() {
    let slot = Slot::default();
    assert_eq!(slot.read(0), None);
    slot.write(5, [1, 2, 3, 4]);
    assert_eq!(slot.read(5), Some([1, 2, 3, 4]));
    assert_eq!(slot.read(1), None);
    assert_eq!(slot.read_latest(), Some((5, [1, 2, 3, 4])));
    slot.write(9, [9, 9, 9, 9]);
    assert_eq!(slot.read(5), None);
}

#[test]
fn capacity_is_a_power_of_two() {
    assert_eq!(Ring::new(5).capacity(), 8);
    assert_eq!(Ring::new(0).capacity(), 2);
}

#[test]
fn concurrent_consumer_sees_only_whole_records() {
    use std::sync::Arc;
    let ring = Arc::new(Ring::new(64));
    let producer = {
        let ring = Arc::clone(&ring);
        std::thread::spawn(move || {
            for i in 0..200_000u64 {
                ring.push([i, i * 3, !i, i ^ 0x55]);
            }
        })
    };
    let mut cursor = Cursor::default();
    let mut seen = 0u64;
    let mut last = None;
    loop {
        let done = producer.is_finished();
        ring.drain(&mut cursor, |w| {
            assert_eq!(
                (w[1], w[2], w[3]),
                (w[0] * 3, !w[0], w[0] ^ 0x55),
                "torn record"
            );
            assert!(last.is_none_or(|l| w[0] > l), "out of order");
            last = Some(w[0]);
            seen += 1;
        });
        if done {
            break;
        }
    }
    producer.join().unwrap();
    ring.drain(&mut cursor, |_| seen += 1);
    assert_eq!(seen + cursor.dropped, 200_000);
}

#[test]
fn the_pool_keeps_no_more_than_its_cap() {
    // Five trace-sized rings alive at once (as when threads exit faster than they are folded), then
    // dropped: the pool keeps what fits under its cap and frees the rest.
    let rings: Vec<Ring> = (0..5).map(|_| Ring::reused(1 << 18)).collect();
    drop(rings);
    let kept: usize = hold_pool_for_fork()
        .iter()
        .map(|(s, _)| std::mem::size_of_val(&**s))
        .sum();
    assert!(kept <= POOL_KEEP_BYTES, "{kept} bytes kept");
    assert!(kept > 0, "the pool keeps some for the next threads");
    assert!(Ring::pooled(1 << 18));
}
