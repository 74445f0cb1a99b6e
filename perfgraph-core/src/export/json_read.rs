//! Reading a call-tree JSON (`PERFGRAPH_JSON`, or a `perfgraph merge`) back into a [`Report`], so that the
//! `perfgraph` command renders a file with the very renderers the process used: `perfgraph report` prints
//! what `PERFGRAPH_REPORT` printed, byte for byte.
//!
//! Bad input is an error that says what is wrong and where (`tree[3]: no "calls"`), never a panic. Fields
//! added to version 1 after a file was written (the latency figures, the process's identity) are read as
//! absent.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::json::VERSION;
use crate::base::buckets;
use crate::base::config::Verbosity;
use crate::data::latency::Latency;
use crate::data::report::{Merged, ProcessInfo, Report, Spread, ThreadSummary};
use crate::data::tree::{CallNode, CallTree, CpuTime};

impl Report {
    /// Reads a call-tree JSON (schema in `docs/json-schema.md`) back into a report. The error says what is
    /// wrong with the text: not JSON, another format or version, a field missing or of the wrong type.
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
        let doc: Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON, or cut short ({e})"))?;
        let top = doc
            .as_object()
            .ok_or("not a perfgraph call-tree file (not a JSON object)")?;
        match top.get("format").and_then(Value::as_str) {
            Some("perfgraph-call-tree") => {}
            Some(other) => {
                return Err(format!(
                    "not a perfgraph call-tree file (format \"{other}\")"
                ));
            }
            None if top.contains_key("traceEvents") => {
                return Err("a trace, not a call-tree file (use `perfgraph merge --trace`)".into());
            }
            None => return Err("not a perfgraph call-tree file (no \"format\")".into()),
        }
        let version = u64_of(top, "version", "")?;
        if version != u64::from(VERSION) {
            return Err(format!(
                "version {version}; this perfgraph reads version {VERSION}"
            ));
        }
        let verbosity = match top.get("verbosity") {
            None | Some(Value::Null) => Verbosity::Off,
            Some(v) => Verbosity::Level(
                v.as_u64()
                    .and_then(|v| u8::try_from(v).ok())
                    .ok_or("\"verbosity\" is not a level")?,
            ),
        };
        let skipped = top
            .get("skipped_sections")
            .and_then(Value::as_array)
            .ok_or("no \"skipped_sections\" array")?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(intern)
                    .ok_or("\"skipped_sections\": not a string")
            })
            .collect::<Result<Vec<_>, _>>()?;
        let threads = top
            .get("threads")
            .and_then(Value::as_array)
            .ok_or("no \"threads\" array")?
            .iter()
            .enumerate()
            .map(|(i, t)| thread(t, i))
            .collect::<Result<Vec<_>, _>>()?;
        let tree_value = top.get("tree").ok_or("no \"tree\"")?;
        let (tree, spread) = tree(tree_value, "tree")?;
        if tree.nodes.is_empty() {
            return Err("\"tree\" has no root".into());
        }
        let merged = match top.get("processes") {
            None | Some(Value::Null) => None,
            Some(list) => Some(Merged {
                processes: list
                    .as_array()
                    .ok_or("\"processes\" is not an array")?
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        p.as_object()
                            .ok_or_else(|| format!("processes[{i}]: not an object"))
                            .and_then(|p| process(p, &format!("processes[{i}]: ")))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                spread: spread.ok_or("\"processes\" without the nodes' spread")?,
            }),
        };
        Ok(Report {
            program: intern(str_of(top, "program", "")?),
            clock: intern(str_of(top, "clock", "")?),
            wall_ns: u64_of(top, "wall_ns", "")?,
            tree,
            threads,
            dropped: u64_of(top, "dropped", "")?,
            needs_every_record: top
                .get("needs_every_record")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            verbosity,
            skipped,
            process: process(top, "")?,
            overhead_ns_per_section: top.get("overhead_ns_per_section").and_then(Value::as_f64),
            // Written with the allocation fields on every node, the root first.
            heap_counted: top
                .get("tree")
                .and_then(Value::as_array)
                .and_then(|t| t.first())
                .is_some_and(|root| root.get("allocs").is_some()),
            merged,
        })
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

