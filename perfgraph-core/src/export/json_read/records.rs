//! The document's members besides its tree: `threads` (each with its own tree), a merge's `processes`,
//! `skipped_sections`, `counters` and `locks`, each entry taken from the file's budget of nodes.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::fields::{Fields, KeySeed, ObjectSeed, Scalar, ScalarSeed, read_row, take_node};
use super::intern;
use super::tree::TreeSeed;
use crate::data::counters::CounterStats;
use crate::data::locks::LockStats;
use crate::data::report::{ProcessInfo, ThreadSummary};
use crate::data::tree::CallTree;
use crate::export::json_input::{own_seed, refuse_others};
use crate::export::json_rows::{
    COUNTER_FIELDS, COUNTER_KEYS, LOCK_FIELDS, LOCK_KEYS, THREAD_FIELDS, THREAD_KEYS,
};

/// The `threads` array.
pub(super) struct ThreadsSeed<'a> {
    pub(super) nodes_left: &'a mut usize,
}

own_seed!(ThreadsSeed<'_>);

impl<'de> Visitor<'de> for ThreadsSeed<'_> {
    type Value = Vec<ThreadSummary>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the threads' array")
    }
    refuse_others!(|_: &Self| "no \"threads\" array".to_owned(), and objects);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let i = out.len();
            let seed = ThreadSeed {
                i,
                nodes_left: &mut *self.nodes_left,
            };
            let Some(t) = seq.next_element_seed(seed)? else {
                break;
            };
            out.push(t);
        }
        Ok(out)
    }
}

struct ThreadSeed<'a> {
    i: usize,
    nodes_left: &'a mut usize,
}

own_seed!(ThreadSeed<'_>);

impl<'de> Visitor<'de> for ThreadSeed<'_> {
    type Value = ThreadSummary;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a thread object")
    }
    refuse_others!(|s: &Self| format!("threads[{}]: not an object", s.i), and arrays);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let at = format!("threads[{}]: ", self.i);
        take_node(self.nodes_left)?;
        let mut o = Fields::default();
        let mut tree = None;
        while let Some(key) = map.next_key_seed(KeySeed(&THREAD_KEYS, &["tree"], &[]))? {
            match key {
                Some("tree") => {
                    tree = Some(map.next_value_seed(TreeSeed {
                        name: format!("threads[{}].tree", self.i),
                        nodes_left: &mut *self.nodes_left,
                    })?)
                }
                Some(k) => o.set(k, map.next_value_seed(ScalarSeed)?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let thread = || -> Result<ThreadSummary, String> {
            let (tree, _, _) = tree.ok_or_else(|| format!("{at}no \"tree\""))?;
            let mut t = blank_thread(tree);
            read_row(&o, &at, THREAD_FIELDS, &mut t)?;
            Ok(t)
        };
        thread().map_err(de::Error::custom)
    }
}

/// A thread's row with `tree`, its other fields blank: the table sets each of them.
fn blank_thread(tree: CallTree) -> ThreadSummary {
    ThreadSummary {
        index: 0,
        name: String::new(),
        is_main: false,
        exited: false,
        alive_ns: 0,
        busy_ns: 0,
        cpu_ns: 0,
        calls: 0,
        dropped: 0,
        tree,
    }
}

/// The keys of a process's identity.
const PROCESS_KEYS: &[&str] = &["pid", "rank", "host", "start_unix_ns"];

/// A process's identity; absent fields (a file from before they existed) read as 0 and "".
pub(super) fn process(o: &Fields, at: &str) -> Result<ProcessInfo, String> {
    let num = |k: &str| -> Result<u64, String> { if o.has(k) { o.u64(k, at) } else { Ok(0) } };
    let narrow = |k: &str| -> Result<u32, String> {
        let v = num(k)?;
        u32::try_from(v).map_err(|_| format!("{at}\"{k}\" is out of range ({v})"))
    };
    Ok(ProcessInfo {
        pid: narrow("pid")?,
        rank: narrow("rank")?,
        host: match o.get("host") {
            None | Some(Scalar::Null) => String::new(),
            Some(_) => o.str("host", at)?.to_owned(),
        },
        start_unix_ns: num("start_unix_ns")?,
    })
}

/// The `processes` array of a merge.
pub(super) struct ProcessesSeed<'a> {
    pub(super) nodes_left: &'a mut usize,
}

