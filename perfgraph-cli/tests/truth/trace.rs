//! The trace (`PERFGRAPH_TRACE`), both formats read into one model and held to the truth: every call of
//! every section (its duration, and its start relative to `work`'s start, as the truth's starts are),
//! the counts exact, the locks' waits and holds, the args, the events, the counter's values.
//!
//! The Chrome JSON is read here; the Perfetto protobuf by `pftrace.py`, with Perfetto's own Python classes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::report::cpu_truth;
use super::text;
use crate::common::truth::{Bounds, Truth, Worst};

/// A slice: its thread (or the lock's thread), name, start and duration (ns on the trace's clock), args.
#[derive(Debug, Clone)]
pub struct Slice {
    pub thread: String,
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: u64,
    pub args: Value,
}

/// What the harness reads from a trace, whatever its format.
#[derive(Debug, Default)]
pub struct TraceData {
    /// Section calls, on the threads' tracks.
    pub slices: Vec<Slice>,
    /// Lock waits (`wait: <lock>`) and holds (`hold: <lock>`), on the thread that waited or held.
    pub locks: Vec<Slice>,
    /// Timed futures' whole lives (thread empty).
    pub futures: Vec<Slice>,
    /// `event!` instants: (thread, name, args).
    pub events: Vec<(String, String, Value)>,
    /// `counter!` values by counter, in file order.
    pub counters: BTreeMap<String, Vec<f64>>,
    /// Live print's markers.
    pub markers: Vec<String>,
    /// The closing event's args.
    pub end: Value,
}

/// Reads a Chrome Trace Event JSON file.
pub fn chrome(path: &Path) -> TraceData {
    let events: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let ns = |e: &Value, k: &str| (e[k].as_f64().unwrap() * 1000.0).round() as i64;
    let mut threads = BTreeMap::<u64, String>::new();
    for e in &events {
        if e["ph"] == "M" && e["name"] == "thread_name" {
            threads.insert(
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            );
        }
    }
    let thread = |e: &Value| {
        e["tid"]
            .as_u64()
            .and_then(|t| threads.get(&t).cloned())
            .unwrap_or_default()
    };
    let mut d = TraceData::default();
    let mut begun = BTreeMap::<String, (String, i64)>::new();
    for e in &events {
        let (ph, cat) = (e["ph"].as_str().unwrap_or(""), e["cat"].as_str());
        let name = e["name"].as_str().unwrap_or("").to_owned();
        let slice = || Slice {
            thread: thread(e),
            name: name.clone(),
            start_ns: ns(e, "ts"),
            dur_ns: ns(e, "dur") as u64,
            args: e["args"].clone(),
        };
        match (ph, cat) {
            ("X", None) => d.slices.push(slice()),
            ("X", Some("lock")) => d.locks.push(slice()),
            ("b", Some("async")) => {
                begun.insert(e["id"].to_string(), (name, ns(e, "ts")));
            }
            ("e", Some("async")) => {
                let (name, start) = begun
                    .remove(&e["id"].to_string())
                    .expect("an async end without its begin");
                d.futures.push(Slice {
                    thread: String::new(),
                    name,
                    start_ns: start,
                    dur_ns: (ns(e, "ts") - start) as u64,
                    args: e["args"].clone(),
                });
            }
            ("i", Some("event")) => d.events.push((thread(e), name, e["args"].clone())),
            ("i", Some("live print")) => d.markers.push(name),
            ("C", Some("counter")) => {
                if let Some(v) = e["args"][&name].as_f64() {
                    d.counters.entry(name).or_default().push(v);
                }
            }
            ("i", _) if name == "perfgraph trace end" => d.end = e["args"].clone(),
            _ => {}
        }
    }
    d
}

/// The Python that has Perfetto's classes: `PERFETTO_CHECK_PYTHON` (as `.ci/run` sets it), else a
/// `python3` that has them; `None` after saying, visibly, that the Perfetto check did not run.
pub fn perfetto_python(test: &str) -> Option<String> {
    let python = crate::common::python_with(
        "PERFETTO_CHECK_PYTHON",
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    );
    if python.is_none() {
        use std::io::Write;
        // Straight to the process's stderr: `eprintln!` is captured by the test harness.
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: {test}: the Perfetto trace check did not run: no Python with the `perfetto` and `protobuf` \
             packages (set PERFETTO_CHECK_PYTHON; .ci/run does)"
        );
    }
    python
}

