//! Chrome Trace Event JSON (`PERFGRAPH_TRACE`), which Perfetto UI (ui.perfetto.dev) and chrome://tracing
//! open: one complete event (`"ph":"X"`) per section call on its thread's track, nested by time; thread and
//! process names as metadata events; the sampled resident memory as a counter track; and what is missing
//! (records lost to ring overflow, calls past `PERFGRAPH_TRACE_LIMIT`) both in `otherData` and as a global
//! instant event at the end of the timeline, so it is seen in the UI too.
//!
//! The events are collected by the background thread from the records it drains anyway, never on the
//! recording threads. The buffer keeps the first [`TraceBuffer::limit`] calls in the order they ended and
//! counts the rest. Calls end children first, so a kept call's children are kept too (unless the ring lost
//! them); a child may outlive its parent's place in the buffer, and then shows without that parent.
//!
//! Section names are escaped by serde_json (once per section); numbers are written directly. One event per
//! line, so the file is also easy to grep.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::json;

use crate::base::process;
use crate::base::registry::SectionId;

/// One section call, in clock ticks. 24 bytes, so a million events cost 24 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
    /// Start, ticks.
    pub start: u64,
    /// End, ticks.
    pub end: u64,
    /// The section.
    pub section: SectionId,
    /// Thread index.
    pub thread: u32,
}

/// What a mark shows in the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MarkKind {
    /// A timed future's whole life, as an async slice (`b`/`e` with its id); `cancelled` if it was dropped
    /// before completing.
    Life {
        /// Its id.
        id: u64,
        /// Dropped before it completed.
        cancelled: bool,
    },
    /// An instant event (`i`) with its message.
    Instant(String),
}

/// A mark: a future's life or an instant event, on the thread that ended or raised it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mark {
    /// What it is.
    pub kind: MarkKind,
    /// Start, ticks (the instant's time).
    pub start: u64,
    /// End, ticks.
    pub end: u64,
    /// The section (of the future, or the span the event came in).
    pub section: SectionId,
    /// Thread index.
    pub thread: u32,
}

/// The events and memory samples gathered for the trace, bounded.
///
/// Invariant: `events.len() <= limit` and `samples.len() <= limit`; everything offered past that is counted
/// in `over_limit` (calls) and `samples_over_limit` (memory samples), never stored.
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    /// Most calls kept (`PERFGRAPH_TRACE_LIMIT`); memory samples are capped at the same number.
    pub limit: usize,
    /// Completed calls, in the order the background thread drained them.
    pub events: Vec<Event>,
    /// Futures' lives and instant events, in the order drained (bounded by `limit` too, counted in
    /// `over_limit` past it).
    pub marks: Vec<Mark>,
    /// Calls not kept because the buffer was full.
    pub over_limit: u64,
    /// Resident-memory samples `(ticks, bytes)`, only those that differ from the previous one.
    pub samples: Vec<(u64, u64)>,
    /// Memory samples not kept because the buffer was full.
    pub samples_over_limit: u64,
    /// The latest sample `(ticks, bytes)`, kept or not: the counter's value at the end of the trace.
    pub last_sample: Option<(u64, u64)>,
}

impl TraceBuffer {
    /// An empty buffer holding at most `limit` calls and `limit` memory samples.
    pub(crate) fn new(limit: usize) -> TraceBuffer {
        TraceBuffer {
            limit,
            events: Vec::new(),
            marks: Vec::new(),
            over_limit: 0,
            samples: Vec::new(),
            samples_over_limit: 0,
            last_sample: None,
        }
    }

    /// Adds a completed call, or counts it when the buffer is full.
    pub(crate) fn push(&mut self, event: Event) {
        if self.events.len() >= self.limit {
            self.over_limit += 1;
        } else {
            self.events.push(event);
        }
    }

    /// Adds a mark, or counts it when the buffer is full.
    pub(crate) fn push_mark(&mut self, mark: Mark) {
        if self.marks.len() >= self.limit {
            self.over_limit += 1;
        } else {
            self.marks.push(mark);
        }
    }

    /// Adds a resident-memory sample if it differs from the last one kept.
    pub(crate) fn on_memory(&mut self, ticks: u64, bytes: u64) {
        self.last_sample = Some((ticks, bytes));
        if self.samples.last().is_some_and(|&(_, b)| b == bytes) {
            return;
        }
        if self.samples.len() >= self.limit {
            self.samples_over_limit += 1;
            return;
        }
        self.samples.push((ticks, bytes));
    }
}

