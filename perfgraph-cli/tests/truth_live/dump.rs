//! `perfgraph dump <pid>` (the `PERFGRAPH_JSON` schema) against the truth: per call path calls exact,
//! times within the tolerance; allocations, counters, the lock, the future and the threads.

use std::collections::HashMap;

use serde_json::Value;

use crate::common::truth::{Truth, Worst, histogram_ns};
use crate::model::{self, Expected};

/// A tree's nodes by call path (`work/early`), the root left out.
pub fn by_path(tree: &[Value]) -> HashMap<String, &Value> {
    let mut paths: Vec<String> = Vec::with_capacity(tree.len());
    let mut out = HashMap::new();
    for n in tree {
        let path = match n["parent"].as_u64() {
            None => String::new(),
            Some(0) => n["name"].as_str().unwrap().to_owned(),
            Some(p) => format!("{}/{}", paths[p as usize], n["name"].as_str().unwrap()),
        };
        paths.push(path.clone());
        if !path.is_empty() {
            assert!(out.insert(path.clone(), n).is_none(), "two nodes at {path}");
        }
    }
    out
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// One section's node against the truth: calls, running, total, self, extremes and percentiles.
fn node(w: &mut Worst, out: &str, n: &Value, e: &Expected) {
    let what = |f: &str| format!("{} {f}", e.path);
    w.exact(out, &what("calls"), u(&n["calls"]), e.calls);
    w.exact(out, &what("running"), u(&n["running"]), 0);
    let future = n.get("polls").is_some();
    if future {
        // An async node's times are busy time (inside polls); the program timed the future's life,
        // which is `wall_ns`.
        w.time(out, &what("wall_ns"), u(&n["wall_ns"]), e.wall(), 0);
        w.time(out, &what("max_wall_ns"), u(&n["max_wall_ns"]), e.max(), 0);
    } else {
        w.time(out, &what("total_ns"), u(&n["total_ns"]), e.total, 0);
        if let Some(s) = e.self_time {
            w.time(out, &what("self_ns"), u(&n["self_ns"]), s, 0);
        }
    }
    w.time(out, &what("min_ns"), u(&n["min_ns"]), e.min(), 0);
    w.time(out, &what("max_ns"), u(&n["max_ns"]), e.max(), 0);
    for (f, p) in [("p50_ns", 50.0), ("p90_ns", 90.0), ("p99_ns", 99.0)] {
        let exact = e.percentile(p);
        w.time(out, &what(f), u(&n[f]), exact, histogram_ns(p, exact));
    }
}

/// The whole dump against the truth.
pub fn check(w: &mut Worst, out: &str, doc: &Value, truth: &Truth) {
    assert_eq!(doc["format"], "perfgraph-call-tree", "{out}");
    let tree = by_path(doc["tree"].as_array().unwrap());
    let expected = model::expected(truth);
    for e in &expected {
        match tree.get(&e.path) {
            Some(n) => node(w, out, n, e),
            None => w.exact(out, &format!("{} present", e.path), false, true),
        }
    }
    for (path, calls) in model::ticks(truth) {
        let got = tree.get(&path).map_or(0, |n| u(&n["calls"]));
        w.exact(out, &format!("{path} calls"), got, calls);
    }
    // Nothing the program did not run.
    let mut known: Vec<String> = expected.iter().map(|e| e.path.clone()).collect();
    known.extend(
        model::ticks(truth)
            .into_iter()
            .filter(|t| t.1 > 0)
            .map(|t| t.0),
    );
    let mut extra: Vec<&String> = tree.keys().filter(|p| !known.contains(p)).collect();
    extra.sort();
    w.exact(
        out,
        "call paths not in the program",
        extra,
        Vec::<&String>::new(),
    );

    allocs_cpu_future(w, out, &tree, truth);
    counter_and_lock(w, out, doc, truth);
    threads(w, out, doc, truth);
}

/// Allocations, exact; cpu_spin's CPU time; the future's polls.
fn allocs_cpu_future(w: &mut Worst, out: &str, tree: &HashMap<String, &Value>, truth: &Truth) {
    // Allocations: alloc_known's, exactly; none in the sections that allocate nothing.
    let allocs = &truth.raw["allocs"];
    if let Some(n) = tree.get(&model::path("alloc_known")) {
        for (f, t) in [
            ("allocs", "count"),
            ("alloc_bytes", "bytes"),
            ("self_allocs", "count"),
            ("self_alloc_bytes", "bytes"),
        ] {
            w.exact(
                out,
                &format!("alloc_known {f}"),
                n[f].as_u64(),
                allocs[t].as_u64(),
            );
        }
    }
    let none = model::allocate_nothing(truth);
    for (path, n) in tree {
        if none.iter().any(|name| n["name"] == name.as_str()) {
            w.exact(
                out,
                &format!("{path} allocs"),
                n["allocs"].as_u64(),
                Some(0),
            );
        }
    }

    // CPU time of cpu_spin; the future's polls.
    if let Some(n) = tree.get(&model::path("cpu_spin")) {
        w.time(
            out,
            "cpu_spin cpu_ns",
            u(&n["cpu_ns"]),
            model::cpu_spin_ns(truth),
            0,
        );
    }
    if let Some(n) = tree.get(&model::path("truth_future")) {
        w.exact(
            out,
            "truth_future polls",
            n["polls"].as_u64(),
            truth.raw["future"]["polls"].as_u64(),
        );
        w.exact(
            out,
            "truth_future cancelled",
            n["cancelled"].as_u64(),
            Some(0),
        );
    }
}

/// The counter, exact, and the lock.
fn counter_and_lock(w: &mut Worst, out: &str, doc: &Value, truth: &Truth) {
    // The counter.
    let t = &truth.raw["counters"][0];
    let c = &doc["counters"][t["name"].as_str().unwrap()];
    for f in ["samples", "last", "min", "max", "mean"] {
        w.exact(out, &format!("counter {f}"), c[f].as_f64(), t[f].as_f64());
    }
    let sum = t["mean"].as_f64().unwrap() * t["samples"].as_f64().unwrap();
    w.exact(out, "counter sum", c["sum"].as_f64(), Some(sum));

    // The lock.
    let (n, wait, max_wait, hold, max_hold) = model::lock(truth);
    let l = doc["locks"]
        .as_array()
        .and_then(|a| a.iter().find(|l| l["name"] == truth.raw["locks"]["name"]));
    match l {
        Some(l) => {
            w.exact(out, "lock acquisitions", u(&l["acquisitions"]), n);
            w.time(out, "lock wait_ns", u(&l["wait_ns"]), wait, 0);
            w.time(out, "lock max_wait_ns", u(&l["max_wait_ns"]), max_wait, 0);
            w.time(out, "lock hold_ns", u(&l["hold_ns"]), hold, 0);
            w.time(out, "lock max_hold_ns", u(&l["max_hold_ns"]), max_hold, 0);
        }
        None => w.exact(out, "lock present", false, true),
    }
}

/// The threads: their calls, their time in sections, and their own trees.
fn threads(w: &mut Worst, out: &str, doc: &Value, truth: &Truth) {
    // The threads: their calls, their time in sections, and their own trees.
    for thread in ["main", "locker-a", "locker-b"] {
        let t = doc["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == thread);
        let Some(t) = t else {
            w.exact(out, &format!("thread {thread} present"), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("{thread} calls"),
            u(&t["calls"]),
            model::thread_calls(truth, thread),
        );
        w.time(
            out,
            &format!("{thread} busy_ns"),
            u(&t["busy_ns"]),
            model::thread_busy(truth, thread),
            0,
        );
        w.exact(
            out,
            &format!("{thread} main"),
            t["main"].as_bool(),
            Some(thread == "main"),
        );
        if thread != "main" {
            let own = by_path(t["tree"].as_array().unwrap());
            let call = truth
                .calls_of("locker")
                .into_iter()
                .find(|c| c.thread == thread)
                .unwrap()
                .duration();
            let got = own.get("locker").map_or(0, |n| u(&n["total_ns"]));
            w.time(out, &format!("{thread} locker total_ns"), got, call, 0);
        }
    }
}
