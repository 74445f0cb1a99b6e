//! The call tree as JSON (`PERFGRAPH_JSON`). The schema is in `docs/json-schema.md`; the `version` field
//! changes when a field changes meaning or goes away (new fields may appear within a version).
//!
//! Trees are flat arrays of nodes in depth-first order, each naming its parent, rather than nested objects:
//! a recursion thousands of calls deep stays a valid document that every JSON parser reads (most stop
//! at a nesting depth of 128 to 1000), and writing it needs no recursion either.
//!
//! The document is written as it is rendered, node by node, straight from the report's trees: no value of
//! the whole document and no string of it is ever built, so writing it at exit takes a fixed few hundred
//! bytes besides the trees, however many threads and nodes they hold. The layout is serde_json's pretty
//! printer's (two-space indent, `"key": value`, `[]` for an empty array), with the members of each object
//! in the order of their names; strings are escaped by serde_json itself.

use std::fmt::Display;
use std::io::{self, Write};

use crate::base::config::Verbosity;
use crate::base::{buckets, process, registry};
use crate::data::combine::Merger;
use crate::data::counters::CounterStats;
use crate::data::figures::CpuFigures;
use crate::data::latency::Latency;
use crate::data::node_figures::Value;
use crate::data::report::{self, ProcessInfo, ProcessSpread, Report, RunInfo, ThreadSummary};
use crate::data::thread_snapshot::ThreadSnapshot;
use crate::data::tree::CallTree;
use crate::export::json_rows::{COUNTER_FIELDS, Cell, Field, LOCK_FIELDS, THREAD_FIELDS};

impl Report {
    /// The call tree as JSON (schema in `docs/json-schema.md`).
    ///
    /// ```
    /// use perfgraph_core::{report, timed};
    ///
    /// #[timed]
    /// fn assemble() {}
    ///
    /// assemble();
    /// let json = report().json();
    /// assert!(json.starts_with("{\n  \"clock\": "));
    /// assert!(json.contains("\"name\": \"assemble\""));
    /// ```
    pub fn json(&self) -> String {
        let mut bytes = Vec::new();
        // Writing to a `Vec` cannot fail.
        let _ = write(&mut bytes, self);
        String::from_utf8(bytes).unwrap_or_default()
    }

    /// Writes [`json`](Report::json)'s document to `out` as it is rendered, node by node, without
    /// building it in memory first (give a buffered writer: it writes in small pieces). Stops at the
    /// first write that fails and returns its error.
    ///
    /// ```
    /// use perfgraph_core::{report, timed};
    ///
    /// #[timed]
    /// fn assemble() {}
    ///
    /// assemble();
    /// let r = report();
    /// let mut bytes = Vec::new();
    /// r.write_json(&mut bytes).unwrap();
    /// assert_eq!(String::from_utf8(bytes).unwrap(), r.json());
    /// ```
    pub fn write_json(&self, mut out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        // `&mut W` is a sized `Write` for any `W`, a trait object too.
        write(&mut out, self)
    }
}

/// Schema version written in the `version` field.
pub(crate) const VERSION: u32 = 1;

/// Writes `report` as pretty-printed JSON, ending with a line break. Reports [`process::progress`] every
/// few thousand nodes and threads.
pub(crate) fn write(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    write_with(out, report, None)
}

/// [`write()`], with the run's `critical_path` member (`PERFGRAPH_REPORT=critical`), made at exit.
pub(crate) fn write_with(
    out: &mut dyn Write,
    report: &Report,
    critical_path: Option<&serde_json::Value>,
) -> io::Result<()> {
    let mut p = Pretty::new(out);
    head(
        &mut p,
        &Head {
            clock: report.run.clock,
            critical_path,
            counters: &report.run.counters,
            locks: &report.run.locks,
            dropped: report.dropped,
            program: report.run.program,
            skipped: &report.run.skipped,
            needs_every_record: report.run.needs_every_record,
            process: &report.run.process,
            overhead_ns_per_section: report.run.overhead_ns_per_section,
            processes: report.merged.as_ref().map(|m| &m.processes[..]),
        },
    )?;
    for (i, t) in report.threads.iter().enumerate() {
        process::progress_at(i);
        thread(&mut p, t, report.run.heap_counted)?;
    }
    let spread = report.merged.as_ref().map(|m| &m.spread[..]);
    tail(
        &mut p,
        &report.tree,
        spread,
        report.run.verbosity,
        report.run.wall_ns,
        report.run.heap_counted,
    )
}