/// Everything the trace file says besides the buffer's contents.
pub(crate) struct TraceMeta<'a> {
    /// Process id.
    pub pid: u32,
    /// The process's rank (see `base::identity`).
    pub rank: u32,
    /// The machine's host name.
    pub host: &'a str,
    /// Wall-clock time of the trace's time zero, ns since the Unix epoch: what `perfgraph merge --trace`
    /// aligns processes on.
    pub start_unix_ns: u64,
    /// The program's name (the process track's name).
    pub program: &'a str,
    /// The clock source name.
    pub clock: &'a str,
    /// Threads `(index, name)`.
    pub threads: Vec<(u32, String)>,
    /// Records lost to ring overflow per thread `(name, count)`, threads with none left out.
    pub ring_dropped: Vec<(String, u64)>,
    /// Sections still running at the end, as events ending at `end` (marked unfinished).
    pub unfinished: Vec<Event>,
    /// Time of the end of the trace, ticks (the last memory value is held until then).
    pub end: u64,
    /// Ticks to nanoseconds since the runtime's start (the trace's time zero); non-decreasing.
    pub to_ns: &'a dyn Fn(u64) -> u64,
}

/// Nanoseconds as microseconds with all nanosecond digits (`12.345`), a plain JSON number.
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The trace's thread id of thread `index`: tid 0 is the process's own row in some viewers.
fn tid(index: u32) -> u64 {
    index as u64 + 1
}

/// Writes the trace. `buffer`'s events are sorted in place (by thread, then start, outer calls first).
/// `section_name` names a section id. Reports [`process::progress`] every few thousand threads and
/// events.
pub(crate) fn write(
    out: &mut dyn Write,
    buffer: &mut TraceBuffer,
    meta: &TraceMeta,
    section_name: &dyn Fn(SectionId) -> String,
) -> io::Result<()> {
    out.write_all(b"{\"traceEvents\":[\n")?;
    write_names(out, meta)?;
    write_calls(out, buffer, meta, section_name)?;
    write_marks(out, buffer, meta, section_name)?;
    write_memory(out, buffer, meta)?;
    write_missing(out, buffer, meta)
}

/// The process's and threads' names, as metadata events.
fn write_names(out: &mut dyn Write, meta: &TraceMeta) -> io::Result<()> {
    let pid = meta.pid;
    let mut lines: Vec<String> = Vec::new();
    lines.push(
        json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
               "args": {"name": meta.program}})
        .to_string(),
    );
    for (i, (index, name)) in meta.threads.iter().enumerate() {
        process::progress_at(i);
        lines.push(
            json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid(*index),
                   "args": {"name": name}})
            .to_string(),
        );
        lines.push(
            json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid(*index),
                   "args": {"sort_index": index}})
            .to_string(),
        );
    }
    for l in &lines {
        out.write_all(l.as_bytes())?;
        out.write_all(b",\n")?;
    }
    Ok(())
}

/// One complete event per call, the sections still running among them (marked unfinished). Leaves the
/// buffer holding its own events again (sorted).
fn write_calls(
    out: &mut dyn Write,
    buffer: &mut TraceBuffer,
    meta: &TraceMeta,
    section_name: &dyn Fn(SectionId) -> String,
) -> io::Result<()> {
    let pid = meta.pid;
    // Sections still running join the others (they are few), marked by their identity.
    let kept = buffer.events.len();
    let unfinished: std::collections::HashSet<(u32, u64, SectionId)> = meta
        .unfinished
        .iter()
        .map(|e| (e.thread, e.start, e.section))
        .collect();
    buffer.events.extend_from_slice(&meta.unfinished);
    // Outer calls first at equal starts, so viewers nest them the right way round. On a full tie (a coarse
    // clock) the parent must still come first: calls are stored as they ended, children before parents, so
    // reversing and then sorting stably puts the parent first.
    buffer.events.reverse();
    buffer
        .events
        .sort_by_key(|e| (e.thread, e.start, std::cmp::Reverse(e.end)));
    // Each name escaped once; the event lines then only copy bytes and print integers.
    let mut names: HashMap<SectionId, String> = HashMap::new();
    for (i, e) in buffer.events.iter().enumerate() {
        process::progress_at(i);
        names
            .entry(e.section)
            .or_insert_with(|| json!(section_name(e.section)).to_string());
    }
    for (i, e) in buffer.events.iter().enumerate() {
        process::progress_at(i);
        let (start, end) = ((meta.to_ns)(e.start), (meta.to_ns)(e.end));
        let dur = end.saturating_sub(start);
        write!(
            out,
            "{{\"name\":{},\"ph\":\"X\",\"ts\":{}.{:03},\"dur\":{}.{:03},\"pid\":{pid},\"tid\":{}",
            names[&e.section],
            start / 1000,
            start % 1000,
            dur / 1000,
            dur % 1000,
            tid(e.thread)
        )?;
        if !unfinished.is_empty() && unfinished.contains(&(e.thread, e.start, e.section)) {
            out.write_all(b",\"args\":{\"unfinished\":true}")?;
        }
        out.write_all(b"},\n")?;
    }
    // Back to the buffer's own contents (a second write gives the same file).
    if !unfinished.is_empty() {
        buffer
            .events
            .retain(|e| !unfinished.contains(&(e.thread, e.start, e.section)));
    }
    debug_assert_eq!(buffer.events.len(), kept);
    Ok(())
}

