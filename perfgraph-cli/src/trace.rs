//! `perfgraph merge --trace`: many processes' traces (PERFGRAPH_TRACE) as one Perfetto / Chrome timeline.
//! Each input becomes a process of its own (a new pid, so two hosts' equal pids stay apart), named by rank
//! and host, and its events move by its wall-clock anchor's distance from the earliest one's. Who wrote a
//! trace (rank, host, anchor `start_unix_ns`) is in the args of its `process_name` metadata event. Chrome
//! JSON traces only: a `.pftrace` is refused with a line saying so.
//!
//! It streams: each input is read twice, one event at a time (first up to its `process_name` event, for its
//! anchor; then whole, each event written out as soon as it is read), so memory holds one event, not the
//! traces, whatever their size. An input is held to [`MAX_TRACE_BYTES`] and [`MAX_STRING_BYTES`] a string.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Value, json};

use perfgraph_core::config::TraceFormat;

use crate::Failure;

/// Largest trace `merge --trace` reads, bytes: 64 GiB.
pub const MAX_TRACE_BYTES: u64 = 64 << 30;
/// Longest string in a trace, bytes as written: 1 MiB (a name, a live message, an argument).
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// Who wrote one input trace.
struct Input {
    rank: u64,
    host: String,
    program: String,
    start_unix_ns: u64,
}

/// Whether `path` names a Perfetto protobuf trace (as `PERFGRAPH_TRACE` chooses the format: the core's
/// rule).
fn is_perfetto(path: &Path) -> bool {
    TraceFormat::of_path(path) == TraceFormat::Perfetto
}

/// The input, held to [`MAX_TRACE_BYTES`] in all and [`MAX_STRING_BYTES`] per string (serde_json holds a
/// string whole before it hands it over).
struct Guard<R> {
    inner: R,
    read: u64,
    in_string: bool,
    escaped: bool,
    token: usize,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > MAX_TRACE_BYTES {
            return Err(io::Error::other(format!(
                "limit: larger than {MAX_TRACE_BYTES} bytes"
            )));
        }
        for &b in &buf[..n] {
            if self.in_string {
                self.token += 1;
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                if self.token > MAX_STRING_BYTES {
                    return Err(io::Error::other(format!(
                        "limit: a string longer than {MAX_STRING_BYTES} bytes"
                    )));
                }
            } else if b == b'"' {
                self.in_string = true;
                self.token = 1;
            }
        }
        Ok(n)
    }
}

/// What to do with each event read; `Ok(false)` stops the walk there.
type OnEvent<'a> = &'a mut dyn FnMut(Value) -> Result<bool, String>;

/// Marks the error that stops a walk on purpose.
const STOPPED: &str = "\u{0}stopped";

/// Walks the events of a Chrome trace read from `reader`, one at a time: the JSON array form perfgraph
/// streams (`[`, events, `]`; a file cut short, without its `]`, is read up to its last whole event, as
/// viewers read it), or the object form (`{"traceEvents": [...]}`). `Ok(())` also when `each` stopped it.
fn walk(reader: impl Read, each: OnEvent<'_>) -> Result<(), String> {
    let guard = Guard {
        inner: reader,
        read: 0,
        in_string: false,
        escaped: false,
        token: 0,
    };
    let mut de = serde_json::Deserializer::from_reader(guard);
    let mut array_form = false;
    let walked = de
        .deserialize_any(Top {
            each,
            array_form: &mut array_form,
        })
        .and_then(|()| de.end());
    match walked {
        Ok(()) => Ok(()),
        Err(e) if e.to_string().starts_with(STOPPED) => Ok(()),
        // Cut short (a killed process): what was whole is read.
        Err(e) if array_form && e.classify() == serde_json::error::Category::Eof => Ok(()),
        Err(e) => match e.classify() {
            serde_json::error::Category::Data | serde_json::error::Category::Io => {
                let text = e.to_string();
                Err(match text.rsplit_once(" at line ") {
                    Some((head, _))
                        if head.starts_with("not a trace") || head.starts_with("limit") =>
                    {
                        head.to_owned()
                    }
                    _ => text,
                })
            }
            _ => Err(format!("not JSON, or cut short ({e})")),
        },
    }
}

/// The document: an array of events, or an object with one (`traceEvents`).
struct Top<'a, 'b> {
    each: OnEvent<'b>,
    array_form: &'a mut bool,
}

const NOT_A_TRACE: &str = "not a trace (no \"traceEvents\" array)";

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        *self.array_form = true;
        events(seq, self.each)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(Events {
                    each: &mut *self.each,
                })?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if found {
            Ok(())
        } else {
            Err(de::Error::custom(NOT_A_TRACE))
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom(NOT_A_TRACE))
    }
}

