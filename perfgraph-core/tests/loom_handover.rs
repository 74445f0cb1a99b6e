//! Model-checks the tracing layer's hand-over slots with loom: every interleaving (bounded preemptions) of
//! an owner that hands spans over and takes them back while other threads take them. Exactly one thread
//! gets each span handed over, always with the start it was put with, and a slot released by one thread
//! and acquired by another starts empty.
//!
//! This compiles the production `src/tracing_layer/handover.rs` itself, with `crate::base::atomics` pointing at
//! loom's atomics.
//! It runs as a normal test (no `--cfg loom` needed); `LOOM_MAX_PREEMPTIONS` defaults to 2 here.

#![allow(dead_code, missing_docs)] // reason: the included module has items only the runtime uses.

mod loom_model;

mod base {
    pub(crate) mod atomics {
        pub(crate) use loom::sync::atomic;
        pub(crate) const MODEL: bool = true;
    }
}

#[path = "../src/tracing_layer/handover.rs"]
mod handover;

use handover::List;
use loom::sync::Arc;
use loom::sync::atomic::AtomicPtr;

fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_model::check(2, f);
}

fn list() -> Arc<List> {
    Arc::new(List {
        head: AtomicPtr::new(std::ptr::null_mut()),
    })
}

#[test]
/// The owner hands span 7 over, then takes it back to hand span 8 over, while a thief tries to take both
/// (and a span of another callsite under id 8).
fn each_span_handed_over_goes_to_exactly_one_taker_with_its_start() {
    model(|| {
        let list = list();
        let slot = list.acquire();
        slot.put(7, 1, 700);
        let thief = {
            let list = list.clone();
            loom::thread::spawn(move || {
                assert_eq!(list.steal(8, 2), None, "another callsite's span 8");
                (list.steal(7, 1), list.steal(8, 1))
            })
        };
        let took_back = slot.take(7, 1);
        slot.put(8, 1, 800);
        let (seven, eight) = thief.join().unwrap();
        match (took_back, seven) {
            (Some(700), None) | (None, Some(700)) => {}
            other => panic!("span 7 went to {other:?}"),
        }
        // Span 8 is the thief's, with its own start, or still in the slot.
        match eight {
            Some(800) => assert_eq!(slot.take(8, 1), None),
            None => assert_eq!(slot.take(8, 1), Some(800)),
            other => panic!("span 8: {other:?}"),
        }
    });
}

#[test]
fn a_closed_span_is_gone_and_a_released_slot_is_reused_empty() {
    model(|| {
        let list = list();
        let slot = list.acquire();
        slot.put(7, 1, 700);
        // Its close takes it back (nobody else had).
        assert!(slot.take_back(7));
        list.release(slot);
        // The thief is the spawned thread and the slot's next owner the model's main thread: the other
        // way round, loom 0.7 runs this model once and stops (tokio-rs/loom#392).
        let thief = {
            let list = list.clone();
            loom::thread::spawn(move || list.steal(7, 1))
        };
        let slot = list.acquire();
        assert_eq!(slot.take(7, 1), None);
        slot.put(9, 1, 900);
        assert_eq!(list.steal(9, 1), Some(900));
        assert_eq!(thief.join().unwrap(), None);
    });
}