/// Writes the JSON of the report that `run` and the threads' snapshots make
/// ([`Report::from_snapshots`]), byte for byte, without making that report: each thread's tree is written
/// and then handed to the merge, which takes the first one whole, so the process holds each tree once
/// (a report holds the threads' trees and the merged tree at the same time: twice the nodes of a
/// single-thread program). Reports [`process::progress`] every few thousand nodes and threads.
pub(crate) fn write_snapshots(
    out: &mut dyn Write,
    run: RunInfo,
    threads: Vec<ThreadSnapshot>,
    critical_path: Option<&serde_json::Value>,
) -> io::Result<()> {
    let mut p = Pretty::new(out);
    let dropped = threads.iter().map(|t| t.dropped).sum();
    let main_in_sections = report::main_in_sections(&threads);
    head(
        &mut p,
        &Head {
            clock: run.clock,
            critical_path,
            counters: &run.counters,
            locks: &run.locks,
            dropped,
            program: run.program,
            skipped: &run.skipped,
            needs_every_record: run.needs_every_record,
            process: &run.process,
            overhead_ns_per_section: run.overhead_ns_per_section,
            processes: None,
        },
    )?;
    let mut merger = Merger::new();
    for (i, t) in threads.into_iter().enumerate() {
        process::progress_at(i);
        let summary = ThreadSummary::from_snapshot(t, run.wall_ns);
        thread(&mut p, &summary, run.heap_counted)?;
        merger.add_owned(summary.tree);
    }
    let tree = report::program_tree(&run, merger.finish(), main_in_sections);
    tail(
        &mut p,
        &tree,
        None,
        run.verbosity,
        run.wall_ns,
        run.heap_counted,
    )
}

/// A float as JSON: a number, or a string for one that is not finite (JSON has no NaN).
fn number(p: &mut Pretty, v: f64) -> io::Result<()> {
    if v.is_finite() {
        serde_json::to_writer(&mut *p.out, &v).map_err(io::Error::from)
    } else {
        serde_json::to_writer(&mut *p.out, &v.to_string()).map_err(io::Error::from)
    }
}

/// What the members before the threads' say.
struct Head<'a> {
    clock: &'a str,
    critical_path: Option<&'a serde_json::Value>,
    counters: &'a [CounterStats],
    locks: &'a [crate::data::locks::LockStats],
    dropped: u64,
    program: &'a str,
    skipped: &'a [&'a str],
    needs_every_record: bool,
    process: &'a ProcessInfo,
    overhead_ns_per_section: Option<f64>,
    /// A merge's processes.
    processes: Option<&'a [ProcessInfo]>,
}

