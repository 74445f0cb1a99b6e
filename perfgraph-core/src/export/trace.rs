//! What both trace formats ([`chrome`](super::chrome), [`perfetto`](super::perfetto)) are given: plain
//! data in nanoseconds since the runtime's start, one struct per kind of event, and the one interface both
//! implement, [`Encoder`]. The collector (`collector::trace`) turns drained records into these and hands
//! them to the encoder the path chose (`config::TraceFormat::of_path`); a new kind of event is one more struct here, one
//! more method of [`Encoder`], and its body in each format.

use crate::base::registry::SectionId;
use crate::data::args::ArgValue;
use crate::data::figures::CpuFigures;

/// A trace format: every kind of event written into the bytes `out` that go to the file, in the order
/// given. Implemented by [`Chrome`](super::chrome::Chrome) and [`Perfetto`](super::perfetto::Perfetto);
/// each is made by its own `header`, which writes the file's start.
pub(crate) trait Encoder: Send {
    /// Names thread `index` (before its first call or mark).
    fn thread(&mut self, out: &mut Vec<u8>, index: u32, name: &str);
    /// One section call; `text` describes its section (asked once per section).
    fn call(&mut self, out: &mut Vec<u8>, call: &Call, text: &dyn Fn(SectionId) -> SectionText);
    /// The process's resident memory at `ts_ns`.
    fn memory(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64);
    /// The process's heap (counting allocator) at `ts_ns`.
    fn heap(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64);
    /// A mark: a future's whole life, or an instant event; `name` is its section's.
    fn mark(&mut self, out: &mut Vec<u8>, mark: &Mark, name: &str);
    /// A `counter!` value: `value` of the counter `name` at `ts_ns`, on that counter's track (beside
    /// resident memory).
    fn counter(&mut self, out: &mut Vec<u8>, ts_ns: u64, name: &str, value: f64);
    /// Thread `thread`'s (named `name`) CPU use over the last period, percent of one core.
    fn cpu(&mut self, out: &mut Vec<u8>, ts_ns: u64, thread: u32, name: &str, percent: u64);
    /// A thread's interval statistics; `name` is the thread's.
    fn interval(&mut self, out: &mut Vec<u8>, interval: &Interval, name: &str);
    /// A wait for a lock, or a hold of one (`perfgraph_core::sync`), on the thread's track.
    fn lock_slice(&mut self, out: &mut Vec<u8>, slice: &LockSlice);
    /// The hand-over of a lock from the thread that released it to the one that waited for it: a flow
    /// arrow from the releaser's hold to the waiter's acquisition.
    fn lock_flow(&mut self, out: &mut Vec<u8>, flow: &LockFlow);
    /// A piece of the run's critical path (`PERFGRAPH_REPORT=critical`), on the `critical path` track of
    /// its own, in time order.
    fn path_piece(&mut self, out: &mut Vec<u8>, piece: &PathPiece);
    /// A live-print line, as a marker.
    fn marker(&mut self, out: &mut Vec<u8>, ts_ns: u64, text: &str);
    /// The file's end.
    fn footer(&mut self, out: &mut Vec<u8>, summary: &Summary);
    /// The page rule's padding in this format: its smallest length, and the function that writes `n`
    /// bytes of it.
    fn padding(&self) -> (usize, fn(&mut Vec<u8>, usize));
    /// Whether its events go through the packer (deflated bundles of packets) before the file.
    fn packs(&self) -> bool;
}

/// What a trace says about a section besides its timing, looked up once per section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SectionText {
    /// The section's name.
    pub name: String,
    /// Its verbosity level, 0..=3.
    pub level: u8,
    /// Its live-print message, when it has one of its own (not just its name).
    pub message: Option<String>,
    /// The names of the args its calls record, in order (`args(...)`).
    pub args: &'static [&'static str],
}

/// One section call on a thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Call<'a> {
    /// The thread's index (dense, from 0).
    pub thread: u32,
    /// The section.
    pub section: SectionId,
    /// Nesting depth on its thread, 0 outermost.
    pub depth: u32,
    /// Start, ns since the runtime's start.
    pub start_ns: u64,
    /// End, ns since the runtime's start (`>= start_ns`); for an unfinished call, the end of the trace.
    pub end_ns: u64,
    /// Still running when the trace ended.
    pub unfinished: bool,
    /// What it measured, for a section that measures (the `cpu` option, `PERFGRAPH_CPU=all`): in the
    /// slice's args ([`CpuFigures::written`]).
    pub cpu: Option<CpuFigures>,
    /// Its args' values, named by its section's [`SectionText::args`]: in the slice's args.
    pub args: &'a [ArgValue],
}