/// The `traceEvents` array.
struct Events<'a> {
    each: OnEvent<'a>,
}

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the \"traceEvents\" array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        events(seq, self.each)
    }
}

fn events<'de, A: SeqAccess<'de>>(mut seq: A, each: OnEvent<'_>) -> Result<(), A::Error> {
    while let Some(event) = seq.next_element::<Value>()? {
        if !each(event).map_err(de::Error::custom)? {
            return Err(de::Error::custom(STOPPED));
        }
    }
    Ok(())
}

fn open(path: &Path) -> Result<BufReader<File>, Failure> {
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| {
            Failure(format!(
                "{}: {}",
                path.display(),
                match e.kind() {
                    io::ErrorKind::NotFound => "no such file".to_owned(),
                    _ => e.to_string(),
                }
            ))
        })
}

/// Who wrote the trace `path`: its `process_name` event from perfgraph (read up to it, not further).
fn read(path: &Path) -> Result<Input, Failure> {
    let fail = |what: &str| Failure(format!("{}: {what}", path.display()));
    if is_perfetto(path) {
        return Err(fail(
            "a Perfetto protobuf trace: merge --trace reads Chrome JSON traces only \
             (PERFGRAPH_TRACE with a name not ending in .pftrace)",
        ));
    }
    let mut who: Option<Value> = None;
    walk(open(path)?, &mut |e| {
        let found = e.get("ph").and_then(Value::as_str) == Some("M")
            && e.get("name").and_then(Value::as_str) == Some("process_name")
            && e.pointer("/args/tool").and_then(Value::as_str) == Some("perfgraph");
        if found {
            who = e.get("args").cloned();
        }
        Ok(!found)
    })
    .map_err(|e| fail(&e))?;
    let who = who
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
    })
}

/// Merges the traces in `files` into `output` (standard output for none or `-`). A file output is written
/// under a temporary name next to it and renamed when complete: a failed merge leaves no half file.
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
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let temp = dir.join(format!(".{name}.perfgraph-merge-{}", std::process::id()));
            let written = File::create(&temp)
                .map_err(|e| Failure(format!("{}: {e}", temp.display())))
                .and_then(|f| {
                    let mut out = BufWriter::with_capacity(1 << 16, f);
                    write_merge(files, &inputs, zero, &mut out)?;
                    flush(&mut out)?;
                    std::fs::rename(&temp, path)
                        .map_err(|e| Failure(format!("{}: {e}", path.display())))
                });
            if written.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            written
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
    inputs: &[Input],
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
        walk(open(path)?, &mut |mut e| {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small perfgraph-like Chrome trace.
    fn trace() -> String {
        let mut t = String::from(
            "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"p\",\
             \"tool\":\"perfgraph\",\"rank\":1,\"host\":\"h\",\"start_unix_ns\":1000}},\n",
        );
        for i in 0..40 {
            t.push_str(&format!(
                "{{\"name\":\"s{}\",\"ph\":\"X\",\"pid\":7,\"tid\":1,\"ts\":{i}.5,\"dur\":1.25}},\n",
                i % 3
            ));
        }
        t.push_str(
            "{\"name\":\"perfgraph trace end\",\"ph\":\"i\",\"pid\":7,\"tid\":0,\"ts\":99}\n]\n",
        );
        t
    }

    #[test]
    fn a_cut_trace_reads_up_to_its_last_whole_event() {
        let t = trace();
        let cut = &t[..t.len() / 2];
        let mut n = 0;
        walk(cut.as_bytes(), &mut |_| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        assert!(n > 5 && n < 42, "{n}");
        let mut all = 0;
        walk(t.as_bytes(), &mut |_| {
            all += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(all, 42);
    }

    /// The trace reader on mutated traces (bytes flipped, cut, repeated, dropped): an error or events,
    /// never a panic. A fixed sequence, so a failure is reproducible from its iteration number.
    #[test]
    fn mutated_traces_never_panic() {
        let base = trace().into_bytes();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1) as u64) as usize
        };
        for i in 0..3000 {
            let mut b = base.clone();
            for _ in 0..1 + next(3) {
                if b.is_empty() {
                    break;
                }
                let at = next(b.len());
                match next(4) {
                    0 => b[at] = next(256) as u8,
                    1 => b.truncate(at),
                    2 => {
                        let end = (at + next(32)).min(b.len());
                        let piece = b[at..end].to_vec();
                        b.splice(at..at, piece);
                    }
                    _ => {
                        let end = (at + next(16)).min(b.len());
                        b.drain(at..end);
                    }
                }
            }
            let r = std::panic::catch_unwind(|| {
                let mut n = 0usize;
                let _ = walk(&b[..], &mut |_| {
                    n += 1;
                    Ok(true)
                });
            });
            assert!(r.is_ok(), "iteration {i} panicked");
        }
    }
}
