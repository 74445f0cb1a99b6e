//! `PERFGRAPH_OTLP` (spans `all`) against the truth, through `tests/otlp/receiver.py`, which decodes
//! every request with OpenTelemetry's own Python classes: the metrics (calls exactly, times within the
//! tolerance, histograms counting every call), and every span (its duration, and its start from `work`'s,
//! against the call the program timed).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::Reaped;
use crate::common::truth::{Call, Truth, Worst};
use crate::model;

/// The receiver: its port and the file of what it decoded.
pub struct Receiver {
    _child: Reaped,
    pub port: u16,
    out: PathBuf,
}

impl Receiver {
    /// Starts `receiver.py`; `None` (and a loud note) without a Python with OpenTelemetry's classes.
    pub fn start(dir: &Path) -> Option<Receiver> {
        let Some(python) = crate::common::python_with(
            "OTLP_CHECK_PYTHON",
            "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2",
        ) else {
            let _ = writeln!(
                std::io::stderr().lock(),
                "note: truth_live: OTLP was NOT checked: no Python with opentelemetry-proto's classes \
                 (set OTLP_CHECK_PYTHON; .ci/run does)"
            );
            return None;
        };
        let out = dir.join("received.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/receiver.py");
        let mut child = Reaped(
            Command::new(python)
                .arg(script)
                .arg("--out")
                .arg(&out)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap(),
        );
        let mut line = String::new();
        BufReader::new(child.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("receiver.py said {line:?}"));
        Some(Receiver {
            _child: child,
            port,
            out,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What it decoded, request by request (a line being written is left for later).
    pub fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// The bodies of the requests to `path`.
pub fn bodies<'a>(requests: &'a [Value], path: &str) -> Vec<&'a Value> {
    requests
        .iter()
        .filter(|r| r["path"] == path)
        .map(|r| {
            assert!(r.get("error").is_none(), "a request did not decode: {r}");
            &r["body"]
        })
        .collect()
}

/// A metric's points by their `section` attribute ("" for none).
pub fn points<'a>(body: &'a Value, name: &str) -> HashMap<String, &'a Value> {
    let metrics = body["resource_metrics"][0]["scope_metrics"][0]["metrics"]
        .as_array()
        .unwrap();
    let Some(m) = metrics.iter().find(|m| m["name"] == name) else {
        return HashMap::new();
    };
    let data = ["sum", "gauge", "histogram"]
        .iter()
        .find_map(|k| m.get(*k))
        .unwrap();
    data["data_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let section = p["attributes"][0]["value"]["string_value"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            (section, p)
        })
        .collect()
}

/// An int64 or fixed64 field (a string in protobuf's JSON) as a number.
pub fn int(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an int64: {v}"))
}

/// Seconds (a double) as ns.
pub fn ns(v: &Value) -> u64 {
    (v.as_f64().unwrap_or_else(|| panic!("not a double: {v}")) * 1e9).round() as u64
}

