//! Reading a call-tree JSON (`PERFGRAPH_JSON`, or a `perfgraph merge`) back into a [`Report`], so that the
//! `perfgraph` command renders a file with the very renderers the process used: `perfgraph report` prints
//! what `PERFGRAPH_REPORT` printed, byte for byte.
//!
//! The input is untrusted. It is read as a stream (serde's visitors over `serde_json`'s reader, one node at a
//! time, never the whole document as a `serde_json::Value`), so memory holds the report being built and
//! little more; and it is held to [`Report::MAX_JSON_BYTES`], [`Report::MAX_JSON_NODES`],
//! [`Report::MAX_JSON_NAME_BYTES`] and the tree's own shape (each node's `depth` one more than its parent's,
//! a parent before its children). Bad input is an error that says what is wrong and where
//! (`tree[3]: no "calls"`), never a panic and never an allocation the input chose. Fields added to version
//! 1 after a file was written (the latency figures, the process's identity) are read as absent; fields this
//! reader does not know are skipped.

use std::collections::HashSet;
use std::fmt;
use std::io::Read;
use std::sync::Mutex;

use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use super::json::VERSION;
use super::json_input::{Guard, Limits, refuse_others};
use crate::base::buckets;
use crate::base::config::Verbosity;
use crate::data::counters::CounterStats;
use crate::data::figures::{CpuFigures, Written};
use crate::data::latency::Latency;
use crate::data::locks::LockStats;
use crate::data::node_figures::{InJson, NODE_FIGURE_NAMES, NODE_FIGURES, Value};
use crate::data::report::{Merged, ProcessInfo, ProcessSpread, Report, RunInfo, ThreadSummary};
use crate::data::tree::{CallNode, CallTree};

impl Report {
    /// Largest call-tree JSON [`Report::read_json`] reads, bytes (8 GiB).
    pub const MAX_JSON_BYTES: u64 = 8 << 30;
    /// Most nodes a call-tree JSON may hold, all its trees together (the merged tree and each thread's),
    /// with its `processes` entries: 10,000,000.
    pub const MAX_JSON_NODES: usize = 10_000_000;
    /// Longest string a call-tree JSON may hold (a section, thread, program or host name), bytes once
    /// decoded: 4096. A longer one in the file is refused as it is read, before it is held.
    pub const MAX_JSON_NAME_BYTES: usize = 4096;

    /// Reads a call-tree JSON (schema in `docs/json-schema.md`) back into a report. The error says what is
    /// wrong with the text: not JSON, another format or version, a field missing or of the wrong type, a
    /// tree that is not one, or a limit passed. Never a panic.
    ///
    /// Names are interned for the life of the process (a report's names are `&'static str`): each
    /// distinct name is kept once, however many files are read.
    ///
    /// ```
    /// use perfgraph_core::{report, timed, Report};
    ///
    /// #[timed]
    /// fn assemble() {}
    ///
    /// assemble();
    /// let r = report();
    /// let back = Report::from_json(&r.json()).unwrap();
    /// assert_eq!(back.tree.find(&["assemble"]).unwrap().calls, 1);
    /// assert_eq!(back.json(), r.json());
    /// assert!(Report::from_json("{").unwrap_err().starts_with("not JSON"));
    /// ```
    pub fn from_json(text: &str) -> Result<Report, String> {
        Report::read_json(text.as_bytes())
    }

    /// [`Report::from_json`] from a reader (a file), streamed: memory holds the report being built, not
    /// the text. Past [`Report::MAX_JSON_BYTES`], [`Report::MAX_JSON_NODES`] or
    /// [`Report::MAX_JSON_NAME_BYTES`] it stops with an error naming the limit.
    ///
    /// ```
    /// use perfgraph_core::{report, time_section, Report};
    ///
    /// {
    ///     time_section!("load");
    /// }
    /// let json = report().json();
    /// let back = Report::read_json(std::io::Cursor::new(json)).unwrap();
    /// assert_eq!(back.tree.find(&["load"]).unwrap().calls, 1);
    /// let endless = std::io::repeat(b' ');
    /// assert!(Report::read_json(endless.take(100)).unwrap_err().starts_with("not JSON"));
    /// # use std::io::Read;
    /// ```
    pub fn read_json(reader: impl Read) -> Result<Report, String> {
        Report::read_json_within(reader, Report::MAX_JSON_NODES)
    }

