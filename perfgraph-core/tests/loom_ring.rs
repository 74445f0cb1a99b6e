//! Model-checks the ring's publish/consume protocol with loom: every interleaving (bounded preemptions) of
//! a producer that laps a small ring while the consumer drains it. The consumer must only ever accept
//! whole records, in order, and account for every record as read or dropped.
//!
//! This compiles the production `src/local/ring.rs` itself, with `crate::base::atomics` pointing at loom's
//! atomics.
//! It runs as a normal test (no `--cfg loom` needed); `LOOM_MAX_PREEMPTIONS` defaults to 2 here.

#![allow(dead_code, missing_docs)] // reason: the included module has items only the runtime uses.

mod loom_model;

#[path = "../src/base/poison.rs"]
mod poison;

mod base {
    pub(crate) mod atomics {
        pub(crate) use loom::sync::atomic;
        pub(crate) const MODEL: bool = true;
    }
    pub(crate) use super::poison;
    /// The model's slots are built one by one (`MODEL`), never mapped: these are never called.
    pub(crate) mod sys {
        pub(crate) fn map_zeroed(_len: usize) -> Option<std::ptr::NonNull<u8>> {
            None
        }
        pub(crate) unsafe fn unmap(_ptr: std::ptr::NonNull<u8>, _len: usize) {}
    }
}

#[path = "../src/local/ring.rs"]
mod ring;

/// The production file's own path to it (`crate::local::ring`).
mod local {
    pub(crate) use super::ring;
}

use local::ring::{Cursor, Ring, Slot};
use loom::sync::Arc;

fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_model::check(2, f);
}

fn record(i: u64) -> [u64; 4] {
    [i, i + 100, i + 200, i + 300]
}

#[test]
fn consumer_sees_whole_records_in_order_or_counts_them_dropped() {
    model(|| {
        let ring = Arc::new(Ring::new(2));
        // The producer is the model's main thread and the consumer the spawned one: the other way round,
        // loom 0.7 runs this model once and stops (tokio-rs/loom#392: a spawned thread whose first
        // operation is a load is never preempted); this way it explores every interleaving.
        let consumer = {
            let ring = Arc::clone(&ring);
            loom::thread::spawn(move || {
                let mut cursor = Cursor::default();
                let mut seen = Vec::new();
                ring.drain(&mut cursor, |w| seen.push(w));
                (cursor, seen)
            })
        };
        for i in 0..3 {
            ring.push(record(i));
        }
        let (mut cursor, mut seen) = consumer.join().unwrap();
        ring.drain(&mut cursor, |w| seen.push(w));
        for w in &seen {
            assert_eq!(*w, record(w[0]), "torn record accepted");
        }
        assert!(
            seen.windows(2).all(|p| p[0][0] < p[1][0]),
            "out of order: {seen:?}"
        );
        assert_eq!(seen.len() as u64 + cursor.dropped, 3);
        assert_eq!(
            seen.last().map(|w| w[0]),
            Some(2),
            "the newest record survives"
        );
    });
}

#[test]
fn a_slot_read_during_a_rewrite_is_rejected_not_torn() {
    model(|| {
        let slot = Arc::new(Slot::default());
        slot.write(0, record(0));
        let writer = {
            let slot = Arc::clone(&slot);
            loom::thread::spawn(move || slot.write(1, record(1)))
        };
        if let Some((seq, words)) = slot.read_latest() {
            assert_eq!(words, record(seq), "torn read accepted");
        }
        writer.join().unwrap();
        assert_eq!(slot.read(1), Some(record(1)));
    });
}