/// Reads a Perfetto protobuf trace with `pftrace.py` (Perfetto's own classes).
pub fn perfetto(python: &str, path: &Path) -> TraceData {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/truth/pftrace.py");
    let out = Command::new(python).arg(script).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "pftrace.py failed on {}:\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let slice = |s: &Value, thread: bool| {
        let a = s.as_array().unwrap();
        let (thread, rest) = if thread {
            (a[0].as_str().unwrap().to_owned(), &a[1..])
        } else {
            (String::new(), &a[..])
        };
        Slice {
            thread,
            name: rest[0].as_str().unwrap().to_owned(),
            start_ns: rest[1].as_i64().unwrap(),
            dur_ns: rest[2].as_u64().unwrap(),
            args: rest[3].clone(),
        }
    };
    let list = |k: &str, thread: bool| {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|s| slice(s, thread))
            .collect()
    };
    TraceData {
        slices: list("slices", true),
        locks: list("locks", true),
        futures: list("futures", false),
        events: v["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e[0].as_str().unwrap().to_owned(),
                    e[1].as_str().unwrap().to_owned(),
                    e[3].clone(),
                )
            })
            .collect(),
        counters: v["counters"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, vs)| {
                (
                    k.clone(),
                    vs.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap())
                        .collect(),
                )
            })
            .collect(),
        markers: v["markers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m[0].as_str().unwrap().to_owned())
            .collect(),
        end: v["end"].clone(),
    }
}

/// Every check of a trace against the truth, as `out` (`chrome trace`, `perfetto trace`).
pub fn check(w: &mut Worst, out: &str, d: &TraceData, truth: &Truth) {
    let expected = counts(w, out, d, truth);

    // Every timed call: its duration, and its start relative to `work`'s start.
    let trace_work = d
        .slices
        .iter()
        .find(|s| s.name == "work" && s.thread == "main");
    let Some(trace_work) = trace_work else {
        w.exact(out, "the work slice", false, true);
        return;
    };
    let zero = trace_work.start_ns;
    calls(w, out, d, truth, &expected, zero);
    future(w, out, d, truth, zero);

    // The CPU time of cpu_spin's one call, in its slice's args.
    let cpu = cpu_truth(truth);
    for s in d.slices.iter().filter(|s| s.name == "cpu_spin") {
        match s.args["cpu_ns"].as_u64() {
            Some(got) => w.time(out, "cpu_spin: cpu_ns arg", got, cpu, 0),
            None => w.exact(out, "cpu_spin: a cpu_ns arg", false, true),
        }
    }

    locks(w, out, d, truth);

    args_events_counters(w, out, d, truth);
    markers(w, out, d, truth);
}

/// The closing event (the trace is complete, and holds every call) and the slices per thread and section,
/// exact; returns the counts expected.
fn counts(
    w: &mut Worst,
    out: &str,
    d: &TraceData,
    truth: &Truth,
) -> BTreeMap<(String, String), u64> {
    let future = truth.raw["future"]["name"].as_str().unwrap();
    let polls = truth.raw["future"]["polls"].as_u64().unwrap();
    let ticks = truth.raw["tick_calls"].as_u64().unwrap();

    // The closing event: the trace is complete, and holds every call.
    for key in [
        "unfinished",
        "dropped_ring_overflow",
        "dropped_past_trace_limit",
        "dropped_unwritten",
    ] {
        w.exact(
            out,
            &format!("closing event: {key}"),
            d.end[key].as_u64(),
            Some(0),
        );
    }
    let timed = truth.calls.iter().filter(|c| c.name != future).count() as u64;
    w.exact(
        out,
        "closing event: events (section calls)",
        d.end["events"].as_u64(),
        Some(timed + ticks + polls),
    );

    // Counts per thread and section, exact.
    let mut counts = BTreeMap::<(String, String), u64>::new();
    for s in &d.slices {
        *counts
            .entry((s.thread.clone(), s.name.clone()))
            .or_default() += 1;
    }
    let mut expected = BTreeMap::<(String, String), u64>::new();
    for c in &truth.calls {
        let n = if c.name == future { polls } else { 1 };
        *expected
            .entry((c.thread.clone(), c.name.clone()))
            .or_default() += n;
    }
    *expected
        .entry(("main".to_owned(), "tick".to_owned()))
        .or_default() += ticks;
    for key in counts.keys().chain(expected.keys()) {
        let what = format!("{} {}: calls", key.0, key.1);
        w.exact(
            out,
            &what,
            counts.get(key).copied().unwrap_or(0),
            expected.get(key).copied().unwrap_or(0),
        );
    }
    expected
}

