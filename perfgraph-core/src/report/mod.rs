//! The end-of-run reports (MOOSE's PerfGraphOutput) as text: pure functions of a [`Report`], which never
//! touch the runtime, so the same data always gives the same text (the golden tests rely on it).
//!
//! * `graph`: `Performance Graph:`, a row per call path of all threads merged, under a root row named after
//!   the program whose total is the run's wall time;
//! * `branch`: `Heaviest Branch:`, the same columns along the child with the largest total at each level;
//! * `sections[=N]`: `Heaviest Sections:`, self time summed per section name;
//! * `latency`: `Latency:`, per section (the rows of `Heaviest Sections:`) its calls' durations: minimum,
//!   percentiles, maximum;
//! * `threads`: `Threads:`, per thread its time alive, time inside top-level sections, CPU time and calls;
//! * `async`: `Async Sections:`, per section of timed futures its futures, polls, busy and wall time, and
//!   cancellations;
//! * `alloc`: `Allocations:`, per section its allocations and bytes (inclusive and self) and its peak heap
//!   growth, as the counting allocator counted them (only when it was installed);
//! * `cpu`: `CPU:`, per section that measured its CPU time (the `cpu` option, `PERFGRAPH_CPU=all`) its
//!   time, CPU time and waiting time (the rest), children included;
//! * `Processes:` (a merge of many processes' runs only): per call path, its total time over the processes.

/// The `Critical Path:` table: of a timeline (a trace's, or the run's kept to its exit), not of a report.
pub(crate) mod critical;
mod grids;
pub(crate) mod html;
mod render;
pub(crate) mod table;

use std::fmt;

use crate::base::config::Verbosity;
use crate::base::text;
use crate::data::report::Report;

/// Deepest call path the tables show, in levels below the root (MOOSE's stack holds 100). A recursion
/// thousands of calls deep would otherwise print millions of characters of indentation.
pub const TABLE_DEPTH: u32 = 100;

/// Widest name a table shows, in terminal columns (without its indentation); longer names are cut with `…`
/// (the JSON and the trace keep them whole).
pub const NAME_WIDTH: usize = 80;

/// A section's or thread's name as a table shows it: control characters escaped, cut to [`NAME_WIDTH`].
fn shown(name: &str) -> String {
    text::fit(&text::escape(name), NAME_WIDTH).into_owned()
}

impl Report {
    /// The `Performance Graph:` table (without its heading). Call paths deeper than [`TABLE_DEPTH`] are
    /// left out (the footer counts them).
    pub fn graph_table(&self) -> String {
        self.graph_grid().text()
    }

    /// The `Heaviest Branch:` table (without its heading), down to [`TABLE_DEPTH`].
    pub fn branch_table(&self) -> String {
        self.branch_grid().text()
    }

    /// The `Heaviest Sections:` table for the `n` heaviest (without its heading).
    pub fn sections_table(&self, n: usize) -> String {
        self.sections_grid(n).text()
    }

    /// The `Latency:` table (without its heading): the sections of [`sections_table`](Report::sections_table)
    /// for `n`, in its order, with their completed calls' durations (all paths and threads merged); a
    /// section none of whose calls has a histogram (the program's row) is left out.
    pub fn latency_table(&self, n: usize) -> String {
        self.latency_grid(n).text()
    }

    /// The `Processes:` table (without its heading) of a merge of many processes' runs: per call path (as
    /// in the graph, down to [`TABLE_DEPTH`]), how many processes have it and the minimum, average and
    /// maximum of its total time over them, with the rank that had the maximum. Empty for one process's
    /// run.
    pub fn processes_table(&self) -> String {
        if self.merged.is_none() {
            return String::new();
        }
        self.processes_grid().text()
    }

    /// The `Threads:` table (without its heading): per thread, wall time alive, time inside top-level
    /// sections and its share of the time alive, CPU time and its share of the time alive, and calls.
    pub fn threads_table(&self) -> String {
        self.threads_grid().text()
    }

    /// The `Async Sections:` table (without its heading): per section of timed futures (`#[timed] async
    /// fn`, `time_future!`, `tracing` spans entered per poll), its futures (`Calls`), their polls, busy time
    /// (inside polls) in all and per poll (the mean), wall time summed and the longest, and how many were
    /// dropped before completing.
    pub fn async_table(&self) -> String {
        self.async_grid().text()
    }

    /// The `Allocations:` table (without its heading): per section, as the counting allocator
    /// (`CountingAllocator`) counted them, its calls, its allocations and their megabytes children
    /// included, the same made in the section itself, and the largest heap growth within one call.
    pub fn alloc_table(&self) -> String {
        self.alloc_grid().text()
    }

    /// The `CPU:` table (without its heading): per section that measured its CPU time, its calls, its time
    /// children included, the CPU time in it, the rest (waiting: blocked, sleeping, or ready for a core),
    /// and CPU time as a percentage of its time; then a column for each CPU figure that has one
    /// ([`CpuFigures`](crate::data::figures::CpuFigures)), where some row's is not 0.
    pub fn cpu_table(&self) -> String {
        self.cpu_grid().text()
    }

    /// `Counters:`: each `counter!` by name, its samples and the last, smallest, largest and mean value set
    /// (over every thread, and every process of a merge).
    pub fn counters_table(&self) -> String {
        self.counters_grid().text()
    }

