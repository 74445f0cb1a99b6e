//! The end-of-run reports (MOOSE's PerfGraphOutput) as plain values: [`report()`] takes a [`Report`] at any
//! time, and its rendering functions turn it into text without touching the runtime, so the same data always
//! gives the same text (the golden tests rely on it).
//!
//! * `graph`: `Performance Graph:`, a row per call path of all threads merged, under a root row named after
//!   the program whose total is the run's wall time;
//! * `branch`: `Heaviest Branch:`, the same columns along the child with the largest total at each level;
//! * `sections[=N]`: `Heaviest Sections:`, self time summed per section name;
//! * `threads`: `Threads:`, per thread its time alive, time inside top-level sections and calls.

pub(crate) mod interval;
pub(crate) mod table;

use std::fmt;
use std::sync::OnceLock;

use crate::config::ReportSelection;
use crate::guard::Verbosity;
use crate::inspect::{self, CallTree, ThreadSnapshot};
use crate::{clock, guard, memory, runtime};
use table::Cell;

/// Deepest call path the tables show, in levels below the root (MOOSE's stack holds 100). A recursion
/// thousands of calls deep would otherwise print millions of characters of indentation.
pub const TABLE_DEPTH: u32 = 100;

/// What was recorded so far, ready to print: the merged call tree under a root for the whole program, and a
/// summary per thread.
///
/// `Display` prints the `Performance Graph:` table and its footer lines.
///
/// ```
/// use perfgraph_core::{report, timed};
///
/// #[timed]
/// fn assemble() {}
///
/// for _ in 0..3 {
///     assemble();
/// }
/// let r = report();
/// assert_eq!(r.tree.find(&["assemble"]).unwrap().calls, 3);
/// assert_eq!(r.tree.root().total_ns, r.wall_ns);
/// let table = r.to_string();
/// assert!(table.starts_with("Performance Graph:\n"));
/// assert!(table.lines().any(|l| l.starts_with("|   assemble ")));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The program's name (the file name of `argv[0]`): the root row's name.
    pub program: &'static str,
    /// The clock the times come from (`"tsc"` or `"CLOCK_MONOTONIC"`; `"manual"` in this crate's
    /// deterministic tests).
    pub clock: &'static str,
    /// Wall time of the run so far, ns: from the runtime's start (the first recorded section or the first
    /// call into perfgraph) to this report.
    pub wall_ns: u64,
    /// All threads merged by call path (a section under two parents is two nodes). The root stands for the
    /// whole program: 1 call, `total_ns == wall_ns`, `self_ns` the wall time the main thread spent outside
    /// sections, `total_mem_bytes` the change of the resident set since the start and `self_mem_bytes` that
    /// minus the top-level sections' changes. With one thread this is MOOSE's `self = total - children`;
    /// with several, the children's times add up over threads and can exceed the wall time.
    pub tree: CallTree,
    /// One entry per thread that recorded, in order of first section.
    pub threads: Vec<ThreadSummary>,
    /// Section records lost to ring overflow, all threads. Counts and times are exact regardless; only the
    /// outputs that need every call (trace, interval statistics) lack them.
    pub dropped: u64,
    /// Whether an output that needs every call (the trace, interval statistics) is on, so records lost to
    /// overflow are missing from it. Without one, the background thread drains the rings only now and then
    /// and lets a busy thread's ring wrap: the footer still states the count, and says nothing needed those
    /// records. `true` from [`Report::build`]; [`report`] sets it from the settings.
    pub every_record_needed: bool,
    /// The verbosity in force: sections above it are not recorded.
    pub verbosity: Verbosity,
    /// Sections reached at least once while their level was above the verbosity, by name, in the order
    /// first seen: some or all of their calls are absent. Empty from [`Report::build`]; [`report`] fills it
    /// from the registry.
    pub skipped: Vec<&'static str>,
}

/// One thread's line in the `threads` report.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSummary {
    /// Dense number in order of first section.
    pub index: u32,
    /// The thread's name (`thread-<n>` for unnamed threads).
    pub name: String,
    /// Whether this is the process's main thread.
    pub is_main: bool,
    /// Whether the thread has exited.
    pub exited: bool,
    /// Wall time from its first section to its exit (or to the report while it runs), ns.
    pub alive_ns: u64,
    /// Time inside its top-level sections, ns (running ones up to the report).
    pub busy_ns: u64,
    /// Section calls on this thread, all depths.
    pub calls: u64,
    /// Its records lost to ring overflow.
    pub dropped: u64,
    /// Its own call tree (node 0 is the thread's root, `(root)`, whose total is `busy_ns`).
    pub tree: CallTree,
}

