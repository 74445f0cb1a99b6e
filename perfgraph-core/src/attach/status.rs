//! A `status` answer read into a [`Status`] as it comes, one value at a time (never the whole document as
//! a `serde_json::Value`, which takes tens of times the text's size), held to bounds: the answer's size
//! (the reader's, [`MAX_STATUS_BYTES`](super::MAX_STATUS_BYTES)), [`MAX_STATUS_THREADS`] threads,
//! [`MAX_STATUS_SECTIONS`] running sections in all, names of [`Report::MAX_JSON_NAME_BYTES`], and serde_json's
//! nesting limit (128). A field of the wrong type reads as absent (0, empty), as the status's readers
//! always took it; unknown fields are skipped.

use std::fmt;
use std::io::{self, Read};

use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{LiveSection, LiveThread, LiveWait, MAX_STATUS_SECTIONS, MAX_STATUS_THREADS, Status};
use crate::data::Report;
use crate::export::json_input::{Guard, Limits, own_seed};

/// What the reader takes: the size is the answer's to bound; a string is refused before it is held.
static LIMITS: Limits = Limits {
    bytes: u64::MAX,
    token: 6 * Report::MAX_JSON_NAME_BYTES + 2,
    too_large: String::new,
    too_long: name_too_long,
};

fn name_too_long() -> String {
    format!(
        "limit: a name longer than {} bytes (Report::MAX_JSON_NAME_BYTES)",
        Report::MAX_JSON_NAME_BYTES
    )
}

/// Reads process `pid`'s status from `reader`.
pub(super) fn read(pid: u32, reader: impl Read) -> io::Result<Status> {
    let invalid =
        |why: &str| io::Error::new(io::ErrorKind::InvalidData, format!("process {pid}: {why}"));
    let mut sections_left = MAX_STATUS_SECTIONS;
    let mut de = serde_json::Deserializer::from_reader(Guard::buffered(reader, &LIMITS));
    let read = de
        .deserialize_map(StatusVisitor {
            sections_left: &mut sections_left,
        })
        .and_then(|s| de.end().map(|()| s));
    match read {
        Ok((status, true)) => Ok(status),
        Ok((_, false)) => Err(invalid("not a perfgraph status")),
        Err(e) if e.is_io() => {
            let e = io::Error::from(e);
            // The reader's own errors name the process already; the guard's do not.
            match e.kind() {
                io::ErrorKind::Other => Err(invalid(&e.to_string())),
                _ => Err(e),
            }
        }
        Err(e) if e.is_data() => Err(invalid(&strip_position(&e))),
        Err(e) => Err(invalid(&format!("not a perfgraph status ({e})"))),
    }
}

fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    text.rsplit_once(" at line ")
        .map_or(text.clone(), |(head, _)| head.to_owned())
}

/// One field's value: a scalar, or `Other` for anything else (read past, not held).
enum Field {
    U64(u64),
    I64(i64),
    Str(String),
    Bool(bool),
    Other,
}

impl Field {
    fn u64(&self) -> u64 {
        match self {
            Field::U64(v) => *v,
            _ => 0,
        }
    }

    fn u32(&self) -> u32 {
        u32::try_from(self.u64()).unwrap_or(0)
    }

    fn string(self) -> String {
        match self {
            Field::Str(s) => s,
            _ => String::new(),
        }
    }
}

struct FieldSeed;

own_seed!(FieldSeed);

impl<'de> Visitor<'de> for FieldSeed {
    type Value = Field;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_u64<E>(self, v: u64) -> Result<Field, E> {
        Ok(Field::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Field, E> {
        Ok(u64::try_from(v).map_or(Field::I64(v), Field::U64))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Field, E> {
        Ok(Field::Bool(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        if v.len() > Report::MAX_JSON_NAME_BYTES {
            return Err(E::custom(name_too_long()));
        }
        Ok(Field::Str(v.to_owned()))
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
}

/// A key, held only when it is short (every key of ours is): a longer one is skipped as unknown.
struct Key(Option<String>);

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key((v.len() <= 32).then(|| v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The status object; `true` with it if its `format` is `perfgraph-status`.
struct StatusVisitor<'a> {
    sections_left: &'a mut usize,
}

impl<'de> Visitor<'de> for StatusVisitor<'_> {
    type Value = (Status, bool);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a perfgraph status object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(Status, bool), A::Error> {
        let mut s = Status {
            pid: 0,
            program: String::new(),
            host: String::new(),
            rank: 0,
            start_unix_ns: 0,
            wall_ns: 0,
            rss_bytes: 0,
            heap_bytes: None,
            sections: 0,
            exited_threads: 0,
            threads: Vec::new(),
        };
        let mut format_ok = false;
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if key.as_deref() == Some("threads") {
                s.threads = map.next_value_seed(ThreadsSeed {
                    sections_left: &mut *self.sections_left,
                })?;
                continue;
            }
            let v = map.next_value_seed(FieldSeed)?;
            match key.as_deref().unwrap_or("") {
                "format" => format_ok = matches!(&v, Field::Str(f) if f == "perfgraph-status"),
                "pid" => s.pid = v.u32(),
                "program" => s.program = v.string(),
                "host" => s.host = v.string(),
                "rank" => s.rank = v.u32(),
                "start_unix_ns" => s.start_unix_ns = v.u64(),
                "wall_ns" => s.wall_ns = v.u64(),
                "rss_bytes" => s.rss_bytes = v.u64(),
                "heap_bytes" => {
                    s.heap_bytes = match v {
                        Field::I64(h) => Some(h),
                        Field::U64(h) => i64::try_from(h).ok(),
                        _ => None,
                    }
                }
                "sections" => s.sections = v.u64(),
                "exited_threads" => s.exited_threads = v.u64(),
                _ => {}
            }
        }
        Ok((s, format_ok))
    }
}

/// A visitor's scalars (and `null`): read as `$v`, what an absent value is. With `and arrays` (`and
/// objects`) last, an array (an object) is read past and taken as `$v` too: what a visitor of the other
/// container writes.
macro_rules! scalars_are {
    ($v:expr, and arrays) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            FieldSeed.visit_seq(seq).map(|_| $v)
        }
        scalars_are!($v);
    };
    ($v:expr, and objects) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            FieldSeed.visit_map(map).map(|_| $v)
        }
        scalars_are!($v);
    };
    ($v:expr) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($v)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($v)
        }
    };
}