/// The members before the threads' (in the order of their names), and the threads' array opened.
fn head(p: &mut Pretty, h: &Head) -> io::Result<()> {
    p.open(b'{')?;
    p.string("clock", h.clock)?;
    if !h.counters.is_empty() {
        p.key("counters")?;
        p.open(b'{')?;
        for c in h.counters {
            // A name is the program's: escaped, as any string.
            p.item()?;
            p.escaped(&c.name)?;
            p.out.write_all(b": ")?;
            p.open(b'{')?;
            row(p, COUNTER_FIELDS, c)?;
            p.close(b'}')?;
        }
        p.close(b'}')?;
    }
    if let Some(v) = h.critical_path {
        p.key("critical_path")?;
        p.json(v)?;
    }
    p.raw("dropped", h.dropped)?;
    p.string("format", "perfgraph-call-tree")?;
    p.string("host", &h.process.host)?;
    if !h.locks.is_empty() {
        p.key("locks")?;
        p.open(b'[')?;
        for l in h.locks {
            p.item()?;
            p.open(b'{')?;
            row(p, LOCK_FIELDS, l)?;
            p.close(b'}')?;
        }
        p.close(b']')?;
    }
    p.raw("needs_every_record", h.needs_every_record)?;
    match h.overhead_ns_per_section {
        Some(ns) => {
            p.key("overhead_ns_per_section")?;
            serde_json::to_writer(&mut *p.out, &ns).map_err(io::Error::from)?;
        }
        None => p.raw("overhead_ns_per_section", "null")?,
    }
    p.raw("pid", h.process.pid)?;
    if let Some(processes) = h.processes {
        p.key("processes")?;
        p.open(b'[')?;
        for q in processes {
            p.item()?;
            p.open(b'{')?;
            p.string("host", &q.host)?;
            p.raw("pid", q.pid)?;
            p.raw("rank", q.rank)?;
            p.raw("start_unix_ns", q.start_unix_ns)?;
            p.close(b'}')?;
        }
        p.close(b']')?;
    }
    p.string("program", h.program)?;
    p.raw("rank", h.process.rank)?;
    p.key("skipped_sections")?;
    p.open(b'[')?;
    for name in h.skipped {
        p.item()?;
        p.escaped(name)?;
    }
    p.close(b']')?;
    p.raw("start_unix_ns", h.process.start_unix_ns)?;
    p.key("threads")?;
    p.open(b'[')
}

/// One element of the threads' array.
fn thread(p: &mut Pretty, t: &ThreadSummary, heap: bool) -> io::Result<()> {
    p.item()?;
    p.open(b'{')?;
    row(p, THREAD_FIELDS, t)?;
    p.key("tree")?;
    nodes(p, &t.tree, None, heap)?;
    p.close(b'}')
}

/// A row's fields (`export/json_rows.rs`), in the order of their keys.
fn row<T>(p: &mut Pretty, fields: &[Field<T>], r: &T) -> io::Result<()> {
    let mut last = "";
    while let Some(f) = fields.iter().filter(|f| f.key > last).min_by_key(|f| f.key) {
        last = f.key;
        match (f.get)(r) {
            Cell::Whole(v) => p.raw(f.key, v)?,
            Cell::Float(v) => {
                p.key(f.key)?;
                number(p, v)?;
            }
            Cell::Flag(v) => p.raw(f.key, v)?,
            Cell::Text(v) => p.string(f.key, v)?,
        }
    }
    Ok(())
}

/// The threads' array closed, the members after it, the document closed.
fn tail(
    p: &mut Pretty,
    tree: &CallTree,
    spread: Option<&[ProcessSpread]>,
    verbosity: Verbosity,
    wall_ns: u64,
    heap: bool,
) -> io::Result<()> {
    p.close(b']')?;
    p.key("tree")?;
    nodes(p, tree, spread, heap)?;
    match verbosity {
        Verbosity::Off => p.raw("verbosity", "null")?,
        Verbosity::Level(v) => p.raw("verbosity", v)?,
    }
    p.raw("version", VERSION)?;
    p.raw("wall_ns", wall_ns)?;
    p.close(b'}')?;
    p.out.write_all(b"\n")
}