/// Futures' lives as async slices (`b` and `e` events sharing the future's `id`, category `async`, on the
/// track of the thread that first polled it... as Perfetto groups them: by name and id), and instant
/// events (`i`, thread scope) with their messages.
fn write_marks(
    out: &mut dyn Write,
    buffer: &TraceBuffer,
    meta: &TraceMeta,
    section_name: &dyn Fn(SectionId) -> String,
) -> io::Result<()> {
    let pid = meta.pid;
    for (i, m) in buffer.marks.iter().enumerate() {
        process::progress_at(i);
        let name = json!(section_name(m.section)).to_string();
        let (start, end) = (micros((meta.to_ns)(m.start)), micros((meta.to_ns)(m.end)));
        let tid = tid(m.thread);
        match &m.kind {
            MarkKind::Life { id, cancelled } => {
                writeln!(
                    out,
                    "{{\"name\":{name},\"cat\":\"async\",\"ph\":\"b\",\"id\":\"{id:#x}\",\"ts\":{start},\"pid\":{pid},\"tid\":{tid}}},"
                )?;
                writeln!(
                    out,
                    "{{\"name\":{name},\"cat\":\"async\",\"ph\":\"e\",\"id\":\"{id:#x}\",\"ts\":{end},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"cancelled\":{cancelled}}}}},"
                )?;
            }
            MarkKind::Instant(message) => {
                writeln!(
                    out,
                    "{{\"name\":{},\"ph\":\"i\",\"s\":\"t\",\"ts\":{start},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"span\":{name}}}}},",
                    json!(message)
                )?;
            }
        }
    }
    Ok(())
}

/// The resident-memory counter track, held at its latest value to the end of the trace.
fn write_memory(out: &mut dyn Write, buffer: &TraceBuffer, meta: &TraceMeta) -> io::Result<()> {
    let pid = meta.pid;
    // The latest value again at the end, so the counter track spans the whole trace.
    let last = buffer
        .last_sample
        .filter(|s| s.0 < meta.end)
        .map(|s| (meta.end, s.1));
    for (ticks, bytes) in buffer.samples.iter().chain(&last) {
        writeln!(
            out,
            "{{\"name\":\"Resident memory\",\"ph\":\"C\",\"ts\":{},\"pid\":{pid},\"args\":{{\"MB\":{}.{:06}}}}},",
            micros((meta.to_ns)(*ticks)),
            bytes / 1_000_000,
            bytes % 1_000_000
        )?;
    }
    Ok(())
}

/// What the trace lacks (an instant event, when anything is missing) and the closing `otherData`.
fn write_missing(out: &mut dyn Write, buffer: &TraceBuffer, meta: &TraceMeta) -> io::Result<()> {
    let pid = meta.pid;
    let ring_dropped: u64 = meta.ring_dropped.iter().map(|(_, n)| n).sum();
    let missing = ring_dropped + buffer.over_limit;
    if missing > 0 {
        let text = format!(
            "perfgraph: {missing} section calls are not in this trace ({ring_dropped} lost to ring \
             overflow, {} past PERFGRAPH_TRACE_LIMIT={})",
            buffer.over_limit, buffer.limit
        );
        writeln!(
            out,
            "{{\"name\":{},\"ph\":\"i\",\"s\":\"g\",\"ts\":{},\"pid\":{pid},\"tid\":0}},",
            json!(text),
            micros((meta.to_ns)(meta.end))
        )?;
    }
    // The last element carries no event of its own: it closes the list without a trailing comma.
    let per_thread: Vec<serde_json::Value> = meta
        .ring_dropped
        .iter()
        .map(|(name, n)| json!({"thread": name, "dropped": n}))
        .collect();
    let other = json!({
        "tool": "perfgraph",
        "program": meta.program,
        "pid": meta.pid,
        "rank": meta.rank,
        "host": meta.host,
        "start_unix_ns": meta.start_unix_ns,
        "clock": meta.clock,
        // The calls written, the unfinished ones with them.
        "events": buffer.events.len() + meta.unfinished.len(),
        "unfinished": meta.unfinished.len(),
        "trace_limit": buffer.limit,
        "dropped_past_trace_limit": buffer.over_limit,
        "memory_samples_past_trace_limit": buffer.samples_over_limit,
        "dropped_ring_overflow": ring_dropped,
        "dropped_ring_overflow_per_thread": per_thread,
    });
    writeln!(
        out,
        "{}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{}\n}}",
        json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": 0}}),
        other
    )?;
    Ok(())
}