    /// `Locks:`: each lock name of `perfgraph_core::sync` (every lock of that name, dropped ones too): its
    /// acquisitions, those that waited, the time waited and held (sums in seconds, maxima in ms), and the
    /// most threads that waited at once. By name.
    pub fn locks_table(&self) -> String {
        self.locks_grid().text()
    }

    /// Lines stating what the tables do not show: sections skipped for their level, records lost to ring
    /// overflow, call paths too deep for the table, calls still running. Empty when there is nothing to say.
    pub fn footer(&self) -> String {
        let mut out = String::new();
        let n = self.run.skipped.len();
        if n > 0 {
            const SHOWN: usize = 8;
            let mut names = self.run.skipped[..n.min(SHOWN)]
                .iter()
                .map(|name| shown(name))
                .collect::<Vec<_>>()
                .join(", ");
            if n > SHOWN {
                names.push_str(&format!(" and {} more", n - SHOWN));
            }
            let now = match self.run.verbosity {
                Verbosity::Level(v) => v.to_string(),
                Verbosity::Off => "off".to_owned(),
            };
            out.push_str(&format!(
                "Not recorded: {} skipped by the verbosity (now {now}): {names}; \
                 PERFGRAPH_VERBOSITY=3 records every level.\n",
                text::count(n as u64, "section"),
            ));
        }
        // Records lost to overflow matter only to an output that needs every record; otherwise the rings
        // wrap on purpose and the count is in the JSON alone.
        if self.dropped > 0 && self.run.needs_every_record {
            let per_thread: Vec<String> = self
                .threads
                .iter()
                .filter(|t| t.dropped > 0)
                .map(|t| format!("{} {}", shown(&t.name), t.dropped))
                .collect();
            out.push_str(&format!(
                "Dropped: {} lost to ring overflow ({}); the counts, times and memory \
                 above are exact, the trace and interval statistics lack those calls.\n",
                text::count(self.dropped, "section record"),
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
                "Not shown: {} deeper than {TABLE_DEPTH} levels ({} in the JSON and folded \
                 exports).\n",
                text::count(deep as u64, "call path"),
                if deep == 1 { "it is" } else { "they are" },
            ));
        }
        let cancelled: u64 = self.tree.nodes.iter().skip(1).map(|n| n.cancelled).sum();
        if cancelled > 0 {
            let mut sections: Vec<&str> = Vec::new();
            for n in self.tree.nodes.iter().skip(1).filter(|n| n.cancelled > 0) {
                if !sections.contains(&n.name) {
                    sections.push(n.name);
                }
            }
            let names: Vec<String> = sections.iter().map(|name| shown(name)).collect();
            out.push_str(&format!(
                "Cancelled: {} dropped before completing ({}); {} busy and wall time up \
                 to the drop is included.\n",
                text::count(cancelled, "future"),
                names.join(", "),
                if cancelled == 1 { "its" } else { "their" },
            ));
        }
        let running: u64 = self.tree.nodes.iter().skip(1).map(|n| n.running).sum();
        if running > 0 {
            out.push_str(&format!(
                "Running: {} had not ended; {} time so far is included.\n",
                text::count(running, "call"),
                if running == 1 { "its" } else { "their" },
            ));
        }
        if let Some(ns) = self.run.overhead_ns_per_section {
            let calls: u64 = self.tree.nodes.iter().skip(1).map(|n| n.calls).sum();
            let cost_s = ns * calls as f64 / 1e9;
            let (share, of) = instrumentation_share(self, cost_s * 1e9);
            out.push_str(&format!(
                "Instrumentation: {ns:.1} ns per section; {cost_s:.3} s over {} ({share:.2}% of \
                 {of})\n",
                text::count(calls, "call"),
            ));
        }
        out
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

/// The instrumentation's cost (`cost_ns`, summed over threads) as a share of what it was taken from, in
/// percent, and what that is: the CPU time of the threads that recorded (from each one's first section),
/// or where that cannot be read their time alive, or for a run without threads the wall time. A cost summed
/// over threads is never divided by one wall time, and the share never reads above 100%: the cost is a
/// floor measured on perfgraph's own thread, spent inside the time it is compared with.
fn instrumentation_share(r: &Report, cost_ns: f64) -> (f64, &'static str) {
    let cpu: u64 = r.threads.iter().map(|t| t.cpu_ns).sum();
    let alive: u64 = r.threads.iter().map(|t| t.alive_ns).sum();
    let (base, of) = if r.threads.iter().all(|t| t.cpu_ns > 0) && cpu > 0 {
        (cpu, "the recording threads' CPU time")
    } else if alive > 0 {
        (alive, "the recording threads' time alive")
    } else {
        (r.run.wall_ns, "the run")
    };
    let share = match base {
        0 => 0.0,
        base => (100.0 * cost_ns / base as f64).min(100.0),
    };
    (share, of)
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn millis(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn average(ns: u64, calls: u64) -> f64 {
    match calls {
        0 => 0.0,
        n => seconds(ns) / n as f64,
    }
}

/// Decimal megabytes, truncated toward zero (MOOSE's `convertBytes`).
fn megabytes(bytes: i64) -> i64 {
    bytes / 1_000_000
}