/// Every timed call (those `expected` counts, but the ticks and the future): its duration, and its start
/// relative to `work`'s start (`zero` on the trace's clock).
fn calls(
    w: &mut Worst,
    out: &str,
    d: &TraceData,
    truth: &Truth,
    expected: &BTreeMap<(String, String), u64>,
    zero: i64,
) {
    let future = truth.raw["future"]["name"].as_str().unwrap();
    let work = truth.one("work");
    for ((thread, name), _) in expected
        .iter()
        .filter(|(k, _)| k.1 != "tick" && k.1 != future)
    {
        let mut calls: Vec<_> = truth
            .calls
            .iter()
            .filter(|c| &c.thread == thread && &c.name == name)
            .collect();
        calls.sort_by_key(|c| c.start_ns);
        let mut slices: Vec<_> = d
            .slices
            .iter()
            .filter(|s| &s.thread == thread && &s.name == name)
            .collect();
        slices.sort_by_key(|s| s.start_ns);
        for (i, (c, s)) in calls.iter().zip(&slices).enumerate() {
            let what = format!("{thread} {name} #{i}");
            w.time(out, &format!("{what}: duration"), s.dur_ns, c.duration(), 0);
            start(w, out, &what, s.start_ns - zero, c.start() - work.start());
        }
    }
}

/// The future (`zero`: `work`'s start on the trace's clock).
fn future(w: &mut Worst, out: &str, d: &TraceData, truth: &Truth, zero: i64) {
    let future = truth.raw["future"]["name"].as_str().unwrap();
    let work = truth.one("work");
    // The future: its whole life as an async slice; its polls, one after another, span it.
    let life = truth.one(future);
    let lives: Vec<_> = d.futures.iter().filter(|f| f.name == future).collect();
    w.exact(out, &format!("{future}: async slices"), lives.len(), 1);
    if let Some(f) = lives.first() {
        w.time(
            out,
            &format!("{future}: life (async slice)"),
            f.dur_ns,
            life.duration(),
            0,
        );
        start(
            w,
            out,
            &format!("{future} (async slice)"),
            f.start_ns - zero,
            life.start() - work.start(),
        );
        w.exact(
            out,
            &format!("{future}: cancelled"),
            f.args["cancelled"].as_bool(),
            Some(false),
        );
    }
    let poll_slices: Vec<_> = d.slices.iter().filter(|s| s.name == future).collect();
    if !poll_slices.is_empty() {
        let first = poll_slices.iter().map(|s| s.start_ns).min().unwrap();
        let last = poll_slices
            .iter()
            .map(|s| s.start_ns + s.dur_ns as i64)
            .max()
            .unwrap();
        w.time(
            out,
            &format!("{future}: first poll's start to last poll's end"),
            (last - first) as u64,
            life.duration(),
            0,
        );
        let busy: u64 = poll_slices.iter().map(|s| s.dur_ns).sum();
        w.time(
            out,
            &format!("{future}: polls summed"),
            busy,
            life.busy(),
            0,
        );
    }
}