/// `threads`: at most [`MAX_STATUS_THREADS`]; anything but an array reads as none.
struct ThreadsSeed<'a> {
    sections_left: &'a mut usize,
}

own_seed!(ThreadsSeed<'_>);

impl<'de> Visitor<'de> for ThreadsSeed<'_> {
    type Value = Vec<LiveThread>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of threads")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut threads = Vec::new();
        while let Some(t) = seq.next_element_seed(ThreadSeed {
            sections_left: &mut *self.sections_left,
        })? {
            if threads.len() == MAX_STATUS_THREADS {
                return Err(de::Error::custom(format!(
                    "limit: more than {MAX_STATUS_THREADS} threads (attach::MAX_STATUS_THREADS)"
                )));
            }
            threads.extend(t);
        }
        Ok(threads)
    }
    scalars_are!(Vec::new(), and objects);
}

/// One thread (`None`: not an object, read past).
struct ThreadSeed<'a> {
    sections_left: &'a mut usize,
}

own_seed!(ThreadSeed<'_>);

impl<'de> Visitor<'de> for ThreadSeed<'_> {
    type Value = Option<LiveThread>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a thread")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut t = LiveThread {
            index: 0,
            name: String::new(),
            main: false,
            alive_ns: 0,
            cpu_ns: 0,
            running: Vec::new(),
            waiting: None,
        };
        let mut wait = LiveWait {
            on: String::new(),
            holder: None,
            elapsed_ns: 0,
        };
        while let Some(Key(key)) = map.next_key::<Key>()? {
            if key.as_deref() == Some("running") {
                t.running = map.next_value_seed(RunningSeed {
                    sections_left: &mut *self.sections_left,
                })?;
                continue;
            }
            let v = map.next_value_seed(FieldSeed)?;
            match key.as_deref().unwrap_or("") {
                "index" => t.index = v.u32(),
                "name" => t.name = v.string(),
                "main" => t.main = matches!(v, Field::Bool(true)),
                "alive_ns" => t.alive_ns = v.u64(),
                "cpu_ns" => t.cpu_ns = v.u64(),
                "waiting_for" => wait.on = v.string(),
                "waiting_holder" => {
                    wait.holder = match v {
                        Field::U64(h) => u32::try_from(h).ok(),
                        _ => None,
                    }
                }
                "waiting_ns" => wait.elapsed_ns = v.u64(),
                _ => {}
            }
        }
        if !wait.on.is_empty() {
            t.waiting = Some(wait);
        }
        Ok(Some(t))
    }
    scalars_are!(None, and arrays);
}

/// A thread's `running`, each section counted against [`MAX_STATUS_SECTIONS`] for the whole status.
struct RunningSeed<'a> {
    sections_left: &'a mut usize,
}

own_seed!(RunningSeed<'_>);

impl<'de> Visitor<'de> for RunningSeed<'_> {
    type Value = Vec<LiveSection>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of running sections")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut running = Vec::new();
        while let Some(section) = seq.next_element_seed(SectionSeed)? {
            if *self.sections_left == 0 {
                return Err(de::Error::custom(format!(
                    "limit: more than {MAX_STATUS_SECTIONS} running sections \
                     (attach::MAX_STATUS_SECTIONS)"
                )));
            }
            *self.sections_left -= 1;
            running.extend(section);
        }
        Ok(running)
    }
    scalars_are!(Vec::new(), and objects);
}

/// One running section (`None`: not an object, read past).
struct SectionSeed;

own_seed!(SectionSeed);

impl<'de> Visitor<'de> for SectionSeed {
    type Value = Option<LiveSection>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a running section")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut r = LiveSection {
            name: String::new(),
            depth: 0,
            elapsed_ns: 0,
        };
        while let Some(Key(key)) = map.next_key::<Key>()? {
            let v = map.next_value_seed(FieldSeed)?;
            match key.as_deref().unwrap_or("") {
                "name" => r.name = v.string(),
                "depth" => r.depth = v.u32(),
                "elapsed_ns" => r.elapsed_ns = v.u64(),
                _ => {}
            }
        }
        Ok(Some(r))
    }
    scalars_are!(None, and arrays);
}
