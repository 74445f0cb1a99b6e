//! The files written at exit, against the truth: the call-tree JSON (`PERFGRAPH_JSON`) and the folded
//! stacks (`PERFGRAPH_FOLDED`). Both give nanoseconds: no rounding of their own.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::report::{cpu_truth, thread_truths};
use crate::common::truth::{Bounds, PathTruth, Truth, Worst, histogram_ns};

/// The JSON's tree as call paths (without the root), each with its node.
fn tree_paths(tree: &[Value]) -> Vec<(Vec<String>, &Value)> {
    let mut paths: Vec<Vec<String>> = Vec::with_capacity(tree.len());
    let mut out = Vec::new();
    for node in tree {
        let path = match node["parent"].as_u64() {
            None => Vec::new(),
            Some(parent) => {
                let mut p = paths[parent as usize].clone();
                p.push(node["name"].as_str().unwrap().to_owned());
                p
            }
        };
        paths.push(path.clone());
        if !path.is_empty() {
            out.push((path, node));
        }
    }
    out
}

/// One node's figures against its path's truth: calls exact, total and self time, the shortest and
/// longest call and the percentiles (within the histogram's 1.6% of the outer bound).
fn node(w: &mut Worst, out: &str, what: &str, n: &Value, t: &PathTruth) {
    let u = |k: &str| {
        n[k].as_u64()
            .unwrap_or_else(|| panic!("{what}: no {k} in {n}"))
    };
    w.exact(out, &format!("{what}: calls"), u("calls"), t.calls);
    if let Some(total) = t.total {
        w.time(out, &format!("{what}: total_ns"), u("total_ns"), total, 0);
    }
    if let Some(self_time) = t.self_time {
        w.time(out, &format!("{what}: self_ns"), u("self_ns"), self_time, 0);
    }
    let Some(d) = &t.durations else { return };
    for (key, p) in [
        ("min_ns", 0.0),
        ("p50_ns", 50.0),
        ("p90_ns", 90.0),
        ("p99_ns", 99.0),
        ("max_ns", 100.0),
    ] {
        let exact = d.percentile(p);
        w.time(
            out,
            &format!("{what}: {key}"),
            u(key),
            exact,
            histogram_ns(p, exact),
        );
    }
}

/// The call-tree JSON: every path's node, the allocations, the future, the CPU time, the counters, the
/// locks, the threads, and the run's length.
pub fn json(w: &mut Worst, path: &Path, truth: &Truth) {
    let out = "json";
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let truths = truth.paths_on(None);
    let tree = doc["tree"].as_array().unwrap();
    let nodes = tree_paths(tree);
    for (path, n) in &nodes {
        let what = path.join(";");
        let Some(t) = truths.get(path) else {
            w.exact(out, &format!("{what}: a path the program ran"), false, true);
            continue;
        };
        node(w, out, &what, n, t);
    }
    for p in truths.keys() {
        let has = nodes.iter().any(|(q, _)| q == p);
        w.exact(out, &format!("{}: has a node", p.join(";")), has, true);
    }
    allocs(w, out, &nodes, truth);
    future_and_cpu(w, out, &nodes, truth);
    counters_and_lock(w, out, &doc, truth);
    threads(w, out, &doc, truth);

    let wall = doc["wall_ns"].as_u64().unwrap();
    w.exact(
        out,
        "the root's total is wall_ns",
        tree[0]["total_ns"].as_u64(),
        Some(wall),
    );
    run_length_ns(w, "run length: json", wall, truth);
}

/// The nodes of section `name`, on every path.
fn named<'a>(nodes: &[(Vec<String>, &'a Value)], name: &str) -> Vec<(Vec<String>, &'a Value)> {
    nodes
        .iter()
        .filter(|(p, _)| p.last().is_some_and(|n| n == name))
        .cloned()
        .collect()
}

/// The allocating section's allocations and bytes, exact; none in the sections that allocate nothing.
fn allocs(w: &mut Worst, out: &str, nodes: &[(Vec<String>, &Value)], truth: &Truth) {
    let a = &truth.raw["allocs"];
    let section = a["section"].as_str().unwrap();
    for (_, n) in named(nodes, section) {
        for (key, truth) in [
            ("allocs", "count"),
            ("alloc_bytes", "bytes"),
            ("self_allocs", "count"),
            ("self_alloc_bytes", "bytes"),
        ] {
            w.exact(
                out,
                &format!("{section}: {key}"),
                n[key].as_u64(),
                a[truth].as_u64(),
            );
        }
    }
    for none in a["none"].as_array().into_iter().flatten() {
        let name = none.as_str().unwrap();
        for (p, n) in named(nodes, name) {
            for key in ["allocs", "self_allocs"] {
                w.exact(
                    out,
                    &format!("{} (allocates nothing): {key}", p.join(";")),
                    n[key].as_u64(),
                    Some(0),
                );
            }
        }
    }
}