    /// [`Report::read_json`] held to `max_nodes` nodes (a running process's dump: `attach::report`).
    pub(crate) fn read_json_within(reader: impl Read, max_nodes: usize) -> Result<Report, String> {
        let mut de = serde_json::Deserializer::from_reader(Guard::new(reader, &LIMITS));
        let mut nodes_left = max_nodes;
        let read = de
            .deserialize_any(Top {
                nodes_left: &mut nodes_left,
            })
            .and_then(|r| de.end().map(|()| r));
        read.map_err(|e| match e.classify() {
            serde_json::error::Category::Data => strip_position(&e),
            serde_json::error::Category::Io => {
                // Our guard's refusals (a limit) are errors of the reader.
                strip_position(&e)
            }
            _ => format!("not JSON, or cut short ({e})"),
        })
    }
}

/// An error's text without serde_json's `at line L column C` (ours name the place themselves), but with
/// it where it is all there is to go by (a type error of serde's own).
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((head, _)) if head.contains(": ") || head.starts_with("limit") => head.to_owned(),
        _ => text,
    }
}

/// Interns `s`: the same `&'static str` for the same text, each kept once for good.
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(&known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

// ---- the reader's guard -------------------------------------------------------------------------------------

/// Longest string token, bytes as written (escapes included), let through to the parser: a string longer
/// than a name may be once decoded (`\u0001` takes six bytes for one) is refused before it is buffered.
const MAX_TOKEN_BYTES: usize = 6 * Report::MAX_JSON_NAME_BYTES + 2;

/// What the reader takes of a file: [`Report::MAX_JSON_BYTES`] in all, [`MAX_TOKEN_BYTES`] a string.
static LIMITS: Limits = Limits {
    bytes: Report::MAX_JSON_BYTES,
    token: MAX_TOKEN_BYTES,
    too_large: || {
        format!(
            "limit: larger than {} bytes (Report::MAX_JSON_BYTES)",
            Report::MAX_JSON_BYTES
        )
    },
    too_long: || {
        format!(
            "limit: a string longer than {} bytes (Report::MAX_JSON_NAME_BYTES)",
            Report::MAX_JSON_NAME_BYTES
        )
    },
};

// ---- scalars --------------------------------------------------------------------------------------------------

/// One JSON value that is not an array or an object.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
}

/// Reads a [`Scalar`]; an array or an object there is an error (and is not read into memory).
struct ScalarSeed;

impl<'de> DeserializeSeed<'de> for ScalarSeed {
    type Value = Scalar;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, a string, true, false or null")
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(match u64::try_from(v) {
            Ok(u) => Scalar::U64(u),
            Err(_) => Scalar::I64(v),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        if v.len() > Report::MAX_JSON_NAME_BYTES {
            return Err(E::custom(format!(
                "limit: a string longer than {} bytes (Report::MAX_JSON_NAME_BYTES)",
                Report::MAX_JSON_NAME_BYTES
            )));
        }
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(de::Error::custom("an array where a single value belongs"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(de::Error::custom("an object where a single value belongs"))
    }
}

/// An object's members read so far, by key (each key once; a repeated key keeps its last value).
#[derive(Default)]
struct Fields {
    values: Vec<(&'static str, Scalar)>,
}

impl Fields {
    fn set(&mut self, key: &'static str, v: Scalar) {
        match self.values.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.values.push((key, v)),
        }
    }
    fn get(&self, key: &str) -> Option<&Scalar> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn u64(&self, key: &str, at: &str) -> Result<u64, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::U64(v)) => Ok(*v),
            Some(_) => Err(format!("{at}\"{key}\" is not a whole number")),
        }
    }
    /// A whole number that only some objects carry (async nodes' figures, a thread's `cpu_ns`): 0 when
    /// absent.
    fn u64_or_0(&self, key: &str, at: &str) -> Result<u64, String> {
        if self.has(key) {
            self.u64(key, at)
        } else {
            Ok(0)
        }
    }
    /// A whole number that must fit `T` (a level, a rank, a pid): the error names the field, never a
    /// silent cut (`level: 300` is not level 44).
    fn narrow<T: TryFrom<u64>>(&self, key: &str, at: &str) -> Result<T, String> {
        let v = self.u64(key, at)?;
        T::try_from(v).map_err(|_| format!("{at}\"{key}\" is out of range ({v})"))
    }
    fn i64(&self, key: &str, at: &str) -> Result<i64, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::I64(v)) => Ok(*v),
            Some(Scalar::U64(v)) => {
                i64::try_from(*v).map_err(|_| format!("{at}\"{key}\" is out of range ({v})"))
            }
            Some(_) => Err(format!("{at}\"{key}\" is not a whole number")),
        }
    }
    fn bool(&self, key: &str, at: &str) -> Result<bool, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::Bool(v)) => Ok(*v),
            Some(_) => Err(format!("{at}\"{key}\" is not true or false")),
        }
    }
    fn str(&self, key: &str, at: &str) -> Result<&str, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::Str(v)) => Ok(v),
            Some(_) => Err(format!("{at}\"{key}\" is not a string")),
        }
    }
}