/// A tree as an array of its nodes, in their order; with a merge's spread over processes, per node; with
/// the allocation fields if `heap` (the counting allocator was installed); with the CPU figures
/// ([`CpuFigures::written`]) on the nodes that measured their CPU time.
fn nodes(
    p: &mut Pretty,
    tree: &CallTree,
    spread: Option<&[ProcessSpread]>,
    heap: bool,
) -> io::Result<()> {
    p.open(b'[')?;
    for (i, n) in tree.nodes.iter().enumerate() {
        process::progress_at(i);
        p.item()?;
        p.open(b'{')?;
        // The figures (data/node_figures.rs, data/figures.rs) in their alphabetical places among the
        // structural keys written here.
        p.among(
            n.json_figures(heap).chain(
                n.cpu
                    .iter()
                    .flat_map(CpuFigures::written)
                    .map(|(k, v)| (k, Value::U(v))),
            ),
        );
        p.raw("depth", n.depth)?;
        let l = &n.latency;
        // No histogram: the figures drawn from it are null.
        let some = l.count > 0;
        let figure = |p: &mut Pretty, key: &str, ns: u64| match some {
            true => p.raw(key, ns),
            false => p.raw(key, "null"),
        };
        p.key("histogram")?;
        if some {
            histogram(p, l)?;
        } else {
            p.value("null")?;
        }
        p.raw("id", i)?;
        p.raw("level", n.level)?;
        figure(p, "max_ns", l.max_ns)?;
        figure(p, "min_ns", l.min_ns)?;
        p.string("name", n.name)?;
        figure(p, "p50_ns", l.percentile(50.0))?;
        figure(p, "p90_ns", l.percentile(90.0))?;
        figure(p, "p99_ns", l.percentile(99.0))?;
        match n.parent {
            None => p.raw("parent", "null")?,
            Some(parent) => p.raw("parent", parent)?,
        }
        if let Some(s) = spread.and_then(|s| s.get(i)) {
            p.key("processes")?;
            p.open(b'{')?;
            p.raw("count", s.processes)?;
            p.raw("max_ns", s.max_ns)?;
            p.raw("max_rank", s.max_rank)?;
            p.raw("min_ns", s.min_ns)?;
            p.raw("sum_ns", s.sum_ns)?;
            p.close(b'}')?;
        }
        p.raw("section", n.section)?;
        if let Some(target) = target(n.section, n.name) {
            p.string("target", target)?;
        }
        p.close(b'}')?;
    }
    p.close(b']')
}

/// Where section `section` named `name` comes from: its `tracing` target for a span recorded through
/// `TracingLayer`, its module path for `#[timed]` and `time_section!`. Known only in the process that
/// registered it (`None` for the root, and for a tree read back from a file: its ids are another
/// process's).
fn target(section: u32, name: &str) -> Option<&'static str> {
    let info = registry::info(section).filter(|_| section != 0)?;
    (info.name == name && !info.module_path.is_empty()).then_some(info.module_path)
}

/// A histogram: `{"buckets": [[bucket, calls], ...], "sub_buckets": 64}` (docs/json-schema.md).
fn histogram(p: &mut Pretty, l: &Latency) -> io::Result<()> {
    p.open(b'{')?;
    p.key("buckets")?;
    p.open(b'[')?;
    for &(b, n) in &l.buckets {
        p.item()?;
        p.open(b'[')?;
        p.item()?;
        p.value(b)?;
        p.item()?;
        p.value(n)?;
        p.close(b']')?;
    }
    p.close(b']')?;
    p.raw("sub_buckets", buckets::SUB)?;
    p.close(b'}')
}

/// serde_json's pretty layout, written as it goes: each object member or array element on a line of its
/// own, indented two spaces per level; a container closes on a line of its own unless it is empty.
struct Pretty<'a> {
    out: &'a mut dyn Write,
    /// Containers open.
    depth: usize,
    /// Whether the innermost open container has a member yet (the next one needs a comma first).
    has_value: bool,
    /// Members still to write among the object at depth `among_depth`, each before the first later key
    /// that sorts after it (or at its close): `(key, value)`, the last to write first.
    among: Vec<(&'static str, Value)>,
    /// The depth of the object `among` belongs to.
    among_depth: usize,
}

