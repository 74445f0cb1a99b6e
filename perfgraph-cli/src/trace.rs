//! `perfgraph merge --trace`: many processes' traces (PERFGRAPH_TRACE) as one Perfetto / Chrome timeline.
//! Each input becomes a process of its own (a new pid, so two hosts' equal pids stay apart), named by rank
//! and host, and its events move by its wall-clock anchor's distance from the earliest one's. Who wrote a
//! trace (rank, host, anchor `start_unix_ns`) is in the args of its `process_name` metadata event. Chrome
//! JSON traces only: a `.pftrace` is refused with a line saying so.

use std::path::Path;

use serde_json::{Value, json};

use crate::{Failure, load};

/// One input trace, read.
struct Input {
    events: Vec<Value>,
    rank: u64,
    host: String,
    program: String,
    start_unix_ns: u64,
}

/// Whether `path` names a Perfetto protobuf trace (as `PERFGRAPH_TRACE` chooses the format).
fn is_perfetto(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| n.ends_with(".pftrace") || n.ends_with(".perfetto-trace"))
}

/// The events of a Chrome trace: the JSON array form perfgraph streams (`[`, events, `]`; a file cut
/// short, without its `]`, is read up to its last whole event, as viewers read it), or the object form
/// (`{"traceEvents": [...]}`).
fn events(text: &str) -> Result<Vec<Value>, String> {
    let text = text.trim_end();
    let parsed = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) if text.starts_with('[') => {
            // Cut short: up to the last whole line, its comma dropped, the bracket added.
            let whole = text.rfind("},\n").map_or("[", |i| &text[..i + 1]);
            serde_json::from_str(&format!("{whole}]"))
                .map_err(|_| format!("not JSON, or cut short ({e})"))?
        }
        Err(e) => return Err(format!("not JSON, or cut short ({e})")),
    };
    match parsed {
        Value::Array(events) => Ok(events),
        Value::Object(mut doc) => match doc.remove("traceEvents") {
            Some(Value::Array(events)) => Ok(events),
            _ => Err("not a trace (no \"traceEvents\" array)".to_owned()),
        },
        _ => Err("not a trace (no \"traceEvents\" array)".to_owned()),
    }
}

fn read(path: &Path) -> Result<Input, Failure> {
    let fail = |what: &str| Failure(format!("{}: {what}", path.display()));
    if is_perfetto(path) {
        return Err(fail(
            "a Perfetto protobuf trace: merge --trace reads Chrome JSON traces only \
             (PERFGRAPH_TRACE with a name not ending in .pftrace)",
        ));
    }
    let events = events(&load::text(path)?).map_err(|e| fail(&e))?;
    // Who wrote it: the `process_name` metadata event's args.
    let who = events
        .iter()
        .find(|e| {
            e.get("ph").and_then(Value::as_str) == Some("M")
                && e.get("name").and_then(Value::as_str) == Some("process_name")
                && e.pointer("/args/tool").and_then(Value::as_str) == Some("perfgraph")
        })
        .and_then(|e| e.get("args"))
        .ok_or_else(|| fail("not a perfgraph trace (no \"process_name\" event from perfgraph)"))?;
    let field = |k: &str| who.get(k);
    let start_unix_ns = field("start_unix_ns")
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            fail("no wall-clock anchor (\"start_unix_ns\"): written by an older perfgraph")
        })?;
    Ok(Input {
        rank: field("rank").and_then(Value::as_u64).unwrap_or(0),
        host: field("host")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        program: field("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        start_unix_ns,
        events,
    })
}

/// Merges the traces in `files` into `output`.
pub fn merge(files: &[std::path::PathBuf], output: Option<&Path>) -> Result<(), Failure> {
    let inputs = files
        .iter()
        .map(|f| read(f))
        .collect::<Result<Vec<_>, _>>()?;
    for (f, i) in files.iter().zip(&inputs).skip(1) {
        if i.program != inputs[0].program {
            eprintln!(
                "perfgraph: warning: {} is a trace of `{}`, {} of `{}`; merging anyway",
                f.display(),
                i.program,
                files[0].display(),
                inputs[0].program
            );
        }
    }
    let zero = inputs.iter().map(|i| i.start_unix_ns).min().unwrap_or(0);
    let mut events: Vec<Value> = Vec::new();
    for (n, input) in inputs.into_iter().enumerate() {
        let pid = n as u64 + 1;
        let shift_us = (input.start_unix_ns - zero) as f64 / 1000.0;
        for mut e in input.events {
            // The process's own name and order are replaced by the merge's.
            let name = e.get("name").and_then(Value::as_str);
            if e.get("ph").and_then(Value::as_str) == Some("M")
                && matches!(name, Some("process_name" | "process_sort_index"))
            {
                continue;
            }
            if let Some(obj) = e.as_object_mut() {
                obj.insert("pid".into(), json!(pid));
                if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
                    let shifted = ((ts + shift_us) * 1000.0).round() / 1000.0;
                    obj.insert("ts".into(), json!(shifted));
                }
            }
            events.push(e);
        }
        let label = match input.host.as_str() {
            "" => format!("rank {} ({})", input.rank, input.program),
            host => format!("rank {} on {host} ({})", input.rank, input.program),
        };
        events.push(
            json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": {"name": label}}),
        );
        events.push(
            json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
            "args": {"sort_index": input.rank}}),
        );
    }
    let mut text = String::from("{\"traceEvents\":[\n");
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            text.push_str(",\n");
        }
        text.push_str(&e.to_string());
    }
    text.push_str("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    text.push_str(
        &json!({"tool": "perfgraph", "merged_traces": files.len(), "start_unix_ns": zero})
            .to_string(),
    );
    text.push_str("\n}\n");
    load::write(output, text.as_bytes())
}
