//! The call tree as JSON (`PERFGRAPH_JSON`). The schema is in `docs/json-schema.md`; the `version` field
//! changes when a field changes meaning or goes away (new fields may appear within a version).
//!
//! Trees are flat arrays of nodes in depth-first order, each naming its parent, rather than nested objects:
//! a recursion thousands of calls deep stays a valid document that every JSON parser reads (most stop
//! at a nesting depth of 128 to 1000), and writing it needs no recursion either.

use serde_json::{Value, json};

use crate::base::config::Verbosity;
use crate::data::report::Report;
use crate::data::tree::CallTree;

impl Report {
    /// The call tree as JSON (schema in `docs/json-schema.md`).
    pub fn json(&self) -> String {
        render(self)
    }
}

/// Schema version written in the `version` field.
pub(crate) const VERSION: u32 = 1;

/// Renders `report` as pretty-printed JSON.
pub(crate) fn render(report: &Report) -> String {
    let threads: Vec<Value> = report
        .threads
        .iter()
        .map(|t| {
            json!({
                "index": t.index,
                "name": t.name,
                "main": t.is_main,
                "exited": t.exited,
                "alive_ns": t.alive_ns,
                "busy_ns": t.busy_ns,
                "calls": t.calls,
                "dropped": t.dropped,
                "tree": nodes(&t.tree),
            })
        })
        .collect();
    let value = json!({
        "format": "perfgraph-call-tree",
        "version": VERSION,
        "program": report.program,
        "clock": report.clock,
        "wall_ns": report.wall_ns,
        "verbosity": match report.verbosity {
            Verbosity::Off => Value::Null,
            Verbosity::Level(v) => json!(v),
        },
        "skipped_sections": report.skipped,
        "dropped": report.dropped,
        "tree": nodes(&report.tree),
        "threads": threads,
    });
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

fn nodes(tree: &CallTree) -> Vec<Value> {
    tree.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({
                "id": i,
                "parent": n.parent,
                "depth": n.depth,
                "name": n.name,
                "section": n.section,
                "level": n.level,
                "calls": n.calls,
                "running": n.running,
                "self_ns": n.self_ns,
                "total_ns": n.total_ns,
                "self_mem_bytes": n.self_mem_bytes,
                "total_mem_bytes": n.total_mem_bytes,
            })
        })
        .collect()
}