impl Pretty<'_> {
    fn new(out: &mut dyn Write) -> Pretty<'_> {
        Pretty {
            out,
            depth: 0,
            has_value: false,
            among: Vec::new(),
            among_depth: 0,
        }
    }

    /// Members of the object just opened that its writer does not name: each is written in its
    /// alphabetical place among the members the writer writes (`members` in any order).
    fn among(&mut self, members: impl Iterator<Item = (&'static str, Value)>) {
        self.among.clear();
        self.among.extend(members);
        self.among.sort_unstable_by(|a, b| b.0.cmp(a.0));
        self.among_depth = self.depth;
    }

    /// Writes the members of `among` that sort before `key` (all of them for `None`), if the current
    /// object is theirs.
    fn among_before(&mut self, key: Option<&str>) -> io::Result<()> {
        if self.depth != self.among_depth {
            return Ok(());
        }
        while let Some(&(k, v)) = self.among.last()
            && key.is_none_or(|key| k < key)
        {
            self.among.pop();
            self.member(k)?;
            self.value(v)?;
        }
        Ok(())
    }

    fn open(&mut self, bracket: u8) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        self.out.write_all(&[bracket])
    }

    fn close(&mut self, bracket: u8) -> io::Result<()> {
        self.among_before(None)?;
        self.depth -= 1;
        if self.has_value {
            self.newline()?;
        }
        // The container is a member of the one around it.
        self.has_value = true;
        self.out.write_all(&[bracket])
    }

    /// Starts an array element: the comma after the previous one, a new line, the indent.
    fn item(&mut self) -> io::Result<()> {
        if self.has_value {
            self.out.write_all(b",")?;
        }
        self.has_value = true;
        self.newline()
    }

    /// Starts an object member named `key` (a plain name, needing no escapes).
    fn key(&mut self, key: &str) -> io::Result<()> {
        self.among_before(Some(key))?;
        self.member(key)
    }

    /// Starts an object member named `key`, with nothing of `among` before it.
    fn member(&mut self, key: &str) -> io::Result<()> {
        self.item()?;
        write!(self.out, "\"{key}\": ")
    }

    /// A member whose value is written as is: a number, `true`/`false` or `null`.
    fn raw(&mut self, key: &str, value: impl Display) -> io::Result<()> {
        self.key(key)?;
        write!(self.out, "{value}")
    }

    /// A value written as is, after [`key`](Pretty::key) or [`item`](Pretty::item).
    fn value(&mut self, value: impl Display) -> io::Result<()> {
        write!(self.out, "{value}")
    }

    /// A member whose value is a string.
    fn string(&mut self, key: &str, value: &str) -> io::Result<()> {
        self.key(key)?;
        self.escaped(value)
    }

    /// Any JSON value, in the same layout: an object's members in the order of their names.
    fn json(&mut self, v: &serde_json::Value) -> io::Result<()> {
        use serde_json::Value as J;
        match v {
            J::Object(members) => {
                let mut members: Vec<_> = members.iter().collect();
                members.sort_unstable_by(|a, b| a.0.cmp(b.0));
                self.open(b'{')?;
                for (k, v) in members {
                    self.item()?;
                    self.escaped(k)?;
                    self.out.write_all(b": ")?;
                    self.json(v)?;
                }
                self.close(b'}')
            }
            J::Array(items) => {
                self.open(b'[')?;
                for v in items {
                    self.item()?;
                    self.json(v)?;
                }
                self.close(b']')
            }
            scalar => serde_json::to_writer(&mut *self.out, scalar).map_err(io::Error::from),
        }
    }

    /// A string value, quoted and escaped by serde_json.
    fn escaped(&mut self, value: &str) -> io::Result<()> {
        serde_json::to_writer(&mut *self.out, value).map_err(io::Error::from)
    }

    fn newline(&mut self) -> io::Result<()> {
        const SPACES: [u8; 32] = [b' '; 32];
        self.out.write_all(b"\n")?;
        let mut indent = 2 * self.depth;
        while indent > 0 {
            let n = indent.min(SPACES.len());
            self.out.write_all(&SPACES[..n])?;
            indent -= n;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
