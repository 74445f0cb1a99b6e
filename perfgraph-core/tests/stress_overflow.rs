//! Two threads record far more than their rings hold while the consumer is held back: the producers never
//! block, the call counts stay exact, and the lost records are counted exactly, per thread.

mod common;

use perfgraph_core::{time_section, timed};

const ITERATIONS: u64 = 200_000;
/// Records per thread ring while a trace is written (perfgraph-core's `TRACE_RING_CAPACITY`).
const TRACE_RING: u64 = 1 << 18;
/// Records per thread ring without a trace (perfgraph-core's `RING_CAPACITY`).
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
    perfgraph_core::__test_hooks::pause_draining(true);
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

/// The child of `the_trace_line_states_every_loss`: one thread records far more than its ring holds while
/// draining is held back, then the process exits with the trace on.
#[test]
fn overflow_child() {
    if std::env::var_os("OVERFLOW_CHILD").is_none() {
        return;
    }
    perfgraph_core::__test_hooks::pause_draining(true);
    common::on_thread("stress-trace", work);
}

#[test]
fn the_trace_line_states_every_loss() {
    let dir = common::scratch("overflow");
    let path = dir.join("trace.json");
    let out = common::child_command(std::env::current_exe().unwrap())
        .args([
            "overflow_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("OVERFLOW_CHILD", "1")
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_VERBOSITY", "2")
        .env("PERFGRAPH_TRACE", &path)
        .env("PERFGRAPH_TRACE_LIMIT", "100K")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let end = trace.as_array().unwrap().last().unwrap();
    assert_eq!(end["name"], "perfgraph trace end");
    let other = &end["args"];
    let ring = other["dropped_ring_overflow"].as_u64().unwrap();
    let past_limit = other["dropped_past_trace_limit"].as_u64().unwrap();
    let written = other["events"].as_u64().unwrap();
    // Both losses happened: the ring kept at most one lap, of which the trace kept what fits in 100 kB.
    assert!(ring >= 1 + 2 * ITERATIONS - TRACE_RING, "{other}");
    assert!(past_limit > 0 && written > 0, "{other}");
    assert_eq!(
        written + ring + past_limit,
        1 + 2 * ITERATIONS,
        "every call is accounted for"
    );
    assert_eq!(
        other["dropped_ring_overflow_per_thread"],
        serde_json::json!([{"thread": "stress-trace", "dropped": ring}])
    );
    let line = format!(
        "perfgraph: trace {:?}: {written} section calls written; {} section calls are not in this trace: \
         {ring} lost to ring overflow (stress-trace: {ring}), {past_limit} past PERFGRAPH_TRACE_LIMIT=100000, \
         0 not written (disk full or reader too slow) (the file says so too)",
        path.display().to_string(),
        ring + past_limit
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "no {line:?} in:\n{stderr}"
    );
}