/// One line of `Heaviest Sections:`: every call path of a section name, summed.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionTotal {
    /// The section's name (the program's name for the root).
    pub name: &'static str,
    /// Calls, all paths.
    pub calls: u64,
    /// Self time, all paths, ns.
    pub self_ns: u64,
    /// Self memory change, all paths, bytes.
    pub self_mem_bytes: i64,
}

/// Takes a report of everything recorded so far, while threads keep running: counts are exact, and running
/// sections count with their time so far.
pub fn report() -> Report {
    runtime::ensure_init();
    let (threads, scale) = inspect::snapshot_all();
    // After the snapshot, so the wall time covers every time in it; with the snapshot's conversion, so the
    // two compare.
    let wall_ns = scale.to_ns(clock::now());
    let rss_kb = memory::current_kb() as i64 - runtime::start_rss_kb() as i64;
    let mut report = Report::build(
        program_name(),
        clock::source().name(),
        wall_ns,
        rss_kb * 1024,
        &threads,
        guard::verbosity(),
    );
    report.every_record_needed = runtime::config().needs_every_record();
    report.skipped = crate::registry::skipped().iter().map(|s| s.name).collect();
    report
}

/// The program's name: the file name of `argv[0]`, read once.
pub(crate) fn program_name() -> &'static str {
    static NAME: OnceLock<&'static str> = OnceLock::new();
    NAME.get_or_init(|| {
        let name = std::env::args_os()
            .next()
            .and_then(|a| {
                std::path::Path::new(&a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "program".to_owned());
        Box::leak(name.into_boxed_str())
    })
}

impl Report {
    /// Builds a report from thread snapshots (pure: the same input gives the same report).
    ///
    /// `wall_ns` is the run's wall time at the snapshot (on the same base as the snapshots' times) and
    /// `rss_change_bytes` the resident-memory change since the start.
    pub fn build(
        program: &'static str,
        clock: &'static str,
        wall_ns: u64,
        rss_change_bytes: i64,
        threads: &[ThreadSnapshot],
        verbosity: Verbosity,
    ) -> Report {
        let mut tree = inspect::merge(threads.iter().map(|t| &t.tree));
        let children_mem: i64 = tree.nodes[0]
            .children
            .iter()
            .map(|&c| tree.nodes[c].total_mem_bytes)
            .sum();
        // The main thread's time outside sections (all of the run if it recorded nothing).
        let main_in_sections = threads
            .iter()
            .find(|t| t.is_main)
            .map_or(0, |t| t.tree.root().total_ns);
        let root = &mut tree.nodes[0];
        root.name = program;
        root.calls = 1;
        root.total_ns = wall_ns;
        root.self_ns = wall_ns.saturating_sub(main_in_sections);
        root.total_mem_bytes = rss_change_bytes;
        root.self_mem_bytes = rss_change_bytes - children_mem;
        let summaries = threads
            .iter()
            .map(|t| ThreadSummary {
                index: t.index,
                name: t.name.clone(),
                is_main: t.is_main,
                exited: t.exited_ns.is_some(),
                alive_ns: t.exited_ns.unwrap_or(wall_ns).saturating_sub(t.started_ns),
                busy_ns: t.tree.root().total_ns,
                calls: t.tree.nodes.iter().skip(1).map(|n| n.calls).sum(),
                dropped: t.dropped,
                tree: t.tree.clone(),
            })
            .collect();
        Report {
            program,
            clock,
            wall_ns,
            tree,
            threads: summaries,
            dropped: threads.iter().map(|t| t.dropped).sum(),
            every_record_needed: true,
            verbosity,
            skipped: Vec::new(),
        }
    }

    /// `100 * ns / root total`, 0 for an empty run.
    pub fn percent(&self, ns: u64) -> f64 {
        match self.tree.root().total_ns {
            0 => 0.0,
            total => 100.0 * ns as f64 / total as f64,
        }
    }

    /// The heaviest branch: from the root, the child with the largest total time at each level (the first
    /// one on a tie), as node indices into [`tree`](Report::tree).
    pub fn heaviest_branch(&self) -> Vec<usize> {
        let mut out = vec![0usize];
        let mut at = 0usize;
        loop {
            let mut best: Option<usize> = None;
            for &c in &self.tree.nodes[at].children {
                if best.is_none_or(|b| self.tree.nodes[c].total_ns > self.tree.nodes[b].total_ns) {
                    best = Some(c);
                }
            }
            let Some(b) = best else { break };
            out.push(b);
            at = b;
        }
        out
    }

    /// The `n` sections with the most self time, every call path of a name summed (the root included, as
    /// MOOSE does), heaviest first; equal self times in order of name.
    pub fn heaviest_sections(&self, n: usize) -> Vec<SectionTotal> {
        let mut by_name: Vec<SectionTotal> = Vec::new();
        let mut index: std::collections::HashMap<(&str, bool), usize> = Default::default();
        for (i, node) in self.tree.nodes.iter().enumerate() {
            // The root keeps its own entry even if a section has the program's name.
            let key = (node.name, i == 0);
            let at = *index.entry(key).or_insert_with(|| {
                by_name.push(SectionTotal {
                    name: node.name,
                    calls: 0,
                    self_ns: 0,
                    self_mem_bytes: 0,
                });
                by_name.len() - 1
            });
            let s = &mut by_name[at];
            s.calls += node.calls;
            s.self_ns += node.self_ns;
            s.self_mem_bytes += node.self_mem_bytes;
        }
        by_name.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(a.name.cmp(b.name)));
        by_name.truncate(n);
        by_name
    }

    /// The `Performance Graph:` table (without its heading). Call paths deeper than [`TABLE_DEPTH`] are
    /// left out (the footer counts them).
    pub fn graph_table(&self) -> String {
        let rows: Vec<usize> = (0..self.tree.nodes.len())
            .filter(|&i| self.tree.nodes[i].depth <= TABLE_DEPTH)
            .collect();
        self.tree_table(&rows)
    }

    /// The `Heaviest Branch:` table (without its heading), down to [`TABLE_DEPTH`].
    pub fn branch_table(&self) -> String {
        let mut rows = self.heaviest_branch();
        rows.truncate(TABLE_DEPTH as usize + 1);
        self.tree_table(&rows)
    }

    fn tree_table(&self, rows: &[usize]) -> String {
        const HEADERS: [&str; 10] = [
            "Section", "Calls", "Self(s)", "Avg(s)", "%", "Mem(MB)", "Total(s)", "Avg(s)", "%",
            "Mem(MB)",
        ];
        let rows: Vec<Vec<Cell>> = rows
            .iter()
            .map(|&i| {
                let n = &self.tree.nodes[i];
                vec![
                    Cell::Text(format!("{}{}", "  ".repeat(n.depth as usize), n.name)),
                    Cell::Int(n.calls as i64),
                    Cell::Fixed(seconds(n.self_ns), 3),
                    Cell::Fixed(average(n.self_ns, n.calls), 3),
                    Cell::Percent(self.percent(n.self_ns)),
                    Cell::Int(megabytes(n.self_mem_bytes)),
                    Cell::Fixed(seconds(n.total_ns), 3),
                    Cell::Fixed(average(n.total_ns, n.calls), 3),
                    Cell::Percent(self.percent(n.total_ns)),
                    Cell::Int(megabytes(n.total_mem_bytes)),
                ]
            })
            .collect();
        table::render(&HEADERS, &rows)
    }

    /// The `Heaviest Sections:` table for the `n` heaviest (without its heading).
    pub fn sections_table(&self, n: usize) -> String {
        let rows: Vec<Vec<Cell>> = self
            .heaviest_sections(n)
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(s.name.to_owned()),
                    Cell::Int(s.calls as i64),
                    Cell::Fixed(seconds(s.self_ns), 3),
                    Cell::Fixed(average(s.self_ns, s.calls), 3),
                    Cell::Percent(self.percent(s.self_ns)),
                    Cell::Int(megabytes(s.self_mem_bytes)),
                ]
            })
            .collect();
        table::render(
            &["Section", "Calls", "Self(s)", "Avg.", "%", "Mem(MB)"],
            &rows,
        )
    }

    /// The `Threads:` table (without its heading): per thread, wall time alive, time inside top-level
    /// sections and its share of the time alive, and calls.
    pub fn threads_table(&self) -> String {
        let rows: Vec<Vec<Cell>> = self
            .threads
            .iter()
            .map(|t| {
                let pct = match t.alive_ns {
                    0 => 0.0,
                    alive => 100.0 * t.busy_ns as f64 / alive as f64,
                };
                vec![
                    Cell::Text(t.name.clone()),
                    Cell::Fixed(seconds(t.alive_ns), 3),
                    Cell::Fixed(seconds(t.busy_ns), 3),
                    Cell::Percent(pct),
                    Cell::Int(t.calls as i64),
                ]
            })
            .collect();
        table::render(
            &["Thread", "Alive(s)", "In sections(s)", "%", "Calls"],
            &rows,
        )
    }

    /// Lines stating what the tables do not show: sections skipped for their level, records lost to ring
    /// overflow, call paths too deep for the table, calls still running. Empty when there is nothing to say.
    pub fn footer(&self) -> String {
        let mut out = String::new();
        let n = self.skipped.len();
        if n > 0 {
            const SHOWN: usize = 8;
            let mut names = self.skipped[..n.min(SHOWN)].join(", ");
            if n > SHOWN {
                names.push_str(&format!(" and {} more", n - SHOWN));
            }
            let now = match self.verbosity {
                Verbosity::Level(v) => v.to_string(),
                Verbosity::Off => "off".to_owned(),
            };
            out.push_str(&format!(
                "Not recorded: {n} section{} skipped by the verbosity (now {now}): {names}; \
                 PERFGRAPH_VERBOSITY=3 records every level.\n",
                if n == 1 { "" } else { "s" },
            ));
        }
        if self.dropped > 0 {
            let per_thread: Vec<String> = self
                .threads
                .iter()
                .filter(|t| t.dropped > 0)
                .map(|t| format!("{} {}", t.name, t.dropped))
                .collect();
            let consequence = if self.every_record_needed {
                "the counts, times and memory above are exact, the trace and interval statistics lack \
                 those calls"
            } else {
                "the counts, times and memory above are exact (they never go through the rings), and no \
                 output needed those records"
            };
            out.push_str(&format!(
                "Dropped: {} section records lost to ring overflow ({}); {consequence}.\n",
                self.dropped,
                per_thread.join(", ")
            ));
        }
        let deep = self
            .tree
            .nodes
            .iter()
            .filter(|n| n.depth > TABLE_DEPTH)
            .count();
        if deep > 0 {
            out.push_str(&format!(
                "Not shown: {deep} call paths deeper than {TABLE_DEPTH} levels (they are in the JSON and \
                 folded exports).\n"
            ));
        }
        let running: u64 = self.tree.nodes.iter().skip(1).map(|n| n.running).sum();
        if running > 0 {
            out.push_str(&format!(
                "Running: {running} calls had not ended; their time so far is included.\n"
            ));
        }
        out
    }

    /// The reports `selection` asks for, as printed at exit: for each, a blank line, its heading and its
    /// table (MOOSE's order: graph, branch, sections; then threads), then the footer lines. Empty when
    /// nothing is selected.
    pub fn render(&self, selection: &ReportSelection) -> String {
        if selection.is_empty() {
            return String::new();
        }
        let mut out = String::from("\n");
        if selection.graph {
            out.push_str("\nPerformance Graph:\n");
            out.push_str(&self.graph_table());
        }
        if selection.branch {
            out.push_str("\nHeaviest Branch:\n");
            out.push_str(&self.branch_table());
        }
        if let Some(n) = selection.sections {
            out.push_str("\nHeaviest Sections:\n");
            out.push_str(&self.sections_table(n));
        }
        if selection.threads {
            out.push_str("\nThreads:\n");
            out.push_str(&self.threads_table());
        }
        out.push_str(&self.footer());
        out
    }

    /// Folded stacks (`outer;inner;leaf <self ns>`), the input of inferno and flamegraph.pl.
    pub fn folded(&self) -> String {
        crate::export::folded::render(&self.tree)
    }

    /// The call tree as JSON (schema in `docs/json-schema.md`).
    pub fn json(&self) -> String {
        crate::export::json::render(self)
    }
}

impl fmt::Display for Report {
    /// `Performance Graph:`, the table, and the footer lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Performance Graph:\n{}{}",
            self.graph_table(),
            self.footer()
        )
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn average(ns: u64, calls: u64) -> f64 {
    if calls == 0 {
        0.0
    } else {
        seconds(ns) / calls as f64
    }
}

/// Decimal megabytes, truncated toward zero (MOOSE's `convertBytes`).
fn megabytes(bytes: i64) -> i64 {
    bytes / 1_000_000
}
