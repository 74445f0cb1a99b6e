//! `perfgraph merge --trace`: many processes' traces (PERFGRAPH_TRACE) as one Perfetto / Chrome timeline.
//! Each input becomes a process of its own (a new pid, so two hosts' equal pids stay apart), named by rank
//! and host, and its events move by its wall-clock anchor's distance from the earliest one's. Who wrote a
//! trace (rank, host, anchor `start_unix_ns`) is in the args of its `process_name` metadata event. Chrome
//! JSON traces only: a `.pftrace` is refused with a line saying so.
//!
//! It streams: each input is read twice, one event at a time (first up to its `process_name` event, for its
//! anchor; then whole, each event written out as soon as it is read), so memory holds one event, not the
//! traces, whatever their size. The reading is perfgraph-core's (`perfgraph_core::trace`), which holds an
//! input to its size and string limits.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use perfgraph_core::trace::{TraceIdentity, read_events, read_identity};

use crate::failure::Failure;
use crate::load;

/// Who wrote the trace `path`: its `process_name` event from perfgraph (read up to it, not further).
fn read(path: &Path) -> Result<TraceIdentity, Failure> {
    read_identity(load::chrome_trace(path, "merge --trace")?)
        .map_err(|e| Failure(format!("{}: {e}", path.display())))
}

/// Merges the traces in `files` into `output` (standard output for none or `-`). A file output is written
/// under a temporary name next to it and renamed when complete ([`load::Replacing`]): a failed merge leaves
/// no half file, and the file of that name as it was.
pub fn merge(files: &[PathBuf], output: Option<&Path>) -> Result<(), Failure> {
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
    match output.filter(|p| p.as_os_str() != "-") {
        None => {
            let stdout = io::stdout().lock();
            let mut out = BufWriter::with_capacity(1 << 16, stdout);
            match write_merge(files, &inputs, zero, &mut out).and_then(|()| flush(&mut out)) {
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(Failure(e)) if e.contains("Broken pipe") => Ok(()),
                other => other,
            }
        }
        Some(path) => {
            let mut out = load::Replacing::new(path);
            write_merge(files, &inputs, zero, &mut out)?;
            out.commit()
                .map_err(|e| Failure(format!("{}: {e}", path.display())))
        }
    }
}

fn flush(out: &mut impl Write) -> Result<(), Failure> {
    out.flush().map_err(|e| Failure(format!("output: {e}")))
}

/// Writes the merged trace: each input's events, moved to its own pid and shifted by its anchor, then its
/// process's name and order.
fn write_merge(
    files: &[PathBuf],
    inputs: &[TraceIdentity],
    zero: u64,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let wrote = |e: io::Error| Failure(format!("output: {e}"));
    out.write_all(b"{\"traceEvents\":[\n").map_err(wrote)?;
    let mut first = true;
    let mut put = |out: &mut dyn Write, e: &Value| -> io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(&mut *out, e).map_err(io::Error::other)
    };
    for (n, (path, input)) in files.iter().zip(inputs).enumerate() {
        let pid = n as u64 + 1;
        let shift_us = input.start_unix_ns.saturating_sub(zero) as f64 / 1000.0;
        let mut failed_write: Option<io::Error> = None;
        read_events(load::chrome_trace(path, "merge --trace")?, |mut e| {
            // The process's own name and order are replaced by the merge's.
            let name = e.get("name").and_then(Value::as_str);
            if e.get("ph").and_then(Value::as_str) == Some("M")
                && matches!(name, Some("process_name" | "process_sort_index"))
            {
                return Ok(true);
            }
            if let Some(obj) = e.as_object_mut() {
                obj.insert("pid".into(), json!(pid));
                if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
                    let shifted = ((ts + shift_us) * 1000.0).round() / 1000.0;
                    obj.insert("ts".into(), json!(shifted));
                }
            }
            match put(out, &e) {
                Ok(()) => Ok(true),
                Err(err) => {
                    failed_write = Some(err);
                    Ok(false)
                }
            }
        })
        .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
        if let Some(e) = failed_write {
            return Err(wrote(e));
        }
        let label = match input.host.as_str() {
            "" => format!("rank {} ({})", input.rank, input.program),
            host => format!("rank {} on {host} ({})", input.rank, input.program),
        };
        put(
            out,
            &json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
            "args": {"name": label}}),
        )
        .map_err(wrote)?;
        put(
            out,
            &json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
            "args": {"sort_index": input.rank}}),
        )
        .map_err(wrote)?;
    }
    out.write_all(b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":")
        .map_err(wrote)?;
    serde_json::to_writer(
        &mut *out,
        &json!({"tool": "perfgraph", "merged_traces": files.len(), "start_unix_ns": zero}),
    )
    .map_err(|e| wrote(io::Error::other(e)))?;
    out.write_all(b"\n}\n").map_err(wrote)
}