own_seed!(ProcessesSeed<'_>);

impl<'de> Visitor<'de> for ProcessesSeed<'_> {
    type Value = Option<Vec<ProcessInfo>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the processes' array")
    }
    refuse_others!(null_is_none, |_: &Self| "\"processes\" is not an array", and objects);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        objects(seq, "processes", PROCESS_KEYS, self.nodes_left, process).map(Some)
    }
}

/// The `skipped_sections` array of names.
pub(super) struct NamesSeed<'a> {
    pub(super) nodes_left: &'a mut usize,
}

own_seed!(NamesSeed<'_>);

impl<'de> Visitor<'de> for NamesSeed<'_> {
    type Value = Vec<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of names")
    }
    refuse_others!(|_: &Self| "no \"skipped_sections\" array".to_owned(), and objects);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ScalarSeed)? {
            take_node(self.nodes_left)?;
            match v {
                Scalar::Str(s) => out.push(intern(&s)),
                _ => {
                    return Err(de::Error::custom("\"skipped_sections\": not a string"));
                }
            }
        }
        Ok(out)
    }
}

/// The `counters` object: counter name to its figures.
pub(super) struct CountersSeed<'a> {
    pub(super) nodes_left: &'a mut usize,
}

own_seed!(CountersSeed<'_>);

impl<'de> Visitor<'de> for CountersSeed<'_> {
    type Value = Vec<CounterStats>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the counters' object")
    }
    refuse_others!(|_: &Self| "\"counters\" is not an object".to_owned(), and arrays);
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<CounterStats> = Vec::new();
        while let Some(key) = map.next_key_seed(ScalarSeed)? {
            take_node(self.nodes_left)?;
            let Scalar::Str(name) = key else {
                return Err(de::Error::custom(
                    "\"counters\": a name that is not a string",
                ));
            };
            let at = format!("counters[{}]: ", serde_json::Value::from(name.as_str()));
            let o = map.next_value_seed(ObjectSeed {
                known: &COUNTER_KEYS,
                at: at.clone(),
            })?;
            let mut c = CounterStats::new(name);
            read_row(&o, &at, COUNTER_FIELDS, &mut c).map_err(de::Error::custom)?;
            if out.iter().any(|d| d.name == c.name) {
                return Err(de::Error::custom(format!("{at}given twice")));
            }
            out.push(c);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// The `locks` array: one object per lock name.
pub(super) struct LocksSeed<'a> {
    pub(super) nodes_left: &'a mut usize,
}

own_seed!(LocksSeed<'_>);

impl<'de> Visitor<'de> for LocksSeed<'_> {
    type Value = Vec<LockStats>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the locks' array")
    }
    refuse_others!(|_: &Self| "\"locks\" is not an array".to_owned(), and objects);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        objects(seq, "locks", &LOCK_KEYS, self.nodes_left, |o, at| {
            let mut l = LockStats::default();
            read_row(o, at, LOCK_FIELDS, &mut l)?;
            Ok(l)
        })
    }
}

/// The array `name` of objects of scalars (`known` keys kept), each taken from the file's budget of nodes
/// and made into a `T` by `make` (given the object and where it is, for its errors).
fn objects<'de, A: SeqAccess<'de>, T>(
    mut seq: A,
    name: &str,
    known: &'static [&'static str],
    nodes_left: &mut usize,
    make: impl Fn(&Fields, &str) -> Result<T, String>,
) -> Result<Vec<T>, A::Error> {
    let mut out = Vec::new();
    loop {
        let at = format!("{name}[{}]: ", out.len());
        let Some(o) = seq.next_element_seed(ObjectSeed {
            known,
            at: at.clone(),
        })?
        else {
            break;
        };
        take_node(nodes_left)?;
        out.push(make(&o, &at).map_err(de::Error::custom)?);
    }
    Ok(out)
}
