//! `PERFGRAPH_OTLP` against a receiver that decodes every request with OpenTelemetry's own Python classes
//! (PyPI's `opentelemetry-proto`, which `.ci/run` installs; `tests/otlp/receiver.py`). The program is
//! `examples/requests`: `serve` runs 8 `handle` calls, each a `query` of 250 ms (every fourth) or 1 ms,
//! then a worker thread calls `tick` 5,000 times (within its ring: the background thread, slowed down on a
//! busy machine, may drain it late, and loses none of it).
//!
//! * the metrics at exit count every call, and the duration histograms as many, and the threads alive;
//! * the slow spans are the slow calls and their callers, each with its parent, in one trace;
//! * an interval posts cumulative figures, and exit posts the last;
//! * `all` sends every call;
//! * a collector that is not there, or never answers, or answers 503, changes nothing of the program's but
//!   one warning line.
//!
//! Without Python and those classes the tests say loudly that they did not run.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{PATIENCE, Reaped, example};
use serde_json::Value;

/// The Python with OpenTelemetry's classes: `OTLP_CHECK_PYTHON` (which must have them), else `python3` if
/// it has them.
fn python() -> Option<String> {
    common::python_with(
        "OTLP_CHECK_PYTHON",
        "opentelemetry.proto.collector.metrics.v1.metrics_service_pb2",
    )
}

/// A running receiver: its port and the file of what it decoded.
struct Receiver {
    _child: Reaped,
    port: u16,
    out: PathBuf,
    /// Its directory, removed after the receiver is stopped (fields drop in order).
    _dir: common::Scratch,
}