/// A metrics request against the truth.
pub fn check_metrics(w: &mut Worst, out: &str, body: &Value, truth: &Truth) {
    let calls = points(body, "perfgraph.section.calls");
    let time = points(body, "perfgraph.section.time");
    let own = points(body, "perfgraph.section.self_time");
    let histogram = points(body, "perfgraph.section.duration");
    for e in model::expected(truth) {
        let name = e.name;
        w.exact(
            out,
            &format!("{name} calls"),
            calls.get(name).map(|p| int(&p["as_int"])),
            Some(e.calls),
        );
        let future = name == "truth_future";
        if !future {
            // (a future's time is its busy time; the program timed its life: the histogram's)
            let got = time.get(name).map_or(0, |p| ns(&p["as_double"]));
            w.time(out, &format!("{name} time"), got, e.total, 0);
            if let Some(s) = e.self_time {
                let got = own.get(name).map_or(0, |p| ns(&p["as_double"]));
                w.time(out, &format!("{name} self_time"), got, s, 0);
            }
        }
        let Some(h) = histogram.get(name) else {
            w.exact(out, &format!("{name} histogram present"), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("{name} histogram count"),
            int(&h["count"]),
            e.calls,
        );
        let buckets: u64 = h["bucket_counts"].as_array().unwrap().iter().map(int).sum();
        w.exact(out, &format!("{name} histogram buckets"), buckets, e.calls);
        // The sum is of bucket midpoints (within 0.8% of each call); min and max are exact.
        w.time(
            out,
            &format!("{name} histogram sum"),
            ns(&h["sum"]),
            e.wall(),
            0,
        );
        w.time(
            out,
            &format!("{name} histogram min"),
            ns(&h["min"]),
            e.min(),
            0,
        );
        w.time(
            out,
            &format!("{name} histogram max"),
            ns(&h["max"]),
            e.max(),
            0,
        );
    }
    let ticks: u64 = model::ticks(truth).iter().map(|t| t.1).sum();
    w.exact(
        out,
        "tick calls",
        calls.get("tick").map(|p| int(&p["as_int"])),
        Some(ticks),
    );
    w.exact(
        out,
        "tick histogram count",
        histogram.get("tick").map(|h| int(&h["count"])),
        Some(ticks),
    );

    allocs_cpu_lost(w, out, body, truth, &calls);
}

/// Allocations, exact (none in the sections in `calls` that allocate nothing); cpu_spin's CPU time; no
/// span lost.
fn allocs_cpu_lost(
    w: &mut Worst,
    out: &str,
    body: &Value,
    truth: &Truth,
    calls: &HashMap<String, &Value>,
) {
    let a = &truth.raw["allocs"];
    let allocations = points(body, "perfgraph.section.allocations");
    let allocated = points(body, "perfgraph.section.allocated");
    let of = |m: &HashMap<String, &Value>, s: &str| m.get(s).map(|p| int(&p["as_int"]));
    w.exact(
        out,
        "alloc_known allocations",
        of(&allocations, "alloc_known"),
        a["count"].as_u64(),
    );
    w.exact(
        out,
        "alloc_known allocated",
        of(&allocated, "alloc_known"),
        a["bytes"].as_u64(),
    );
    for name in &model::allocate_nothing(truth) {
        if calls.contains_key(name) {
            w.exact(
                out,
                &format!("{name} allocations"),
                of(&allocations, name),
                Some(0),
            );
        }
    }
    let cpu = points(body, "perfgraph.section.cpu_time");
    let got = cpu.get("cpu_spin").map_or(0, |p| ns(&p["as_double"]));
    w.time(out, "cpu_spin cpu_time", got, model::cpu_spin_ns(truth), 0);
    let lost = points(body, "perfgraph.spans.lost");
    w.exact(
        out,
        "spans lost",
        lost.get("").map(|p| int(&p["as_int"])),
        Some(0),
    );
}

/// The threads gauge of a metrics request, if it has one.
pub fn threads(body: &Value) -> Option<u64> {
    points(body, "perfgraph.threads")
        .get("")
        .map(|p| int(&p["as_int"]))
}

/// Every span of the traces requests.
pub fn spans(requests: &[Value]) -> Vec<Value> {
    bodies(requests, "/v1/traces")
        .into_iter()
        .flat_map(|b| {
            b["resource_spans"][0]["scope_spans"][0]["spans"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

fn span_start(s: &Value) -> u64 {
    int(&s["start_time_unix_nano"])
}

fn span_end(s: &Value) -> u64 {
    int(&s["end_time_unix_nano"])
}

/// One section's spans on one thread, by start (`what` names them), and `work`'s span.
struct Spans<'a> {
    what: &'a str,
    got: &'a [&'a Value],
    work_span: &'a Value,
}

/// The spans' times against the section's `calls` on their thread (by start): each duration and start
/// from `work`'s; a future's (a span per poll), the first poll's start and the last one's end.
fn span_times(
    w: &mut Worst,
    out: &str,
    spans: &Spans,
    calls: &[&Call],
    truth: &Truth,
    future: bool,
) {
    let (what, got) = (spans.what, spans.got);
    let work = truth.one("work");
    let from_work = |s: &Value| span_start(s).saturating_sub(span_start(spans.work_span));
    if future {
        // A span per poll: the first starts with the future, the last ends with it.
        let polls = truth.raw["future"]["polls"].as_u64().unwrap();
        w.exact(
            out,
            &format!("{what} spans (polls)"),
            got.len() as u64,
            polls,
        );
        if let (Some(first), Some(last)) = (got.first(), got.last()) {
            let c = calls[0];
            w.time(
                out,
                &format!("{what} first poll's start from work"),
                from_work(first),
                c.start() - work.start(),
                0,
            );
            let last_end = span_end(last).saturating_sub(span_start(spans.work_span));
            w.time(
                out,
                &format!("{what} last poll's end from work"),
                last_end,
                c.end() - work.start(),
                0,
            );
        }
        return;
    }
    w.exact(out, &format!("{what} spans"), got.len(), calls.len());
    for (i, (s, c)) in got.iter().zip(calls).enumerate() {
        w.time(
            out,
            &format!("{what} #{i} duration"),
            span_end(s) - span_start(s),
            c.duration(),
            0,
        );
        w.time(
            out,
            &format!("{what} #{i} start from work"),
            from_work(s),
            c.start() - work.start(),
            0,
        );
    }
}

/// Every span against the call the program timed: counts per section and thread exactly, parents, each
/// duration, and each start from `work`'s span's start against the truth's (each start between the
/// call's outer and inner start, `work`'s too).
pub fn check_spans(w: &mut Worst, out: &str, spans: &[Value], truth: &Truth) {
    let thread = |s: &Value| -> String {
        s["attributes"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["key"] == "thread.name"))
            .and_then(|a| a["value"]["string_value"].as_str())
            .unwrap_or("")
            .to_owned()
    };
    let by_id: HashMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["span_id"].as_str().unwrap(), s))
        .collect();
    let parent = |s: &Value| -> Option<String> {
        let p = s.get("parent_span_id")?.as_str()?;
        Some(by_id.get(p).map_or("(not sent)".to_owned(), |p| {
            p["name"].as_str().unwrap().to_owned()
        }))
    };
    let mut grouped: HashMap<(String, String), Vec<&Value>> = HashMap::new();
    for s in spans {
        let key = (s["name"].as_str().unwrap().to_owned(), thread(s));
        grouped.entry(key).or_default().push(s);
    }
    for v in grouped.values_mut() {
        v.sort_by_key(|s| span_start(s));
    }
    let Some(work_span) = grouped
        .get(&("work".into(), "main".into()))
        .and_then(|v| v.first())
    else {
        w.exact(out, "work span present", false, true);
        return;
    };

    let mut keys: Vec<(String, String)> = truth
        .calls
        .iter()
        .map(|c| (c.name.clone(), c.thread.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    for (name, thread) in &keys {
        let mut calls: Vec<_> = truth
            .calls_of(name)
            .into_iter()
            .filter(|c| &c.thread == thread)
            .collect();
        calls.sort_by_key(|c| c.start_ns);
        let got = grouped
            .get(&(name.clone(), thread.clone()))
            .cloned()
            .unwrap_or_default();
        let what = format!("{name} on {thread}");
        for s in &got {
            w.exact(
                out,
                &format!("{what} parent"),
                parent(s),
                model::parent(name).map(str::to_owned),
            );
        }
        let spans = Spans {
            what: &what,
            got: &got,
            work_span,
        };
        span_times(w, out, &spans, &calls, truth, name == "truth_future");
    }
    // Ticks: a span each, under `ticks` and under `phase`.
    let ticks = grouped
        .get(&("tick".into(), "main".into()))
        .cloned()
        .unwrap_or_default();
    for (path, n) in model::ticks(truth) {
        let caller = path.rsplit('/').nth(1).unwrap();
        let got = ticks
            .iter()
            .filter(|s| parent(s).as_deref() == Some(caller))
            .count() as u64;
        w.exact(out, &format!("tick spans under {caller}"), got, n);
    }
    let mut other: Vec<&(String, String)> = grouped
        .keys()
        .filter(|k| k.0 != "tick" && !keys.contains(k))
        .collect();
    other.sort();
    w.exact(
        out,
        "spans of calls the program did not make",
        other,
        Vec::new(),
    );
}
