//! Chrome Trace Event JSON (`PERFGRAPH_TRACE` with any name but `.pftrace` / `.perfetto-trace`), which
//! Perfetto UI (ui.perfetto.dev) and chrome://tracing open, written as a stream while the program runs.
//!
//! The file is the trace format's *JSON array* form: `[`, then one event per line each followed by a
//! comma, then at the end a closing `]`. Viewers accept the array without its `]` (the format allows it for
//! exactly this, a trace cut short), so a file cut off by a kill is readable up to its last whole line.
//! Events: one complete event (`"ph":"X"`) per section call on its thread's track, with the section's level
//! (and its live message, when it has one; its CPU figures, `cpu_ns`, `self_cpu_ns` and the rest, when it
//! measured them)
//! in `args`; process and thread names as metadata events, the
//! process's identity (rank, host, wall-clock anchor `start_unix_ns`, which `perfgraph merge --trace` reads)
//! in the `process_name` event's args; timed futures' lives as async slices (`b`/`e` with the future's id,
//! category `async`) and `tracing` events as thread-scoped instant events (`i`) with their message; the
//! sampled resident memory as a counter track, and each thread's CPU usage (percent of one core since the
//! previous sample) as a counter track `CPU <thread> (tid <tid>)`; an instant
//! event on the process where live print printed a line; with `PERFGRAPH_REPORT=critical`, the run's
//! critical path as complete events (`cat: critical`, args `thread`) on a `critical path` row of its own
//! (tid 2^31, shown first); and, last, the `perfgraph trace end` instant event, whose args state what is missing (records lost
//! to ring overflow per thread and in total, calls past `PERFGRAPH_TRACE_LIMIT`). A file without that last
//! event was cut short.
//!
//! Calls are written in the order they ended (children before their parent); viewers sort by time. Names
//! are escaped by serde_json once per section; the per-call text only copies bytes and prints integers.
//! One function per kind of event; each appends to the caller's buffer.

use serde_json::json;

use super::trace::{
    Call, Encoder, Identity, Interval, LockFlow, LockSlice, Mark, MarkKind, PathPiece, SectionText,
    Summary, arg_key, push_json_arg, push_u64,
};
use crate::base::registry::SectionId;
use crate::data::args::ArgValue;
use crate::data::figures::CpuFigures;

/// The per-section text of the call events, built once per section.
#[derive(Debug, Default)]
pub(crate) struct Chrome {
    /// Process id.
    pid: u32,
    /// By thread index: `,"pid":…,"tid":…`.
    ids: Vec<Box<[u8]>>,
    /// By section id: `{"name":"…","ph":"X","ts":` and `,"args":{"level":…}},` with the pid and tid
    /// left out (they go between).
    sections: Vec<Option<Framing>>,
    /// Whether the `critical path` row was named.
    path_named: bool,
}

/// A section's call text before its `ts` and after its `tid`.
type Framing = (Box<[u8]>, Box<[u8]>, &'static [&'static str]);

/// The smallest padding of the page rule (`export::pages`): a newline.
pub(crate) const MIN_PAD: usize = 1;

/// Exactly `n` (>= 1) bytes of padding: spaces and a newline, which JSON allows between two events (each
/// line of the file is then a whole event or blank).
pub(crate) fn pad(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n - 1, b' ');
    out.push(b'\n');
}