/// Reads an object's key as one of the known keys, in either list (`None`: a key this reader does not use,
/// whose value is skipped), without holding the key's text.
struct KeySeed(
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<&'static str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .iter()
            .chain(self.1)
            .chain(self.2)
            .find(|k| **k == v)
            .copied())
    }
}

/// An object of scalars (`known` keys kept, others skipped) at `at`.
struct ObjectSeed {
    known: &'static [&'static str],
    at: String,
}

impl<'de> DeserializeSeed<'de> for ObjectSeed {
    type Value = Fields;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Fields, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed {
    type Value = Fields;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key_seed(KeySeed(self.known, &[], &[]))? {
            match key {
                Some(k) => fields.set(k, map.next_value_seed(ScalarSeed)?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Fields, A::Error> {
        Err(de::Error::custom(format!("{}not an object", self.at)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Fields, E> {
        Err(E::custom(format!("{}not an object", self.at)))
    }
}

/// Takes one from the file's budget of nodes (and `processes` entries); past [`Report::MAX_JSON_NODES`],
/// the error.
fn take_node<E: de::Error>(left: &mut usize) -> Result<(), E> {
    match left.checked_sub(1) {
        Some(l) => {
            *left = l;
            Ok(())
        }
        None => Err(E::custom(format!(
            "limit: more than {} nodes (Report::MAX_JSON_NODES)",
            Report::MAX_JSON_NODES
        ))),
    }
}

// ---- a tree ---------------------------------------------------------------------------------------------------

/// The keys of a node's spread over processes (a merge's).
const SPREAD_KEYS: &[&str] = &["count", "min_ns", "sum_ns", "max_ns", "max_rank"];

/// A flat node array (`name`: where it is, for errors) into a tree (children from the parents), with the
/// nodes' spread over processes when every node has one.
struct TreeSeed<'a> {
    name: String,
    nodes_left: &'a mut usize,
}

/// A tree as read: its nodes, their spread when every node had one, and whether its root carried the
/// allocation fields (the run counted allocations).
type ReadTree = (CallTree, Option<Vec<ProcessSpread>>, bool);

impl<'de> DeserializeSeed<'de> for TreeSeed<'_> {
    type Value = ReadTree;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ReadTree, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = ReadTree;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "\"{}\" as an array", self.name)
    }
    refuse_others!(|s: &Self| format!("\"{}\" is not an array", s.name));
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<ReadTree, A::Error> {
        Err(de::Error::custom(format!(
            "\"{}\" is not an array",
            self.name
        )))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ReadTree, A::Error> {
        let mut nodes: Vec<CallNode> = Vec::new();
        let mut spread: Vec<ProcessSpread> = Vec::new();
        let mut root_has_allocs = false;
        loop {
            let i = nodes.len();
            let at = format!("{}[{i}]: ", self.name);
            let Some(node) = seq.next_element_seed(NodeSeed { at: at.clone() })? else {
                break;
            };
            take_node(self.nodes_left)?;
            if i == 0 {
                root_has_allocs = node.fields.has("allocs");
            }
            let (node, s) = node_of(node, &nodes, &at).map_err(de::Error::custom)?;
            if let Some(p) = node.parent {
                nodes[p].children.push(i);
            }
            if let Some(s) = s {
                spread.push(s);
            }
            nodes.push(node);
        }
        let spread = (!nodes.is_empty() && spread.len() == nodes.len()).then_some(spread);
        Ok((CallTree { nodes }, spread, root_has_allocs))
    }
}

/// One node as read: its scalars, its histogram's buckets and `sub_buckets`, its spread's scalars.
#[derive(Default)]
struct RawNode {
    fields: Fields,
    parent: Option<Scalar>,
    histogram: Option<ReadHistogram>,
    spread: Option<Fields>,
}

struct NodeSeed {
    at: String,
}

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = RawNode;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawNode, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed {
    type Value = RawNode;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a node object")
    }
    refuse_others!(|s: &Self| format!("{}not an object", s.at));
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<RawNode, A::Error> {
        Err(de::Error::custom(format!("{}not an object", self.at)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawNode, A::Error> {
        let mut raw = RawNode::default();
        while let Some(key) = map.next_key_seed(KeySeed(
            ALL_NODE_KEYS,
            NODE_FIGURE_NAMES,
            &CpuFigures::NAMES,
        ))? {
            match key {
                Some("parent") => raw.parent = Some(map.next_value_seed(ScalarSeed)?),
                Some("histogram") => {
                    raw.histogram = Some(map.next_value_seed(HistogramSeed {
                        at: self.at.clone(),
                    })?)
                }
                Some("processes") => {
                    raw.spread = Some(map.next_value_seed(ObjectSeed {
                        known: SPREAD_KEYS,
                        at: format!("{}processes: ", self.at),
                    })?)
                }
                Some(k) => raw.fields.set(k, map.next_value_seed(ScalarSeed)?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(raw)
    }
}

/// The keys of a node this reader uses besides its figures' (whose names are the lists'
/// `NODE_FIGURE_NAMES` and `CpuFigures::NAMES`): its structure, and `histogram` and `processes`.
const ALL_NODE_KEYS: &[&str] = &[
    "section",
    "name",
    "level",
    "depth",
    "parent",
    "min_ns",
    "max_ns",
    "histogram",
    "processes",
];

/// A node's histogram: `null`, or `{"buckets": [[bucket, calls], ...], "sub_buckets": 64}`; the buckets
/// in order, at most [`buckets::BUCKETS`] of them.
struct HistogramSeed {
    at: String,
}

type ReadHistogram = Option<(Option<u64>, Vec<(u32, u64)>)>;

impl<'de> DeserializeSeed<'de> for HistogramSeed {
    type Value = ReadHistogram;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<ReadHistogram, D::Error> {
        d.deserialize_any(self)
    }
}

impl HistogramSeed {
    fn bad(&self) -> String {
        format!(
            "{}histogram \"buckets\": not [bucket, calls] pairs in bucket order",
            self.at
        )
    }
}

impl<'de> Visitor<'de> for HistogramSeed {
    type Value = ReadHistogram;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a histogram object or null")
    }
    fn visit_unit<E>(self) -> Result<ReadHistogram, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<ReadHistogram, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<ReadHistogram, E> {
        Err(E::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<ReadHistogram, E> {
        Err(E::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<ReadHistogram, E> {
        Err(E::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<ReadHistogram, E> {
        Err(E::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<ReadHistogram, E> {
        Err(E::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<ReadHistogram, A::Error> {
        Err(de::Error::custom(format!(
            "{}\"histogram\" is not an object",
            self.at
        )))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ReadHistogram, A::Error> {
        let mut sub = None;
        let mut buckets = None;
        while let Some(key) = map.next_key_seed(KeySeed(&["sub_buckets", "buckets"], &[], &[]))? {
            match key {
                Some("sub_buckets") => {
                    sub = Some(match map.next_value_seed(ScalarSeed)? {
                        Scalar::U64(v) => v,
                        _ => {
                            return Err(de::Error::custom(format!(
                                "{}\"sub_buckets\" is not a whole number",
                                self.at
                            )));
                        }
                    })
                }
                Some(_) => buckets = Some(map.next_value_seed(BucketsSeed { bad: self.bad() })?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let buckets = buckets.ok_or_else(|| de::Error::custom(self.bad()))?;
        Ok(Some((sub, buckets)))
    }
}

/// `[[bucket, calls], ...]`, in bucket order; buckets with no calls left out.
struct BucketsSeed {
    bad: String,
}

impl<'de> DeserializeSeed<'de> for BucketsSeed {
    type Value = Vec<(u32, u64)>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BucketsSeed {
    type Value = Vec<(u32, u64)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[bucket, calls] pairs")
    }
    refuse_others!(|s: &Self| s.bad.clone());
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom(self.bad))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(u32, u64)> = Vec::new();
        let mut last: Option<u64> = None;
        loop {
            let pair = seq.next_element_seed(PairSeed { bad: &self.bad })?;
            let Some((b, n)) = pair else { break };
            if b >= buckets::BUCKETS as u64 || last.is_some_and(|l| l >= b) {
                return Err(de::Error::custom(self.bad));
            }
            last = Some(b);
            if n > 0 {
                out.push((b as u32, n));
            }
        }
        Ok(out)
    }
}

/// One `[bucket, calls]` pair: two whole numbers. A cut file is the reader's error (not JSON, or cut
/// short), any other shape `bad`.
struct PairSeed<'a> {
    bad: &'a str,
}

impl<'de> DeserializeSeed<'de> for PairSeed<'_> {
    type Value = (u64, u64);
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for PairSeed<'_> {
    type Value = (u64, u64);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a [bucket, calls] pair")
    }
    refuse_others!(|s: &Self| s.bad.to_owned());
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom(self.bad))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut whole = || -> Result<Option<u64>, A::Error> {
            match seq.next_element_seed(ScalarSeed)? {
                None => Ok(None),
                Some(Scalar::U64(v)) => Ok(Some(v)),
                Some(_) => Err(de::Error::custom(self.bad)),
            }
        };
        let (Some(b), Some(n)) = (whole()?, whole()?) else {
            return Err(de::Error::custom(self.bad));
        };
        if whole()?.is_some() {
            return Err(de::Error::custom(self.bad));
        }
        Ok((b, n))
    }
}

/// A node's CPU figures: `None` without its first figure (the path did not measure); a figure written
/// only when not zero reads as 0 when absent.
fn cpu_figures(o: &Fields, at: &str) -> Result<Option<CpuFigures>, String> {
    if !o.has(CpuFigures::NAMES[0]) {
        return Ok(None);
    }
    let mut values = [0; CpuFigures::COUNT];
    for (i, v) in values.iter_mut().enumerate() {
        let name = CpuFigures::NAMES[i];
        *v = match CpuFigures::WRITTEN[i] {
            Written::Always => o.u64(name, at)?,
            Written::NotZero => o.u64_or_0(name, at)?,
        };
    }
    Ok(Some(CpuFigures::from_values(values)))
}

/// A node from what was read of it, checked against the nodes before it (`earlier`): its parent one of
/// them, its depth one more than its parent's (0 for a root, the first node only), its latency figures
/// consistent. With its spread, if it had one.
fn node_of(
    raw: RawNode,
    earlier: &[CallNode],
    at: &str,
) -> Result<(CallNode, Option<ProcessSpread>), String> {
    let i = earlier.len();
    let o = &raw.fields;
    let parent = match &raw.parent {
        Some(Scalar::Null) if i == 0 => None,
        Some(Scalar::U64(p)) if (*p as usize) < i => Some(*p as usize),
        Some(_) => return Err(format!("{at}\"parent\" is not an earlier node")),
        None => return Err(format!("{at}no \"parent\"")),
    };
    let depth: u32 = o.narrow("depth", at)?;
    let expected = parent.map_or(0, |p| earlier[p].depth + 1);
    if depth != expected {
        return Err(format!(
            "{at}\"depth\" is {depth}, where its parent's depth makes it {expected}"
        ));
    }
    let spread = match &raw.spread {
        None => None,
        Some(s) => {
            let at = format!("{at}processes: ");
            Some(ProcessSpread {
                processes: s.narrow("count", &at)?,
                min_ns: s.u64("min_ns", &at)?,
                sum_ns: s.u64("sum_ns", &at)?,
                max_ns: s.u64("max_ns", &at)?,
                max_rank: s.narrow("max_rank", &at)?,
            })
        }
    };
    let latency = match raw.histogram.flatten() {
        None => Latency::default(),
        Some((sub, buckets)) => {
            let sub = sub.ok_or_else(|| format!("{at}no \"sub_buckets\""))?;
            if sub != buckets::SUB as u64 {
                return Err(format!(
                    "{at}histogram of {sub} sub-buckets; this perfgraph reads {}",
                    buckets::SUB
                ));
            }
            let mut count: u64 = 0;
            for &(_, n) in &buckets {
                count = count
                    .checked_add(n)
                    .ok_or_else(|| format!("{at}histogram: more calls than a count holds"))?;
            }
            let (min_ns, max_ns) = (o.u64("min_ns", at)?, o.u64("max_ns", at)?);
            if min_ns > max_ns {
                return Err(format!(
                    "{at}\"min_ns\" ({min_ns}) is more than \"max_ns\" ({max_ns})"
                ));
            }
            Latency {
                count,
                min_ns,
                max_ns,
                buckets,
            }
        }
    };
    let mut node = CallNode::new(
        o.narrow("section", at)?,
        intern(o.str("name", at)?),
        o.narrow("level", at)?,
        depth,
        parent,
    );
    // Every figure the list declares (data/node_figures.rs): those of every node required, the async and
    // allocation ones 0 when absent.
    for f in NODE_FIGURES {
        let v = match (f.in_json, f.signed) {
            (InJson::Always, false) => Value::U(o.u64(f.name, at)?),
            (InJson::Always, true) => Value::I(o.i64(f.name, at)?),
            (_, false) => Value::U(o.u64_or_0(f.name, at)?),
            (_, true) if o.has(f.name) => Value::I(o.i64(f.name, at)?),
            (_, true) => Value::I(0),
        };
        (f.set)(&mut node, v);
    }
    node.latency = latency;
    node.cpu = cpu_figures(o, at)?;
    if node.level > 3 {
        return Err(format!("{at}\"level\" is {}, not 0 to 3", node.level));
    }
    Ok((node, spread))
}

// ---- threads, processes, names ----------------------------------------------------------------------------------

/// The keys of a thread this reader uses (its tree is read apart).
const THREAD_KEYS: &[&str] = &[
    "index", "name", "main", "exited", "alive_ns", "busy_ns", "calls", "cpu_ns", "dropped", "tree",
];

/// The `threads` array.
struct ThreadsSeed<'a> {
    nodes_left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for ThreadsSeed<'_> {
    type Value = Vec<ThreadSummary>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ThreadsSeed<'_> {
    type Value = Vec<ThreadSummary>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the threads' array")
    }
    refuse_others!(|_: &Self| "no \"threads\" array".to_owned());
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom("no \"threads\" array"))
    }
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

impl<'de> DeserializeSeed<'de> for ThreadSeed<'_> {
    type Value = ThreadSummary;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ThreadSeed<'_> {
    type Value = ThreadSummary;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a thread object")
    }
    refuse_others!(|s: &Self| format!("threads[{}]: not an object", s.i));
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom(format!(
            "threads[{}]: not an object",
            self.i
        )))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let at = format!("threads[{}]: ", self.i);
        take_node(self.nodes_left)?;
        let mut o = Fields::default();
        let mut tree = None;
        while let Some(key) = map.next_key_seed(KeySeed(THREAD_KEYS, &[], &[]))? {
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
            Ok(ThreadSummary {
                index: o.narrow("index", &at)?,
                name: o.str("name", &at)?.to_owned(),
                is_main: o.bool("main", &at)?,
                exited: o.bool("exited", &at)?,
                alive_ns: o.u64("alive_ns", &at)?,
                busy_ns: o.u64("busy_ns", &at)?,
                calls: o.u64("calls", &at)?,
                cpu_ns: o.u64_or_0("cpu_ns", &at)?,
                dropped: o.u64("dropped", &at)?,
                tree,
            })
        };
        thread().map_err(de::Error::custom)
    }
}

/// The keys of a process's identity.
const PROCESS_KEYS: &[&str] = &["pid", "rank", "host", "start_unix_ns"];

/// A process's identity; absent fields (a file from before they existed) read as 0 and "".
fn process(o: &Fields, at: &str) -> Result<ProcessInfo, String> {
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
struct ProcessesSeed<'a> {
    nodes_left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for ProcessesSeed<'_> {
    type Value = Option<Vec<ProcessInfo>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ProcessesSeed<'_> {
    type Value = Option<Vec<ProcessInfo>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the processes' array")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(E::custom("\"processes\" is not an array"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(E::custom("\"processes\" is not an array"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(E::custom("\"processes\" is not an array"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom("\"processes\" is not an array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(E::custom("\"processes\" is not an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom("\"processes\" is not an array"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let at = format!("processes[{}]: ", out.len());
            let Some(o) = seq.next_element_seed(ObjectSeed {
                known: PROCESS_KEYS,
                at: at.clone(),
            })?
            else {
                break;
            };
            take_node(self.nodes_left)?;
            out.push(process(&o, &at).map_err(de::Error::custom)?);
        }
        Ok(Some(out))
    }
}

/// The `skipped_sections` array of names.
struct NamesSeed<'a> {
    nodes_left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for NamesSeed<'_> {
    type Value = Vec<&'static str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NamesSeed<'_> {
    type Value = Vec<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of names")
    }
    refuse_others!(|_: &Self| "no \"skipped_sections\" array".to_owned());
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom("no \"skipped_sections\" array"))
    }
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

/// The keys of one counter in the `counters` object.
const COUNTER_KEYS: &[&str] = &["samples", "last", "min", "max", "mean", "sum"];

/// The `counters` object: counter name to its figures.
struct CountersSeed<'a> {
    nodes_left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for CountersSeed<'_> {
    type Value = Vec<CounterStats>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CountersSeed<'_> {
    type Value = Vec<CounterStats>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the counters' object")
    }
    refuse_others!(|_: &Self| "\"counters\" is not an object".to_owned());
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom("\"counters\" is not an object"))
    }
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
                known: COUNTER_KEYS,
                at: at.clone(),
            })?;
            let number = |key: &str| -> Result<f64, String> {
                match o.get(key) {
                    Some(Scalar::F64(v)) => Ok(*v),
                    Some(Scalar::U64(v)) => Ok(*v as f64),
                    Some(Scalar::I64(v)) => Ok(*v as f64),
                    // A value that is not finite is written as a string ("NaN", "inf").
                    Some(Scalar::Str(v)) => v
                        .parse::<f64>()
                        .map_err(|_| format!("{at}\"{key}\" is not a number")),
                    None => Err(format!("{at}no \"{key}\"")),
                    Some(_) => Err(format!("{at}\"{key}\" is not a number")),
                }
            };
            let mut c = CounterStats::new(name);
            c.samples = o.u64("samples", &at).map_err(de::Error::custom)?;
            c.last = number("last").map_err(de::Error::custom)?;
            c.min = number("min").map_err(de::Error::custom)?;
            c.max = number("max").map_err(de::Error::custom)?;
            c.sum = number("sum").map_err(de::Error::custom)?;
            if out.iter().any(|d| d.name == c.name) {
                return Err(de::Error::custom(format!("{at}given twice")));
            }
            out.push(c);
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// The keys of one lock in the `locks` array.
const LOCK_KEYS: &[&str] = &[
    "name",
    "acquisitions",
    "contended",
    "wait_ns",
    "max_wait_ns",
    "hold_ns",
    "max_hold_ns",
    "max_waiters",
];