impl Receiver {
    /// Starts `receiver.py` with `args`; `None` (and a loud note) without Python's classes.
    fn start(test: &str, args: &[&str]) -> Option<Receiver> {
        let Some(python) = python() else {
            let _ = writeln!(
                std::io::stderr().lock(),
                "note: {test} did NOT run: no Python with opentelemetry-proto's classes (set \
                 OTLP_CHECK_PYTHON; .ci/run does)"
            );
            return None;
        };
        let dir = common::scratch("perfgraph-otlp", test);
        let out = dir.join("received.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp/receiver.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg("--out")
            .arg(&out)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("receiver.py said {line:?}"));
        Some(Receiver {
            _child: Reaped(child),
            port,
            out,
            _dir: dir,
        })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What it decoded, request by request.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Runs `examples/requests` with `env`, in a runtime directory of its own and perfgraph otherwise quiet.
fn run(env: &[(&str, &str)]) -> (Output, Duration) {
    // A directory per run: tests run at once in this process.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::scratch("perfgraph-otlp-run", &n.to_string());
    let mut cmd = Command::new(example("requests"));
    for name in perfgraph_core::Config::VARIABLE_NAMES {
        cmd.env_remove(name);
    }
    cmd.env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_RESOURCE_ATTRIBUTES")
        .env("XDG_RUNTIME_DIR", &dir)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off")
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hang is killed (and fails below) rather than holding the suite.
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watching = std::sync::Arc::clone(&done);
    std::thread::spawn(move || {
        let start = Instant::now();
        while !watching.load(std::sync::atomic::Ordering::Relaxed) {
            if start.elapsed() > PATIENCE {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let output = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let elapsed = start.elapsed();
    assert!(elapsed < PATIENCE, "the program hung");
    (output, elapsed)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The requests to `path`, their bodies.
fn bodies<'a>(requests: &'a [Value], path: &str) -> Vec<&'a Value> {
    requests
        .iter()
        .filter(|r| r["path"] == path)
        .map(|r| {
            assert!(r.get("error").is_none(), "a request did not decode: {r}");
            &r["body"]
        })
        .collect()
}

/// A metrics request's metric `name`.
fn metric<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["resource_metrics"][0]["scope_metrics"][0]["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)
}

/// A metric's points by their `section` attribute: the point.
fn by_section<'a>(body: &'a Value, name: &str) -> HashMap<String, &'a Value> {
    let m = metric(body, name).unwrap_or_else(|| panic!("no {name} in {body}"));
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
fn int(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an int64: {v}"))
}

/// The resource's attribute `key`.
fn resource<'a>(body: &'a Value, signal: &str, key: &str) -> Option<&'a Value> {
    body[signal][0]["resource"]["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

/// Every span of the traces requests.
fn spans(requests: &[Value]) -> Vec<Value> {
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

#[test]
fn metrics_count_every_call_and_spans_are_the_slow_calls_with_their_callers() {
    let Some(receiver) = Receiver::start("metrics_and_slow_spans", &[]) else {
        return;
    };
    let (out, _) = run(&[
        ("PERFGRAPH_OTLP", &receiver.url()),
        ("PERFGRAPH_OTLP_SLOW", "0.2"),
        ("OTEL_SERVICE_NAME", "checkout"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "deployment.environment=test%20a",
        ),
        ("OMPI_COMM_WORLD_RANK", "3"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "perfgraph said something");
    let requests = receiver.requests();
    // One interval never came (10 s): exit posted the metrics once.
    let metrics = bodies(&requests, "/v1/metrics");
    assert_eq!(metrics.len(), 1, "{requests:?}");
    let m = metrics[0];
    let calls = by_section(m, "perfgraph.section.calls");
    let histogram = by_section(m, "perfgraph.section.duration");
    for (section, n) in [("serve", 1), ("handle", 8), ("query", 8), ("tick", 5_000)] {
        assert_eq!(int(&calls[section]["as_int"]), n, "calls of {section}");
        let h = histogram[section];
        assert_eq!(int(&h["count"]), n, "histogram count of {section}");
        let buckets: u64 = h["bucket_counts"].as_array().unwrap().iter().map(int).sum();
        assert_eq!(buckets, n, "histogram buckets of {section}");
        assert_eq!(h["explicit_bounds"].as_array().unwrap().len(), 22);
    }
    // 2 slow queries of 250 ms: at least 0.5 s in `query`.
    let time = by_section(m, "perfgraph.section.time");
    assert!(time["query"]["as_double"].as_f64().unwrap() >= 0.5);
    let sum = metric(m, "perfgraph.section.calls").unwrap();
    assert_eq!(
        sum["sum"]["aggregation_temporality"],
        "AGGREGATION_TEMPORALITY_CUMULATIVE"
    );
    assert_eq!(sum["sum"]["is_monotonic"], true);
    assert!(metric(m, "perfgraph.memory.resident").is_some());
    // The threads alive at exit: main (the ticker was joined), as the report has it; not the live list
    // after the final drains, which folded every exited thread, main's too (its exit hook runs in `exit()`).
    let threads = by_section(m, "perfgraph.threads");
    assert_eq!(int(&threads[""]["as_int"]), 1, "threads at exit");
    let lost = by_section(m, "perfgraph.spans.lost");
    assert_eq!(int(&lost[""]["as_int"]), 0);
    // The resource.
    let name = |key| resource(m, "resource_metrics", key).cloned();
    assert_eq!(
        name("service.name"),
        Some(serde_json::json!({"string_value": "checkout"}))
    );
    assert_eq!(
        name("deployment.environment"),
        Some(serde_json::json!({"string_value": "test a"}))
    );
    assert_eq!(
        name("perfgraph.rank"),
        Some(serde_json::json!({"int_value": "3"}))
    );
    assert!(name("host.name").is_some());
    assert!(name("process.pid").is_some());

    // The spans: the 2 slow queries, their handles, and `serve`, which called them.
    let spans = spans(&requests);
    let mut names: Vec<&str> = spans.iter().map(|s| s["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["handle", "handle", "query", "query", "serve"]);
    let by_id: HashMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["span_id"].as_str().unwrap(), s))
        .collect();
    let parent = |s: &Value| {
        s.get("parent_span_id").and_then(Value::as_str).map(|p| {
            by_id
                .get(p)
                .unwrap_or_else(|| panic!("parent {p} not sent"))
        })
    };
    let trace = spans[0]["trace_id"].as_str().unwrap();
    for s in &spans {
        assert_eq!(s["trace_id"], trace, "one trace: {s}");
        assert_eq!(s["kind"], "SPAN_KIND_INTERNAL");
        let ns = int(&s["end_time_unix_nano"]) - int(&s["start_time_unix_nano"]);
        assert!(ns >= 200_000_000, "a span of {ns} ns: {s}");
        let want = match s["name"].as_str().unwrap() {
            "query" => Some("handle"),
            "handle" => Some("serve"),
            _ => None,
        };
        let p = parent(s);
        assert_eq!(p.map(|p| p["name"].as_str().unwrap()), want, "{s}");
        if let Some(p) = p {
            assert!(int(&p["start_time_unix_nano"]) <= int(&s["start_time_unix_nano"]));
            assert!(int(&p["end_time_unix_nano"]) >= int(&s["end_time_unix_nano"]));
        }
    }
}

#[test]
fn an_interval_posts_cumulative_figures_and_exit_posts_the_last() {
    let Some(receiver) = Receiver::start("interval", &[]) else {
        return;
    };
    // By name: resolved on a thread of its own; where `localhost` is ::1 first, the receiver (on
    // 127.0.0.1 only) is reached at the next address.
    let (out, _) = run(&[
        (
            "PERFGRAPH_OTLP",
            &format!("http://localhost:{}", receiver.port),
        ),
        ("PERFGRAPH_OTLP_INTERVAL", "0.2"),
        ("PERFGRAPH_OTLP_SLOW", "0.2"),
        ("REQUESTS", "12"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let requests = receiver.requests();
    let metrics = bodies(&requests, "/v1/metrics");
    // About 0.76 s of requests, a post every 0.2 s: at least one before the one at exit.
    assert!(metrics.len() >= 2, "{} metrics posts", metrics.len());
    let handled: Vec<u64> = metrics
        .iter()
        .map(|m| {
            by_section(m, "perfgraph.section.calls")
                .get("handle")
                .map_or(0, |p| int(&p["as_int"]))
        })
        .collect();
    assert!(handled.windows(2).all(|w| w[0] <= w[1]), "{handled:?}");
    assert_eq!(handled.last(), Some(&12));
    // 3 slow queries, their handles and `serve`, over however many posts.
    assert_eq!(spans(&requests).len(), 7);
}

#[test]
fn all_sends_every_call() {
    let Some(receiver) = Receiver::start("all", &[]) else {
        return;
    };
    let (out, _) = run(&[
        ("PERFGRAPH_OTLP", &receiver.url()),
        ("PERFGRAPH_OTLP_SPANS", "all"),
        ("TICKS", "1000"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let requests = receiver.requests();
    let spans = spans(&requests);
    let count = |name: &str| spans.iter().filter(|s| s["name"] == name).count();
    assert_eq!(
        (
            count("serve"),
            count("handle"),
            count("query"),
            count("tick")
        ),
        (1, 8, 8, 1000)
    );
    // Each `tick` is a call at depth 0: a trace of its own, no parent.
    let ticks: Vec<&Value> = spans.iter().filter(|s| s["name"] == "tick").collect();
    assert!(ticks.iter().all(|s| s.get("parent_span_id").is_none()));
    let traces: std::collections::HashSet<&str> = ticks
        .iter()
        .map(|s| s["trace_id"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), 1000);
    let thread = |s: &Value| s["attributes"][0]["value"]["string_value"].clone();
    assert_eq!(thread(ticks[0]), "ticker");
    let metrics = bodies(&requests, "/v1/metrics");
    let lost = by_section(metrics[0], "perfgraph.spans.lost");
    assert_eq!(int(&lost[""]["as_int"]), 0);
}

/// Without spans, records lost to ring overflow are no loss of the export's (its metrics come from the call
/// trees, exact): a burst far past a ring's size is not said to be lost. (The exit line used to count
/// them: `9942657 calls lost to ring overflow` for a run whose every figure was delivered.)
#[test]
fn without_spans_ring_overflow_is_no_loss() {
    let Some(receiver) = Receiver::start("no-spans", &[]) else {
        return;
    };
    let (out, _) = run(&[
        ("PERFGRAPH_OTLP", &receiver.url()),
        ("PERFGRAPH_OTLP_SPANS", "off"),
        ("TICKS", "2000000"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let requests = receiver.requests();
    let metrics = bodies(&requests, "/v1/metrics");
    let calls = by_section(metrics.last().unwrap(), "perfgraph.section.calls");
    assert_eq!(int(&calls["tick"]["as_int"]), 2_000_000);
}

/// The program without any collector: its output and status, and its time, for the comparisons below.
fn plain() -> (Output, Duration) {
    run(&[])
}

/// Only catches a wait for the collector (a request's 10 s timeout at exit, say), not scheduling noise.
const SLACK: Duration = Duration::from_secs(5);

/// The lines of perfgraph's on stderr, and the rest.
fn split_stderr(out: &Output) -> (Vec<String>, String) {
    let text = text(&out.stderr);
    let (ours, rest): (Vec<&str>, Vec<&str>) =
        text.lines().partition(|l| l.starts_with("perfgraph: "));
    (
        ours.into_iter().map(str::to_owned).collect(),
        rest.join("\n"),
    )
}

#[test]
fn a_collector_that_is_not_there_changes_nothing_but_one_line() {
    // A port nobody listens on (bound, then let go).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (ours, elapsed) = run(&[("PERFGRAPH_OTLP", &url), ("PERFGRAPH_OTLP_SLOW", "0.2")]);
    let (theirs, plain_time) = plain();
    assert!(
        elapsed < plain_time + SLACK,
        "{elapsed:?} against {plain_time:?} without"
    );
    assert_eq!(ours.status.code(), theirs.status.code());
    assert_eq!(ours.stdout, theirs.stdout);
    let (lines, rest) = split_stderr(&ours);
    assert_eq!(rest, split_stderr(&theirs).1);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("1 of 1 metrics exports and 5 of 5 spans not delivered")
            && lines[0].contains("connection refused"),
        "{}",
        lines[0]
    );
    println!("with a collector that is not there: {elapsed:?}, without: {plain_time:?}");
}

/// The median of some run times.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
fn a_name_that_does_not_resolve_costs_no_exit_time() {
    // The name is looked up at the start, on a thread of its own, and its failure remembered: the exit
    // waits for no lookup (it used to look the name up again and again for its whole second). Medians of 5
    // runs each (10 with `TESTS_FULL=1`), compared loosely (both cores may be busy): a second's wait at
    // exit is caught, noise is not.
    let url = "http://no-such-host.invalid:4318";
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..if common::full() { 10 } else { 5 } {
        let (ours, elapsed) = run(&[("PERFGRAPH_OTLP", url)]);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        let (lines, _) = split_stderr(&ours);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("1 of 1 metrics exports not delivered")
                && lines[0].contains("no-such-host.invalid"),
            "{}",
            lines[0]
        );
        with.push(elapsed);
        without.push(plain().1);
    }
    let (with, without) = (median(with), median(without));
    println!("{url}: median {with:?} a run, without OTLP {without:?}");
    assert!(
        with.saturating_sub(without) < Duration::from_millis(500),
        "a name that does not resolve: median {with:?} a run, without OTLP {without:?}"
    );
}

#[test]
fn a_collector_that_never_answers_or_answers_503_costs_one_line() {
    // Accepts (the kernel's backlog), never reads, never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let (ours, elapsed) = run(&[("PERFGRAPH_OTLP", &url)]);
    let (theirs, plain_time) = plain();
    assert!(ours.status.success());
    assert_eq!(ours.stdout, theirs.stdout);
    // The exit gives the last post a second, then goes: no hang, no 10 s timeout.
    assert!(
        elapsed < plain_time + SLACK,
        "{elapsed:?} against {plain_time:?} without"
    );
    let (lines, _) = split_stderr(&ours);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("not delivered (no answer"),
        "{}",
        lines[0]
    );
    println!("with a collector that never answers: {elapsed:?}, without: {plain_time:?}");

    let Some(receiver) = Receiver::start("unavailable", &["--status", "503"]) else {
        return;
    };
    let (ours, _) = run(&[("PERFGRAPH_OTLP", &receiver.url())]);
    assert!(ours.status.success());
    let (lines, _) = split_stderr(&ours);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("503"), "{}", lines[0]);
    // It reached the receiver (which decoded it), and was not taken.
    assert_eq!(bodies(&receiver.requests(), "/v1/metrics").len(), 1);
}
