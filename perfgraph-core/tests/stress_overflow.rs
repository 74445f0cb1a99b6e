//! Two threads record far more than their rings hold while the consumer is held back: the producers never
//! block, the call counts stay exact, and the lost records are counted exactly, per thread.

mod common;

use perfgraph_core::{time_section, timed};

const ITERATIONS: u64 = 200_000;
/// Records per thread ring (perfgraph-core's `RING_CAPACITY`).
const RING: u64 = 8192;

#[timed(name = "stress::leaf", level = 2)]
fn leaf(i: u64) -> u64 {
    std::hint::black_box(i)
}

fn work() -> u64 {
    time_section!("stress::outer");
    (0..ITERATIONS)
        .map(|i| {
            time_section!("stress::step");
            leaf(i)
        })
        .sum()
}

fn run_two(names: [&str; 2]) {
    let handles = names.map(|name| common::spawn_named(name, work));
    for h in handles {
        h.join().unwrap();
    }
}

fn check_counts(name: &str) -> perfgraph_core::ThreadSnapshot {
    let t = common::thread_named(name);
    let outer = t.tree.find(&["stress::outer"]).expect("outer recorded");
    let step = t.tree.find(&["stress::outer", "stress::step"]).unwrap();
    let leaf = t
        .tree
        .find(&["stress::outer", "stress::step", "stress::leaf"])
        .unwrap();
    assert_eq!(
        (outer.calls, step.calls, leaf.calls),
        (1, ITERATIONS, ITERATIONS)
    );
    assert_eq!(t.recorded, 1 + 2 * ITERATIONS);
    assert!(t.running.is_empty());
    for n in &t.tree.nodes {
        let children: u64 = n.children.iter().map(|&c| t.tree.nodes[c].total_ns).sum();
        assert_eq!(
            n.total_ns,
            n.self_ns + children,
            "{}: total = self + children",
            n.name
        );
    }
    t
}

#[test]
fn slow_consumer_loses_records_not_counts() {
    perfgraph_core::set_verbosity(perfgraph_core::Verbosity::Level(2));

    // A consumer that reads nothing until both producers are done: each ring keeps only its newest lap.
    perfgraph_core::__private::pause_draining(true);
    run_two(["stress-a", "stress-b"]);
    common::wait_passes(2);
    for name in ["stress-a", "stress-b"] {
        let t = check_counts(name);
        assert_eq!(
            t.dropped,
            t.recorded - RING,
            "{name}: every record past one lap is counted as dropped"
        );
    }

    // And a consumer running concurrently, at its own pace: counts stay exact whatever it manages to read.
    run_two(["stress-c", "stress-d"]);
    common::wait_passes(2);
    for name in ["stress-c", "stress-d"] {
        let t = check_counts(name);
        assert!(t.dropped < t.recorded);
    }
}
