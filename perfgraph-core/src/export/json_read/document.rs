//! The document: one object, its members read in any order, the format checked as soon as it is read, and
//! the [`Report`] built from the parts once all are in.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};

use super::fields::{Fields, KeySeed, Scalar, ScalarSeed};
use super::intern;
use super::records::{CountersSeed, LocksSeed, NamesSeed, ProcessesSeed, ThreadsSeed, process};
use super::tree::{ReadTree, TreeSeed};
use crate::base::config::Verbosity;
use crate::data::counters::CounterStats;
use crate::data::locks::LockStats;
use crate::data::report::{Merged, ProcessInfo, Report, RunInfo, ThreadSummary};
use crate::export::json::VERSION;
use crate::export::json_input::refuse_others;

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
pub(super) struct Top<'a> {
    pub(super) nodes_left: &'a mut usize,
}

const NOT_AN_OBJECT: &str = "not a perfgraph call-tree file (not a JSON object)";

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Report;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a call-tree object")
    }
    refuse_others!(|_: &Self| NOT_AN_OBJECT, and arrays);
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
