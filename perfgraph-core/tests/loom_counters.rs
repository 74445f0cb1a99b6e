//! Model-checks a counter slot's seqlock with loom: under every interleaving (bounded preemptions) of an
//! owner that updates its slot twice while another thread reads it, every reading is whole (the words of
//! one update, never a mix) and never goes back.
//!
//! This compiles the production `src/local/counter_slot.rs` itself, with `crate::base::atomics` pointing at
//! loom's atomics. It runs as a normal test (no `--cfg loom` needed); `LOOM_MAX_PREEMPTIONS` defaults to 1
//! (25,717 interleavings, a few seconds; 2 takes minutes).

#![allow(dead_code, missing_docs)] // reason: the included module has items only the runtime uses.

mod loom_model;

mod base {
    pub(crate) mod atomics {
        pub(crate) use loom::sync::atomic;
        pub(crate) const MODEL: bool = true;
        /// In the model a busy reader must let the writer run.
        pub(crate) fn spin() {
            loom::thread::yield_now();
        }
    }
}

#[path = "../src/local/counter_slot.rs"]
mod counter_slot;

use counter_slot::{Slot, WORDS};
use loom::sync::Arc;

/// The words of update `n`: each word says `n`, so a mix of two updates shows.
fn update(n: u64) -> [u64; WORDS] {
    std::array::from_fn(|k| n * 10 + k as u64)
}

#[test]
fn a_reading_is_one_update_whole_and_never_goes_back() {
    let n = loom_model::check(1, || {
        let slot = Arc::new(Slot::default());
        let reader = {
            let slot = slot.clone();
            loom::thread::spawn(move || {
                let words = slot.read();
                let n = words[0] / 10;
                let expected = if n == 0 { [0; WORDS] } else { update(n) };
                assert_eq!(words, expected, "a torn reading");
            })
        };
        slot.update(|old| {
            assert_eq!(old, [0; WORDS]);
            update(1)
        });
        slot.update(|old| {
            assert_eq!(old, update(1), "the owner reads back its own last words");
            update(2)
        });
        reader.join().unwrap();
        assert_eq!(slot.read(), update(2));
    });
    // Not vacuous: loom 0.7 stops after one interleaving for some shapes (tokio-rs/loom#392, a spawned
    // thread whose first operation is a load); with the owner on the model's main thread it runs 25,717.
    assert!(n > 1_000, "the model explored {n} interleavings only");
}