/// The `locks` array: one object per lock name.
struct LocksSeed<'a> {
    nodes_left: &'a mut usize,
}

impl<'de> DeserializeSeed<'de> for LocksSeed<'_> {
    type Value = Vec<LockStats>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LocksSeed<'_> {
    type Value = Vec<LockStats>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the locks' array")
    }
    refuse_others!(|_: &Self| "\"locks\" is not an array".to_owned());
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::custom("\"locks\" is not an array"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<LockStats> = Vec::new();
        loop {
            let at = format!("locks[{}]: ", out.len());
            let Some(o) = seq.next_element_seed(ObjectSeed {
                known: LOCK_KEYS,
                at: at.clone(),
            })?
            else {
                break;
            };
            take_node(self.nodes_left)?;
            let u = |key: &str| o.u64(key, &at).map_err(de::Error::custom);
            let mut l = LockStats::new(o.str("name", &at).map_err(de::Error::custom)?);
            l.acquisitions = u("acquisitions")?;
            l.contended = u("contended")?;
            l.wait_ns = u("wait_ns")?;
            l.max_wait_ns = u("max_wait_ns")?;
            l.hold_ns = u("hold_ns")?;
            l.max_hold_ns = u("max_hold_ns")?;
            l.max_waiters = u("max_waiters")?;
            out.push(l);
        }
        Ok(out)
    }
}