/// Nanoseconds as microseconds with all nanosecond digits (`12.345`), a plain JSON number.
fn push_micros(out: &mut Vec<u8>, ns: u64) {
    push_u64(out, ns / 1000);
    let frac = ns % 1000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// The thread id of the `critical path` row: above every thread's (`tid` of an index below 2^31).
const PATH_TID: u64 = 1 << 31;

/// The trace's thread id of thread `index`: tid 0 is the process's own row in some viewers.
fn tid(index: u32) -> u64 {
    index as u64 + 1
}

impl Chrome {
    /// The start of the file: the array's `[` and the process's name, its args carrying who wrote the
    /// trace (`tool`, `rank`, `host`, `start_unix_ns`: what `perfgraph merge --trace` reads).
    pub(crate) fn header(out: &mut Vec<u8>, who: &Identity) -> Chrome {
        let pid = who.pid;
        out.extend_from_slice(b"[\n");
        line(
            out,
            &json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"name": who.program, "tool": "perfgraph", "rank": who.rank,
                             "host": who.host, "start_unix_ns": who.start_unix_ns}}),
        );
        line(
            out,
            &json!({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"sort_index": 0}}),
        );
        Chrome {
            pid,
            ids: Vec::new(),
            sections: Vec::new(),
            path_named: false,
        }
    }

    /// A sample of the process counter track `name`, in MB.
    fn megabytes(&mut self, out: &mut Vec<u8>, name: &str, ts_ns: u64, bytes: u64) {
        self.counter_start(out, &format!("\"{name}\""), "", ts_ns, None);
        out.extend_from_slice(b"\"MB\":");
        push_u64(out, bytes / 1_000_000);
        out.extend_from_slice(format!(".{:06}", bytes % 1_000_000).as_bytes());
        out.extend_from_slice(b"}},\n");
    }

    /// A complete event (`"ph":"X"`) named `name`, of category `cat`, over `(start_ns, end_ns)` on the row
    /// `tid`, with its `args`.
    fn complete(
        &self,
        out: &mut Vec<u8>,
        name: &str,
        cat: &str,
        (start_ns, end_ns): (u64, u64),
        tid: u64,
        args: &serde_json::Value,
    ) {
        let mut ts = Vec::new();
        push_micros(&mut ts, start_ns);
        let mut dur = Vec::new();
        push_micros(&mut dur, end_ns.saturating_sub(start_ns));
        out.extend_from_slice(
            format!(
                "{{\"name\":{},\"cat\":\"{cat}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{tid},\"args\":{args}}},\n",
                json!(name),
                String::from_utf8_lossy(&ts),
                String::from_utf8_lossy(&dur),
                self.pid,
            )
            .as_bytes(),
        );
    }

    /// The start of a counter event (`"ph":"C"`) up to its `args` object's opening brace: `name` as
    /// written (a JSON string, quoted), `cat` as written (`,"cat":…`, or empty for none), the time, the
    /// pid, and the tid when the track is a thread's.
    fn counter_start(
        &self,
        out: &mut Vec<u8>,
        name: &str,
        cat: &str,
        ts_ns: u64,
        tid: Option<u64>,
    ) {
        out.extend_from_slice(b"{\"name\":");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(cat.as_bytes());
        out.extend_from_slice(b",\"ph\":\"C\",\"ts\":");
        push_micros(out, ts_ns);
        out.extend_from_slice(b",\"pid\":");
        push_u64(out, self.pid as u64);
        if let Some(tid) = tid {
            out.extend_from_slice(b",\"tid\":");
            push_u64(out, tid);
        }
        out.extend_from_slice(b",\"args\":{");
    }
}

/// An event as one line with its comma.
fn line(out: &mut Vec<u8>, event: &serde_json::Value) {
    out.extend_from_slice(event.to_string().as_bytes());
    out.extend_from_slice(b",\n");
}

/// Appends `,"name":value` for each arg (keys as [`arg_key`] makes them).
fn push_args<'a>(out: &mut Vec<u8>, args: impl Iterator<Item = (&'a str, &'a ArgValue)>) {
    for (name, value) in args {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(arg_key(name).as_bytes());
        out.extend_from_slice(b"\":");
        push_json_arg(out, value);
    }
}

