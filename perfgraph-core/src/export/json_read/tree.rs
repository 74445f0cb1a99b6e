//! A flat node array into a [`CallTree`]: each node checked against the nodes before it (its parent one of
//! them, its depth one more than its parent's), with its latency histogram and its spread over processes.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::fields::{Fields, KeySeed, ObjectSeed, Scalar, ScalarSeed, take_node};
use super::intern;
use crate::base::buckets;
use crate::data::figures::{CpuFigures, Written};
use crate::data::latency::Latency;
use crate::data::node_figures::{InJson, NODE_FIGURE_NAMES, NODE_FIGURES, Value};
use crate::data::report::ProcessSpread;
use crate::data::tree::{CallNode, CallTree};
use crate::export::json_input::{own_seed, refuse_others};

/// The keys of a node's spread over processes (a merge's).
const SPREAD_KEYS: &[&str] = &["count", "min_ns", "sum_ns", "max_ns", "max_rank"];

/// A flat node array (`name`: where it is, for errors) into a tree (children from the parents), with the
/// nodes' spread over processes when every node has one.
pub(super) struct TreeSeed<'a> {
    pub(super) name: String,
    pub(super) nodes_left: &'a mut usize,
}

/// A tree as read: its nodes, their spread when every node had one, and whether its root carried the
/// allocation fields (the run counted allocations).
pub(super) type ReadTree = (CallTree, Option<Vec<ProcessSpread>>, bool);

own_seed!(TreeSeed<'_>);

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = ReadTree;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "\"{}\" as an array", self.name)
    }
    refuse_others!(|s: &Self| format!("\"{}\" is not an array", s.name), and objects);
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

own_seed!(NodeSeed);

impl<'de> Visitor<'de> for NodeSeed {
    type Value = RawNode;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a node object")
    }
    refuse_others!(|s: &Self| format!("{}not an object", s.at), and arrays);
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

own_seed!(HistogramSeed);

impl HistogramSeed {
    /// The error for a histogram that is neither `null` nor an object.
    fn not_an_object(&self) -> String {
        format!("{}\"histogram\" is not an object", self.at)
    }

    /// The error for buckets that are not `[bucket, calls]` pairs in bucket order.
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
    refuse_others!(null_is_none, HistogramSeed::not_an_object, and arrays);
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

own_seed!(BucketsSeed);

impl<'de> Visitor<'de> for BucketsSeed {
    type Value = Vec<(u32, u64)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[bucket, calls] pairs")
    }
    refuse_others!(|s: &Self| s.bad.clone(), and objects);
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

own_seed!(PairSeed<'_>);

impl<'de> Visitor<'de> for PairSeed<'_> {
    type Value = (u64, u64);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a [bucket, calls] pair")
    }
    refuse_others!(|s: &Self| s.bad.to_owned(), and objects);
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