/// What a mark shows in the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MarkKind {
    /// A timed future's whole life, as an async slice with its id; `cancelled` if it was dropped before
    /// completing.
    Life {
        /// Its id.
        id: u64,
        /// Dropped before it completed.
        cancelled: bool,
    },
    /// An instant event with its message.
    Instant(String),
    /// An `event!`: an instant with its message (the `name` the encoder is given) and its args.
    Event,
}

/// A mark: a future's life or an instant event (a `tracing` event, an `event!`), on the thread that ended or
/// raised it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    /// What it is.
    pub kind: MarkKind,
    /// The section (of the future, or the span the event came in).
    pub section: SectionId,
    /// The thread's index.
    pub thread: u32,
    /// Start, ns since the runtime's start (the instant's time).
    pub start_ns: u64,
    /// End, ns since the runtime's start (`>= start_ns`).
    pub end_ns: u64,
    /// Its args, named (a future's, an `event!`'s).
    pub args: Vec<(&'static str, ArgValue)>,
}

/// A thread's statistics at the end of an interval (`PERFGRAPH_INTERVAL`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    /// The interval's end, ns since the runtime's start.
    pub ts_ns: u64,
    /// The thread's index.
    pub thread: u32,
    /// Its top-level sections' calls per second.
    pub per_second: f64,
    /// The share of the interval spent in them, percent.
    pub busy_percent: f64,
}

/// The key an arg named `name` has among a slice's args: its name, or `arg.<name>` for a name perfgraph
/// writes there itself (`level`, `message`, `unfinished`, a CPU figure, ...), so no key is written twice.
pub(crate) fn arg_key(name: &str) -> std::borrow::Cow<'_, str> {
    const OWN: &[&str] = &["level", "message", "unfinished", "span", "id", "cancelled"];
    if OWN.contains(&name) || CpuFigures::NAMES.contains(&name) {
        format!("arg.{name}").into()
    } else {
        name.into()
    }
}

/// Appends `value` as JSON (a float that is not finite as a string: JSON has no NaN).
pub(crate) fn push_json_arg(out: &mut Vec<u8>, value: &ArgValue) {
    match value {
        ArgValue::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
        ArgValue::Uint(v) => push_u64(out, *v),
        ArgValue::Float(v) if v.is_finite() => {
            out.extend_from_slice(serde_json::Value::from(*v).to_string().as_bytes())
        }
        ArgValue::Float(v) => out.extend_from_slice(format!("\"{v}\"").as_bytes()),
        ArgValue::Bool(v) => out.extend_from_slice(if *v { b"true" } else { b"false" }),
        ArgValue::Text(t) => {
            out.extend_from_slice(serde_json::Value::from(t.as_str()).to_string().as_bytes())
        }
    }
}

/// A wait for a lock or a hold of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockSlice {
    /// The thread's index.
    pub thread: u32,
    /// The lock's name, and its id (dense, from 1).
    pub lock: (String, u32),
    /// A wait (`wait: <name>`), else a hold (`hold: <name>`).
    pub wait: bool,
    /// Start, ns since the runtime's start.
    pub start_ns: u64,
    /// End, ns since the runtime's start (`>= start_ns`).
    pub end_ns: u64,
    /// For a wait: the name of the thread that held the lock when it began, if known.
    pub holder: Option<String>,
}

impl LockSlice {
    /// `wait: <name>` or `hold: <name>`.
    pub(crate) fn title(&self) -> String {
        format!(
            "{}: {}",
            if self.wait { "wait" } else { "hold" },
            self.lock.0
        )
    }
}

/// A lock handed over: released by one thread, acquired by another that waited for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LockFlow {
    /// The lock's name.
    pub lock: String,
    /// A number no other flow of the trace has.
    pub id: u64,
    /// The releasing thread's index, and the release, ns.
    pub from: (u32, u64),
    /// The acquiring thread's index, and the acquisition, ns (`>= from.1`).
    pub to: (u32, u64),
}