fn u64_of(o: &Map<String, Value>, key: &str, at: &str) -> Result<u64, String> {
    o.get(key)
        .ok_or_else(|| format!("{at}no \"{key}\""))?
        .as_u64()
        .ok_or_else(|| format!("{at}\"{key}\" is not a whole number"))
}

/// A whole number that only some objects carry (async nodes' figures, a thread's `cpu_ns`): 0 when absent.
fn u64_or_0(o: &Map<String, Value>, key: &str, at: &str) -> Result<u64, String> {
    match o.get(key) {
        None => Ok(0),
        Some(_) => u64_of(o, key, at),
    }
}

fn i64_of(o: &Map<String, Value>, key: &str, at: &str) -> Result<i64, String> {
    o.get(key)
        .ok_or_else(|| format!("{at}no \"{key}\""))?
        .as_i64()
        .ok_or_else(|| format!("{at}\"{key}\" is not a whole number"))
}

fn bool_of(o: &Map<String, Value>, key: &str, at: &str) -> Result<bool, String> {
    o.get(key)
        .ok_or_else(|| format!("{at}no \"{key}\""))?
        .as_bool()
        .ok_or_else(|| format!("{at}\"{key}\" is not true or false"))
}

fn str_of<'a>(o: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str, String> {
    o.get(key)
        .ok_or_else(|| format!("{at}no \"{key}\""))?
        .as_str()
        .ok_or_else(|| format!("{at}\"{key}\" is not a string"))
}

/// A process's identity; absent fields (a file from before they existed) read as 0 and "".
fn process(o: &Map<String, Value>, _at: &str) -> Result<ProcessInfo, String> {
    let num = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(ProcessInfo {
        pid: num("pid") as u32,
        rank: num("rank") as u32,
        host: o
            .get("host")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        start_unix_ns: num("start_unix_ns"),
    })
}

fn thread(v: &Value, i: usize) -> Result<ThreadSummary, String> {
    let at = format!("threads[{i}]: ");
    let o = v.as_object().ok_or_else(|| format!("{at}not an object"))?;
    let (tree, _) = tree(
        o.get("tree").ok_or_else(|| format!("{at}no \"tree\""))?,
        &format!("threads[{i}].tree"),
    )?;
    Ok(ThreadSummary {
        index: u64_of(o, "index", &at)? as u32,
        name: str_of(o, "name", &at)?.to_owned(),
        is_main: bool_of(o, "main", &at)?,
        exited: bool_of(o, "exited", &at)?,
        alive_ns: u64_of(o, "alive_ns", &at)?,
        busy_ns: u64_of(o, "busy_ns", &at)?,
        calls: u64_of(o, "calls", &at)?,
        cpu_ns: u64_or_0(o, "cpu_ns", &at)?,
        dropped: u64_of(o, "dropped", &at)?,
        tree,
    })
}

