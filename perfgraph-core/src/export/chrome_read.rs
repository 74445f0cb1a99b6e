//! Reading the Chrome JSON traces perfgraph writes (`PERFGRAPH_TRACE` with a name not ending in
//! `.pftrace`), for tools such as `perfgraph merge --trace`: [`read_events`] walks a trace one event at a
//! time, so memory holds one event whatever the file's size, and [`read_identity`] reads who wrote it (the
//! args of perfgraph's `process_name` event: rank, host, program, wall-clock anchor) and stops there.
//!
//! A trace is untrusted input: it is held to [`MAX_TRACE_BYTES`] in all and [`MAX_STRING_BYTES`] a string,
//! and whatever it holds gives events or one error line, never a panic.

use std::fmt;
use std::io::Read;

use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::json_input::{Guard, Limits, own_seed, refuse_others};

/// Largest trace read, bytes: 64 GiB.
pub const MAX_TRACE_BYTES: u64 = 64 << 30;
/// Longest string in a trace, bytes as written: 1 MiB (a name, a live message, an argument).
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// Who wrote a trace: the args of perfgraph's `process_name` metadata event.
///
/// ```
/// let trace = r#"[
/// {"name":"process_name","ph":"M","pid":7,"tid":0,"args":{"name":"solver","tool":"perfgraph","rank":2,"host":"n1","start_unix_ns":1000}},
/// "#;
/// let who = perfgraph_core::trace::read_identity(trace.as_bytes()).unwrap();
/// assert_eq!((who.rank, who.host.as_str(), who.program.as_str(), who.start_unix_ns), (2, "n1", "solver", 1000));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceIdentity {
    /// The process's rank (0 without one).
    pub rank: u64,
    /// Its host name (empty if not written).
    pub host: String,
    /// The program's name (empty if not written).
    pub program: String,
    /// The wall-clock time of the trace's time zero, ns since the Unix epoch.
    pub start_unix_ns: u64,
}

/// Reads who wrote the trace from `reader`: up to perfgraph's `process_name` event, not further. An error
/// line for a file that is not a trace, not perfgraph's, or from a perfgraph too old to write its anchor.
pub fn read_identity(reader: impl Read) -> Result<TraceIdentity, String> {
    let mut who: Option<Value> = None;
    read_events(reader, |e| {
        let found = e.get("ph").and_then(Value::as_str) == Some("M")
            && e.get("name").and_then(Value::as_str) == Some("process_name")
            && e.pointer("/args/tool").and_then(Value::as_str) == Some("perfgraph");
        if found {
            who = e.get("args").cloned();
        }
        Ok(!found)
    })?;
    let who = who.ok_or("not a perfgraph trace (no \"process_name\" event from perfgraph)")?;
    let field = |k: &str| who.get(k);
    let start_unix_ns = field("start_unix_ns")
        .and_then(Value::as_u64)
        .ok_or("no wall-clock anchor (\"start_unix_ns\"): written by an older perfgraph")?;
    let text = |k: &str| field(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Ok(TraceIdentity {
        rank: field("rank").and_then(Value::as_u64).unwrap_or(0),
        host: text("host"),
        program: text("name"),
        start_unix_ns,
    })
}

/// What the reader takes of a trace: [`MAX_TRACE_BYTES`] in all, [`MAX_STRING_BYTES`] a string.
static LIMITS: Limits = Limits {
    bytes: MAX_TRACE_BYTES,
    token: MAX_STRING_BYTES,
    too_large: || format!("limit: larger than {MAX_TRACE_BYTES} bytes"),
    too_long: || format!("limit: a string longer than {MAX_STRING_BYTES} bytes"),
};

/// What to do with each event read; `Ok(false)` stops the walk there.
type OnEvent<'a> = &'a mut dyn FnMut(Value) -> Result<bool, String>;

/// Marks the error that stops a walk on purpose.
const STOPPED: &str = "\u{0}stopped";

/// Walks the events of a Chrome trace read from `reader`, one at a time, handing each to `each`, which
/// returns whether to go on: the JSON array form perfgraph streams (`[`, events, `]`; a file cut short,
/// without its `]`, is read up to its last whole event, as viewers read it), or the object form
/// (`{"traceEvents": [...]}`). `Ok(())` also when `each` stopped it; `each`'s error stops it with that
/// error.
///
/// ```
/// let trace = r#"[
/// {"name":"solve","ph":"X","pid":1,"tid":1,"ts":1.5,"dur":2},
/// {"name":"solve","ph":"X","pid":1,"tid":1,"ts":4,"dur":1},
/// "#; // cut short, as a killed process leaves it
/// let mut slices = 0;
/// perfgraph_core::trace::read_events(trace.as_bytes(), |e| {
///     slices += (e["ph"] == "X") as u32;
///     Ok(true)
/// })
/// .unwrap();
/// assert_eq!(slices, 2);
/// ```
pub fn read_events(
    reader: impl Read,
    mut each: impl FnMut(Value) -> Result<bool, String>,
) -> Result<(), String> {
    walk(reader, &mut each)
}

fn walk(reader: impl Read, each: OnEvent<'_>) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_reader(Guard::buffered(reader, &LIMITS));
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
    refuse_others!(|_: &Self| NOT_A_TRACE);
}

/// The `traceEvents` array.
struct Events<'a> {
    each: OnEvent<'a>,
}

own_seed!(Events<'_>, deserialize_seq);

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
        read_events(cut.as_bytes(), |_| {
            n += 1;
            Ok(true)
        })
        .unwrap();
        assert!(n > 5 && n < 42, "{n}");
        let mut all = 0;
        read_events(t.as_bytes(), |_| {
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
                let _ = read_events(&b[..], |_| {
                    n += 1;
                    Ok(true)
                });
            });
            assert!(r.is_ok(), "iteration {i} panicked");
        }
    }
}