/// A piece of the critical path: what the thread on the path did, from when to when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathPiece {
    /// Start, ns since the runtime's start.
    pub start_ns: u64,
    /// End, ns since the runtime's start (`> start_ns`).
    pub end_ns: u64,
    /// What it was: the section it ran in, `wake-up: <lock>`, `blocked (unknown): <lock>`, ...
    pub title: String,
    /// The thread on the path then.
    pub thread: String,
}

/// Who wrote the trace: what `perfgraph merge --trace` names each process by and aligns processes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// Process id.
    pub pid: u32,
    /// The process's rank (see `base::identity`).
    pub rank: u32,
    /// The machine's host name.
    pub host: String,
    /// Wall-clock time of the trace's time zero, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// The program's name (the process track's name).
    pub program: String,
}

/// What the trace lacks and why, stated at its end (and on stderr).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Losses {
    /// Records lost to ring overflow per thread `(name, count)`, threads with none left out.
    pub ring_overflow: Vec<(String, u64)>,
    /// Calls not written because the file reached `PERFGRAPH_TRACE_LIMIT`.
    pub past_limit: u64,
    /// Calls not written because the disk was full, or the reader of a pipe did not keep up.
    pub unwritten: u64,
    /// `PERFGRAPH_TRACE_LIMIT` in bytes, `None` when unlimited.
    pub limit: Option<u64>,
    /// Threads whose ring could not be mapped, so none of their calls reached the trace.
    pub unmapped_ring_threads: u64,
}

impl Losses {
    /// Records lost to ring overflow, all threads.
    pub(crate) fn ring_overflow_total(&self) -> u64 {
        self.ring_overflow.iter().map(|(_, n)| n).sum()
    }

    /// Calls that ended but are not in the trace.
    pub(crate) fn total(&self) -> u64 {
        self.ring_overflow_total() + self.past_limit + self.unwritten
    }

    /// The one-line statement of what is missing (empty when nothing is), as the file and stderr say it.
    pub(crate) fn sentence(&self) -> String {
        if self.total() == 0 && self.unmapped_ring_threads == 0 {
            return String::new();
        }
        let limit = match self.limit {
            Some(bytes) => format!("PERFGRAPH_TRACE_LIMIT={bytes}"),
            None => "PERFGRAPH_TRACE_LIMIT=unlimited".to_owned(),
        };
        let per_thread: Vec<String> = self
            .ring_overflow
            .iter()
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        let per_thread = if per_thread.is_empty() {
            String::new()
        } else {
            format!(" ({})", per_thread.join(", "))
        };
        let unmapped = match self.unmapped_ring_threads {
            0 => String::new(),
            1 => "; nor is any call of 1 thread whose ring could not be mapped".to_owned(),
            n => format!("; nor is any call of {n} threads whose ring could not be mapped"),
        };
        format!(
            "{} {} not in this trace: {} lost to ring overflow{per_thread}, {} past \
             {limit}, {} not written (disk full or reader too slow){unmapped}",
            crate::base::text::count(self.total(), "section call"),
            if self.total() == 1 { "is" } else { "are" },
            self.ring_overflow_total(),
            self.past_limit,
            self.unwritten,
        )
    }
}

/// The end of a complete trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Calls written, the unfinished ones among them.
    pub calls: u64,
    /// Calls written that were still running at the end.
    pub unfinished: u64,
    /// What is missing.
    pub losses: Losses,
    /// The clock source's name.
    pub clock: &'static str,
    /// End of the trace, ns since the runtime's start.
    pub end_ns: u64,
}

/// Appends `n` in decimal.
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimal() {
        for n in [0, 7, 10, 999, 1_000_000_007, u64::MAX] {
            let mut out = Vec::new();
            super::push_u64(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }

    #[test]
    fn one_lost_call_is_singular() {
        let losses = super::Losses {
            past_limit: 1,
            limit: Some(4096),
            ..Default::default()
        };
        assert_eq!(
            losses.sentence(),
            "1 section call is not in this trace: 0 lost to ring overflow, 1 past \
             PERFGRAPH_TRACE_LIMIT=4096, 0 not written (disk full or reader too slow)"
        );
    }
}