/// The args, the events and the counter's values, exact.
fn args_events_counters(w: &mut Worst, out: &str, d: &TraceData, truth: &Truth) {
    // Args: with_arg's n, in call order.
    let a = &truth.raw["args"];
    let (section, arg) = (a["section"].as_str().unwrap(), a["name"].as_str().unwrap());
    let mut with: Vec<_> = d.slices.iter().filter(|s| s.name == section).collect();
    with.sort_by_key(|s| s.start_ns);
    let got: Vec<Option<u64>> = with.iter().map(|s| s.args[arg].as_u64()).collect();
    let want: Vec<Option<u64>> = a["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_u64)
        .collect();
    w.exact(out, &format!("{section}: args {arg}"), got, want);

    // Events: how many, each with its index.
    let e = &truth.raw["events"];
    let name = e["name"].as_str().unwrap();
    let got: Vec<Option<u64>> = d
        .events
        .iter()
        .filter(|(_, n, _)| n == name)
        .map(|(_, _, a)| a["i"].as_u64())
        .collect();
    let want: Vec<Option<u64>> = (0..e["count"].as_u64().unwrap()).map(Some).collect();
    w.exact(out, &format!("{name}: events and their args"), got, want);

    // The counter track: every value, in order.
    for c in truth.raw["counters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let n = c["samples"].as_u64().unwrap();
        let want: Vec<f64> = (1..=n)
            .map(|i| i as f64 * c["min"].as_f64().unwrap())
            .collect();
        w.exact(
            out,
            &format!("counter {name}: values"),
            d.counters.get(name).cloned().unwrap_or_default(),
            want,
        );
    }
}

/// Live print's markers.
fn markers(w: &mut Worst, out: &str, d: &TraceData, truth: &Truth) {
    // Live print's markers: the lines as printed, their seconds against the truth.
    for (message, section) in [("Sleeping long", "long_sleep"), ("Truth run", "work")] {
        let stats: Vec<_> = d.markers.iter().filter(|m| m.ends_with("MB]")).collect();
        let marker = stats.iter().find(|m| m.contains(message)).or_else(|| {
            (section == "long_sleep")
                .then(|| stats.iter().find(|m| m.starts_with('[')))
                .flatten()
        });
        let Some(marker) = marker else {
            w.exact(
                out,
                &format!("a live-print marker with {message:?}'s stats"),
                false,
                true,
            );
            continue;
        };
        let at = marker.find("[ ").unwrap();
        let seconds = marker[at + 1..].split(" s]").next().unwrap().trim();
        w.time(
            out,
            &format!("marker {marker:?}: seconds"),
            text::ns(seconds, text::SECOND),
            truth.one(section).duration(),
            text::resolution(seconds, text::SECOND),
        );
    }
}

/// A start time relative to `work`'s start (`got`, ns), held to the bounds of the true offset (the call's
/// outer start less `work`'s inner one, up to its inner start less `work`'s outer one), with the tolerance
/// of the low one. It is positive (`work` starts first); a negative one counts as 0, its error still the
/// distance.
fn start(w: &mut Worst, out: &str, what: &str, got: i64, truth: Bounds) {
    let what = format!("{what}: start after work's start");
    w.time(out, &what, got.max(0) as u64, truth, 0);
}

/// Lock slices: each thread's holds one by one against the program's own, and its waits summed.
fn locks(w: &mut Worst, out: &str, d: &TraceData, truth: &Truth) {
    let lock = truth.raw["locks"]["name"].as_str().unwrap();
    let acq = truth.lock_acquisitions();
    let mut threads: Vec<&String> = acq.iter().map(|(t, _, _)| t).collect();
    threads.sort();
    threads.dedup();
    let mut holds_total = 0;
    for thread in threads {
        let mine: Vec<_> = acq.iter().filter(|(t, _, _)| t == thread).collect();
        let mut holds: Vec<_> = d
            .locks
            .iter()
            .filter(|s| &s.thread == thread && s.name == format!("hold: {lock}"))
            .collect();
        holds.sort_by_key(|s| s.start_ns);
        w.exact(
            out,
            &format!("{thread}: hold slices"),
            holds.len(),
            mine.len(),
        );
        for (i, (s, (_, _, hold))) in holds.iter().zip(&mine).enumerate() {
            let hold = Bounds::single(*hold);
            w.time(out, &format!("{thread}: hold #{i}"), s.dur_ns, hold, 0);
        }
        let waits: u64 = d
            .locks
            .iter()
            .filter(|s| &s.thread == thread && s.name == format!("wait: {lock}"))
            .map(|s| s.dur_ns)
            .sum();
        w.time(
            out,
            &format!("{thread}: waits summed"),
            waits,
            Bounds::single(mine.iter().map(|(_, w, _)| w).sum()),
            0,
        );
        holds_total += holds.len();
    }
    w.exact(out, "hold slices in all", holds_total, acq.len());
}