/// The future's polls and wall time, and cpu_spin's CPU time.
fn future_and_cpu(w: &mut Worst, out: &str, nodes: &[(Vec<String>, &Value)], truth: &Truth) {
    let f = &truth.raw["future"];
    let name = f["name"].as_str().unwrap();
    let life = truth.one(name).duration();
    for (_, n) in named(nodes, name) {
        w.exact(
            out,
            &format!("{name}: polls"),
            n["polls"].as_u64(),
            f["polls"].as_u64(),
        );
        w.exact(
            out,
            &format!("{name}: cancelled"),
            n["cancelled"].as_u64(),
            Some(0),
        );
        for key in ["wall_ns", "max_wall_ns"] {
            w.time(
                out,
                &format!("{name}: {key}"),
                n[key].as_u64().unwrap(),
                life,
                0,
            );
        }
    }
    let cpu = cpu_truth(truth);
    for (_, n) in named(nodes, "cpu_spin") {
        for key in ["cpu_ns", "self_cpu_ns"] {
            w.time(
                out,
                &format!("cpu_spin: {key}"),
                n[key].as_u64().unwrap(),
                cpu,
                0,
            );
        }
    }
}

/// The counters, exact, and the lock.
fn counters_and_lock(w: &mut Worst, out: &str, doc: &Value, truth: &Truth) {
    for c in truth.raw["counters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let got = &doc["counters"][name];
        w.exact(
            out,
            &format!("counter {name}: samples"),
            got["samples"].as_u64(),
            c["samples"].as_u64(),
        );
        for key in ["last", "min", "max", "mean"] {
            w.exact(
                out,
                &format!("counter {name}: {key}"),
                got[key].as_f64(),
                c[key].as_f64(),
            );
        }
    }

    let acq = truth.lock_acquisitions();
    let lock_name = truth.raw["locks"]["name"].as_str().unwrap();
    let lock = doc["locks"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["name"] == lock_name));
    w.exact(out, "the lock's entry", lock.is_some(), true);
    if let Some(lock) = lock {
        w.exact(
            out,
            "lock: acquisitions",
            lock["acquisitions"].as_u64(),
            Some(acq.len() as u64),
        );
        let (waits, holds): (Vec<u64>, Vec<u64>) = acq.iter().map(|(_, w, h)| (*w, *h)).unzip();
        for (key, truth) in [
            ("wait_ns", waits.iter().sum::<u64>()),
            ("max_wait_ns", *waits.iter().max().unwrap()),
            ("hold_ns", holds.iter().sum::<u64>()),
            ("max_hold_ns", *holds.iter().max().unwrap()),
        ] {
            w.time(
                out,
                &format!("lock: {key}"),
                lock[key].as_u64().unwrap(),
                Bounds::single(truth),
                0,
            );
        }
    }
}

/// Each thread's time alive, time in sections and calls.
fn threads(w: &mut Worst, out: &str, doc: &Value, truth: &Truth) {
    let threads = doc["threads"].as_array().unwrap();
    for (name, alive, busy, calls) in thread_truths(truth) {
        let Some(t) = threads.iter().find(|t| t["name"] == name.as_str()) else {
            w.exact(out, &format!("thread {name}: present"), false, true);
            continue;
        };
        w.between(
            out,
            &format!("thread {name}: alive_ns"),
            t["alive_ns"].as_u64().unwrap(),
            alive,
            0,
        );
        w.time(
            out,
            &format!("thread {name}: busy_ns"),
            t["busy_ns"].as_u64().unwrap(),
            busy,
            0,
        );
        w.exact(
            out,
            &format!("thread {name}: calls"),
            t["calls"].as_u64(),
            Some(calls),
        );
    }
}

/// The run's length in ns (see `report::run_length`).
pub fn run_length_ns(w: &mut Worst, out: &str, got_ns: u64, truth: &Truth) {
    w.time(
        out,
        "wall_ns (the run's wall time)",
        got_ns,
        truth.run_length(),
        0,
    );
    w.exact(
        out,
        &format!(
            "wall_ns {got_ns} at most the run timed from outside ({} ns)",
            truth.outside_ns
        ),
        got_ns <= truth.outside_ns,
        true,
    );
}

/// The folded stacks: each path's self time against the truth's (total minus the children's totals, as
/// bounds); a path without a line has 0 self time.
pub fn folded(w: &mut Worst, path: &Path, truth: &Truth) {
    let out = "folded";
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = BTreeMap::<Vec<String>, u64>::new();
    for line in text.lines() {
        let (stack, ns) = line.rsplit_once(' ').unwrap();
        let path: Vec<String> = stack.split(';').map(str::to_owned).collect();
        lines.insert(path, ns.parse().unwrap());
    }
    let truths = truth.paths_on(None);
    for p in lines.keys() {
        w.exact(
            out,
            &format!("{}: a path the program ran", p.join(";")),
            truths.contains_key(p),
            true,
        );
    }
    for (p, t) in &truths {
        if let Some(self_time) = t.self_time {
            let got = lines.get(p).copied().unwrap_or(0);
            w.time(out, &format!("{}: self ns", p.join(";")), got, self_time, 0);
        }
    }
}