/// The text before a call's `ts` and after its `tid`.
fn section_text(text: &SectionText) -> Framing {
    let prefix = format!("{{\"name\":{},\"ph\":\"X\",\"ts\":", json!(text.name));
    let mut args = serde_json::Map::new();
    args.insert("level".into(), json!(text.level));
    if let Some(message) = &text.message {
        args.insert("message".into(), json!(message));
    }
    let suffix = format!(",\"args\":{}}},\n", serde_json::Value::Object(args));
    (
        prefix.into_bytes().into(),
        suffix.into_bytes().into(),
        text.args,
    )
}

impl Encoder for Chrome {
    /// A thread's name and place, before its first call.
    fn thread(&mut self, out: &mut Vec<u8>, index: u32, name: &str) {
        let pid = self.pid;
        let i = index as usize;
        if self.ids.len() <= i {
            self.ids.resize_with(i + 1, Default::default);
        }
        self.ids[i] = format!(",\"pid\":{pid},\"tid\":{}", tid(index))
            .into_bytes()
            .into();
        line(
            out,
            &json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid(index),
                    "args": {"name": name}}),
        );
        line(
            out,
            &json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid(index),
                    "args": {"sort_index": index}}),
        );
    }
    /// One section call, on a thread named before ([`Encoder::thread`]). `text` describes its section
    /// (asked once per section).
    fn call(&mut self, out: &mut Vec<u8>, call: &Call, text: &dyn Fn(SectionId) -> SectionText) {
        let i = call.section as usize;
        if self.sections.len() <= i {
            self.sections.resize_with(i + 1, || None);
        }
        let (prefix, suffix, names) =
            self.sections[i].get_or_insert_with(|| section_text(&text(call.section)));
        let names: &'static [&'static str] = names;
        out.extend_from_slice(prefix);
        push_micros(out, call.start_ns);
        out.extend_from_slice(b",\"dur\":");
        push_micros(out, call.end_ns.saturating_sub(call.start_ns));
        match self.ids.get(call.thread as usize) {
            Some(ids) if !ids.is_empty() => out.extend_from_slice(ids),
            _ => {
                out.extend_from_slice(b",\"pid\":");
                push_u64(out, self.pid as u64);
                out.extend_from_slice(b",\"tid\":");
                push_u64(out, tid(call.thread));
            }
        }
        if !call.unfinished && call.cpu.is_none() && call.args.is_empty() {
            out.extend_from_slice(suffix);
            return;
        }
        // The suffix without its closing `}},\n`, then the call's own args.
        out.extend_from_slice(&suffix[..suffix.len() - 4]);
        for (name, value) in call.cpu.iter().flat_map(CpuFigures::written) {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
            push_u64(out, value);
        }
        if call.unfinished {
            out.extend_from_slice(b",\"unfinished\":true");
        }
        push_args(out, names.iter().copied().zip(call.args));
        out.extend_from_slice(b"}},\n");
    }
    /// A resident-memory sample on the process's counter track.
    fn memory(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        self.megabytes(out, "Resident memory", ts_ns, bytes);
    }
    /// The process's net heap (the counting allocator's) on its `Heap` counter track.
    fn heap(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        self.megabytes(out, "Heap", ts_ns, bytes);
    }
    /// A future's life (an async slice: `b` and `e` sharing its id, category `async`, on the thread that
    /// ended it; Perfetto groups them by name and id) or an instant event (`i`, thread scope) with its
    /// message and the span it came in.
    fn mark(&mut self, out: &mut Vec<u8>, mark: &Mark, name: &str) {
        let pid = self.pid;
        let tid = tid(mark.thread);
        let name = json!(name).to_string();
        let mut start = Vec::new();
        push_micros(&mut start, mark.start_ns);
        let start = String::from_utf8_lossy(&start).into_owned();
        match &mark.kind {
            MarkKind::Life { id, cancelled } => {
                let mut end = Vec::new();
                push_micros(&mut end, mark.end_ns.max(mark.start_ns));
                let end = String::from_utf8_lossy(&end).into_owned();
                out.extend_from_slice(
                    format!(
                        "{{\"name\":{name},\"cat\":\"async\",\"ph\":\"b\",\"id\":\"{id:#x}\",\"ts\":{start},\"pid\":{pid},\"tid\":{tid}"
                    )
                    .as_bytes(),
                );
                if !mark.args.is_empty() {
                    out.extend_from_slice(b",\"args\":{\"id\":");
                    push_u64(out, *id);
                    push_args(out, mark.args.iter().map(|(n, v)| (*n, v)));
                    out.extend_from_slice(b"}");
                }
                out.extend_from_slice(
                    format!(
                        "}},\n{{\"name\":{name},\"cat\":\"async\",\"ph\":\"e\",\"id\":\"{id:#x}\",\"ts\":{end},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"cancelled\":{cancelled}}}}},\n"
                    )
                    .as_bytes(),
                );
            }
            MarkKind::Event => {
                out.extend_from_slice(
                    format!(
                        "{{\"name\":{name},\"cat\":\"event\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{start},\"pid\":{pid},\"tid\":{tid},\"args\":{{"
                    )
                    .as_bytes(),
                );
                let len = out.len();
                push_args(out, mark.args.iter().map(|(n, v)| (*n, v)));
                if out.len() > len {
                    // No comma before the first arg.
                    out.remove(len);
                }
                out.extend_from_slice(b"}},\n");
            }
            MarkKind::Instant(message) => {
                out.extend_from_slice(
                    format!(
                        "{{\"name\":{},\"ph\":\"i\",\"s\":\"t\",\"ts\":{start},\"pid\":{pid},\"tid\":{tid},\"args\":{{\"span\":{name}}}}},\n",
                        json!(message)
                    )
                    .as_bytes(),
                );
            }
        }
    }
    /// A thread's CPU usage over the last sampling period (percent of one core), on its own counter track
    /// `CPU <thread> (tid <tid>)`.
    fn cpu(&mut self, out: &mut Vec<u8>, ts_ns: u64, thread: u32, name: &str, percent: u64) {
        let track = json!(format!("CPU {name} (tid {})", tid(thread))).to_string();
        self.counter_start(out, &track, "", ts_ns, Some(tid(thread)));
        out.extend_from_slice(b"\"%\":");
        push_u64(out, percent);
        out.extend_from_slice(b"}},\n");
    }
    /// A `counter!` value on the process counter track named as the counter, its one series named so too.
    fn counter(&mut self, out: &mut Vec<u8>, ts_ns: u64, name: &str, value: f64) {
        let name = json!(name).to_string();
        self.counter_start(out, &name, ",\"cat\":\"counter\"", ts_ns, None);
        out.extend_from_slice(name.as_bytes());
        out.push(b':');
        push_json_arg(out, &ArgValue::Float(value));
        out.extend_from_slice(b"}},\n");
    }
    fn lock_slice(&mut self, out: &mut Vec<u8>, slice: &LockSlice) {
        let mut args = serde_json::Map::new();
        if let Some(holder) = &slice.holder {
            args.insert("holder".into(), json!(holder));
        }
        let span = (slice.start_ns, slice.end_ns);
        let args = serde_json::Value::Object(args);
        self.complete(out, &slice.title(), "lock", span, tid(slice.thread), &args);
    }
    fn lock_flow(&mut self, out: &mut Vec<u8>, flow: &LockFlow) {
        // The start binds to the slice enclosing it on the releaser's thread: its hold, which ends at the
        // release, so 1 ns before; the end (`bp: e`) to the one enclosing it on the waiter's: the hold
        // that starts at the acquisition, so 1 ns after.
        let name = json!(flow.lock).to_string();
        for (ph, (thread, ns), bind) in [
            ("s", (flow.from.0, flow.from.1.saturating_sub(1)), ""),
            ("f", (flow.to.0, flow.to.1 + 1), ",\"bp\":\"e\""),
        ] {
            let mut ts = Vec::new();
            push_micros(&mut ts, ns);
            out.extend_from_slice(
                format!(
                    "{{\"name\":{name},\"cat\":\"lock\",\"ph\":\"{ph}\",\"id\":{},\"ts\":{}{bind},\"pid\":{},\"tid\":{}}},\n",
                    flow.id,
                    String::from_utf8_lossy(&ts),
                    self.pid,
                    tid(thread)
                )
                .as_bytes(),
            );
        }
    }
    fn interval(&mut self, out: &mut Vec<u8>, interval: &Interval, name: &str) {
        let t = tid(interval.thread);
        for (what, value) in [
            ("Sections/s", interval.per_second),
            ("In sections %", interval.busy_percent),
        ] {
            self.counter(
                out,
                interval.ts_ns,
                &format!("{what} {name} (tid {t})"),
                value,
            );
        }
    }
    fn path_piece(&mut self, out: &mut Vec<u8>, piece: &PathPiece) {
        // A row of its own, named once and shown first; `cat: critical` on all of it, which the trace's
        // readers (`perfgraph report --critical-path`) pass over.
        if !self.path_named {
            self.path_named = true;
            for (name, args) in [
                ("thread_name", json!({ "name": "critical path" })),
                ("thread_sort_index", json!({ "sort_index": -1 })),
            ] {
                line(
                    out,
                    &json!({"name": name, "cat": "critical", "ph": "M", "pid": self.pid,
                        "tid": PATH_TID, "args": args}),
                );
            }
        }
        let span = (piece.start_ns, piece.end_ns);
        let args = json!({ "thread": piece.thread });
        self.complete(out, &piece.title, "critical", span, PATH_TID, &args);
    }
    /// Live print printed `text` (one line) at `ts_ns`: a process-wide instant event.
    fn marker(&mut self, out: &mut Vec<u8>, ts_ns: u64, text: &str) {
        out.extend_from_slice(b"{\"name\":");
        out.extend_from_slice(json!(text).to_string().as_bytes());
        out.extend_from_slice(b",\"cat\":\"live print\",\"ph\":\"i\",\"s\":\"p\",\"ts\":");
        push_micros(out, ts_ns);
        out.extend_from_slice(b",\"pid\":");
        push_u64(out, self.pid as u64);
        out.extend_from_slice(b",\"tid\":0},\n");
    }
    /// The end of a complete trace: the `perfgraph trace end` event with what is missing, and the `]`.
    fn footer(&mut self, out: &mut Vec<u8>, summary: &Summary) {
        let losses = &summary.losses;
        let per_thread: Vec<serde_json::Value> = losses
            .ring_overflow
            .iter()
            .map(|(name, n)| json!({"thread": name, "dropped": n}))
            .collect();
        let sentence = losses.sentence();
        let event = json!({
            "name": "perfgraph trace end",
            "ph": "i",
            "s": "g",
            "ts": summary.end_ns as f64 / 1000.0,
            "pid": self.pid,
            "tid": 0,
            "args": {
                "complete": true,
                "clock": summary.clock,
                "events": summary.calls,
                "unfinished": summary.unfinished,
                "trace_limit_bytes": losses.limit,
                "dropped_past_trace_limit": losses.past_limit,
                "dropped_unwritten": losses.unwritten,
                "dropped_ring_overflow": losses.ring_overflow_total(),
                "dropped_ring_overflow_per_thread": per_thread,
                "threads_without_ring": losses.unmapped_ring_threads,
                "missing": if sentence.is_empty() { None } else { Some(format!("perfgraph: {sentence}")) },
            },
        });
        out.extend_from_slice(event.to_string().as_bytes());
        out.extend_from_slice(b"\n]\n");
    }
    fn padding(&self) -> (usize, fn(&mut Vec<u8>, usize)) {
        (MIN_PAD, pad)
    }
    fn packs(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests;