// ---- the document ------------------------------------------------------------------------------------------------

/// The top-level keys that are scalars.
const TOP_KEYS: &[&str] = &[
    "format",
    "version",
    "program",
    "clock",
    "wall_ns",
    "dropped",
    "needs_every_record",
    "verbosity",
    "pid",
    "rank",
    "host",
    "start_unix_ns",
    "overhead_ns_per_section",
    "tree",
    "threads",
    "processes",
    "skipped_sections",
    "counters",
    "locks",
    "traceEvents",
];

/// The document: one object.
struct Top<'a> {
    nodes_left: &'a mut usize,
}

const NOT_AN_OBJECT: &str = "not a perfgraph call-tree file (not a JSON object)";

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Report;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a call-tree object")
    }
    refuse_others!(|_: &Self| NOT_AN_OBJECT);
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Report, A::Error> {
        Err(de::Error::custom(NOT_AN_OBJECT))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Report, A::Error> {
        let mut top = Fields::default();
        let mut tree = None;
        let mut threads = None;
        let mut processes = None;
        let mut skipped = None;
        let mut counters = Vec::new();
        let mut locks = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed(TOP_KEYS, &[], &[]))? {
            match key {
                Some("traceEvents") => {
                    return Err(de::Error::custom(
                        "a trace, not a call-tree file (use `perfgraph merge --trace`)",
                    ));
                }
                Some("tree") => {
                    tree = Some(map.next_value_seed(TreeSeed {
                        name: "tree".into(),
                        nodes_left: &mut *self.nodes_left,
                    })?)
                }
                Some("threads") => {
                    threads = Some(map.next_value_seed(ThreadsSeed {
                        nodes_left: &mut *self.nodes_left,
                    })?)
                }
                Some("processes") => {
                    processes = map.next_value_seed(ProcessesSeed {
                        nodes_left: &mut *self.nodes_left,
                    })?
                }
                Some("skipped_sections") => {
                    skipped = Some(map.next_value_seed(NamesSeed {
                        nodes_left: &mut *self.nodes_left,
                    })?)
                }
                Some("counters") => {
                    counters = map.next_value_seed(CountersSeed {
                        nodes_left: &mut *self.nodes_left,
                    })?
                }
                Some("locks") => {
                    locks = map.next_value_seed(LocksSeed {
                        nodes_left: &mut *self.nodes_left,
                    })?
                }
                Some(k) => {
                    let v = map.next_value_seed(ScalarSeed)?;
                    // The format first, as soon as it is known: a file of another kind says so, not what
                    // it lacks.
                    if k == "format" {
                        check_format(&v).map_err(de::Error::custom)?;
                    }
                    top.set(k, v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        report_of(top, tree, threads, processes, skipped, counters, locks)
            .map_err(de::Error::custom)
    }
}

fn check_format(v: &Scalar) -> Result<(), String> {
    match v {
        Scalar::Str(f) if f == "perfgraph-call-tree" => Ok(()),
        Scalar::Str(other) => Err(format!(
            "not a perfgraph call-tree file (format \"{other}\")"
        )),
        _ => Err("not a perfgraph call-tree file (\"format\" is not a string)".into()),
    }
}

/// The report from the document's parts, checked.
fn report_of(
    top: Fields,
    tree: Option<ReadTree>,
    threads: Option<Vec<ThreadSummary>>,
    processes: Option<Vec<ProcessInfo>>,
    skipped: Option<Vec<&'static str>>,
    counters: Vec<CounterStats>,
    locks: Vec<LockStats>,
) -> Result<Report, String> {
    match top.get("format") {
        Some(f) => check_format(f)?,
        None => return Err("not a perfgraph call-tree file (no \"format\")".into()),
    }
    let version = top.u64("version", "")?;
    if version != u64::from(VERSION) {
        return Err(format!(
            "version {version}; this perfgraph reads version {VERSION}"
        ));
    }
    let verbosity = match top.get("verbosity") {
        None | Some(Scalar::Null) => Verbosity::Off,
        Some(Scalar::U64(v)) if *v <= 3 => Verbosity::Level(*v as u8),
        Some(_) => return Err("\"verbosity\" is not a level".into()),
    };
    let skipped = skipped.ok_or("no \"skipped_sections\" array")?;
    let threads = threads.ok_or("no \"threads\" array")?;
    // Written with the allocation fields on every node, the root first.
    let (tree, spread, heap_counted) = tree.ok_or("no \"tree\"")?;
    if tree.nodes.is_empty() {
        return Err("\"tree\" has no root".into());
    }
    let merged = match processes {
        None => None,
        Some(processes) => Some(Merged {
            processes,
            spread: spread.ok_or("\"processes\" without the nodes' spread")?,
        }),
    };
    let run = RunInfo {
        program: intern(top.str("program", "")?),
        clock: intern(top.str("clock", "")?),
        wall_ns: top.u64("wall_ns", "")?,
        // The root's total memory is the resident-memory change since the start.
        rss_change_bytes: tree.nodes[0].total_mem_bytes,
        verbosity,
        skipped,
        needs_every_record: matches!(top.get("needs_every_record"), Some(Scalar::Bool(true))),
        process: process(&top, "")?,
        overhead_ns_per_section: match top.get("overhead_ns_per_section") {
            Some(Scalar::F64(v)) => Some(*v),
            Some(Scalar::U64(v)) => Some(*v as f64),
            _ => None,
        },
        heap_counted,
        counters,
        locks,
    };
    Ok(Report {
        run,
        tree,
        threads,
        dropped: top.u64("dropped", "")?,
        merged,
    })
}