/// A flat node array back into a tree (children from the parents), with the nodes' spread over
/// processes when every node has one.
fn tree(v: &Value, name: &str) -> Result<(CallTree, Option<Vec<Spread>>), String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("\"{name}\" is not an array"))?;
    let mut nodes: Vec<CallNode> = Vec::with_capacity(list.len());
    let mut spread: Vec<Spread> = Vec::new();
    for (i, n) in list.iter().enumerate() {
        let at = format!("{name}[{i}]: ");
        let o = n.as_object().ok_or_else(|| format!("{at}not an object"))?;
        let parent = match o.get("parent") {
            Some(Value::Null) if i == 0 => None,
            Some(p) => match p.as_u64() {
                Some(p) if (p as usize) < i => Some(p as usize),
                _ => return Err(format!("{at}\"parent\" is not an earlier node")),
            },
            None => return Err(format!("{at}no \"parent\"")),
        };
        if let Some(p) = parent {
            nodes[p].children.push(i);
        }
        if let Some(s) = o.get("processes").and_then(Value::as_object) {
            let at = format!("{at}processes: ");
            spread.push(Spread {
                processes: u64_of(s, "count", &at)? as u32,
                min_ns: u64_of(s, "min_ns", &at)?,
                sum_ns: u64_of(s, "sum_ns", &at)?,
                max_ns: u64_of(s, "max_ns", &at)?,
                max_rank: u64_of(s, "max_rank", &at)? as u32,
            });
        }
        nodes.push(CallNode {
            section: u64_of(o, "section", &at)? as u32,
            name: intern(str_of(o, "name", &at)?),
            level: u64_of(o, "level", &at)? as u8,
            depth: u64_of(o, "depth", &at)? as u32,
            parent,
            children: Vec::new(),
            calls: u64_of(o, "calls", &at)?,
            running: u64_of(o, "running", &at)?,
            self_ns: u64_of(o, "self_ns", &at)?,
            total_ns: u64_of(o, "total_ns", &at)?,
            self_mem_bytes: i64_of(o, "self_mem_bytes", &at)?,
            total_mem_bytes: i64_of(o, "total_mem_bytes", &at)?,
            polls: u64_or_0(o, "polls", &at)?,
            wall_ns: u64_or_0(o, "wall_ns", &at)?,
            max_wall_ns: u64_or_0(o, "max_wall_ns", &at)?,
            cancelled: u64_or_0(o, "cancelled", &at)?,
            latency: latency(o, &at)?,
            allocs: u64_or_0(o, "allocs", &at)?,
            alloc_bytes: u64_or_0(o, "alloc_bytes", &at)?,
            self_allocs: u64_or_0(o, "self_allocs", &at)?,
            self_alloc_bytes: u64_or_0(o, "self_alloc_bytes", &at)?,
            heap_growth_bytes: match o.get("heap_growth_bytes") {
                None => 0,
                Some(_) => i64_of(o, "heap_growth_bytes", &at)?,
            },
            heap_peak_bytes: u64_or_0(o, "heap_peak_bytes", &at)?,
            cpu: match o.get("cpu_ns") {
                None => None,
                Some(_) => Some(CpuTime {
                    cpu_ns: u64_of(o, "cpu_ns", &at)?,
                    self_cpu_ns: u64_of(o, "self_cpu_ns", &at)?,
                }),
            },
        });
    }
    let spread = (!nodes.is_empty() && spread.len() == nodes.len()).then_some(spread);
    Ok((CallTree { nodes }, spread))
}

/// A node's histogram (absent or null: none).
fn latency(o: &Map<String, Value>, at: &str) -> Result<Latency, String> {
    let h = match o.get("histogram") {
        None | Some(Value::Null) => return Ok(Latency::default()),
        Some(h) => h
            .as_object()
            .ok_or_else(|| format!("{at}\"histogram\" is not an object"))?,
    };
    let sub = u64_of(h, "sub_buckets", at)?;
    if sub != buckets::SUB as u64 {
        return Err(format!(
            "{at}histogram of {sub} sub-buckets; this perfgraph reads {}",
            buckets::SUB
        ));
    }
    let bad = || format!("{at}histogram \"buckets\": not [bucket, calls] pairs in bucket order");
    let mut out: Vec<(u32, u64)> = Vec::new();
    for pair in h.get("buckets").and_then(Value::as_array).ok_or_else(bad)? {
        let (b, n) = match pair.as_array().map(Vec::as_slice) {
            Some([b, n]) => (b.as_u64().ok_or_else(bad)?, n.as_u64().ok_or_else(bad)?),
            _ => return Err(bad()),
        };
        if b >= buckets::BUCKETS as u64 || out.last().is_some_and(|l| u64::from(l.0) >= b) {
            return Err(bad());
        }
        if n > 0 {
            out.push((b as u32, n));
        }
    }
    Ok(Latency {
        count: out.iter().map(|b| b.1).sum(),
        min_ns: u64_of(o, "min_ns", at)?,
        max_ns: u64_of(o, "max_ns", at)?,
        buckets: out,
    })
}
