//! A whole run's recording as plain values: the merged call tree under a root for the program, a summary
//! per thread, and what the tables cannot show. Built by a pure function of its inputs, so the same data
//! always gives the same report, text and files (the golden tests rely on it).

use super::combine::Merger;
use super::figures::{CpuFigures, Sum};
use super::latency::Latency;
use super::thread_snapshot::ThreadSnapshot;
use super::tree::CallTree;
use crate::base::config::Verbosity;
use crate::base::process;
use crate::data::counters::CounterStats;

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
/// assert_eq!(r.tree.root().total_ns, r.run.wall_ns);
/// let table = r.to_string();
/// assert!(table.starts_with("Performance Graph:\n"));
/// assert!(table.lines().any(|l| l.starts_with("|   assemble ")));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// What is known of the run besides its threads: the program, the clock, the wall time, the
    /// process, the settings that shape the tables (for a merge of many: the first run's, with the
    /// longest wall time).
    pub run: RunInfo,
    /// All threads combined by call path (a section under two parents is two nodes). The root stands for
    /// the whole program: 1 call, `total_ns == run.wall_ns`, `self_ns` the wall time the main thread spent
    /// outside sections, `total_mem_bytes` the change of the resident set since the start and
    /// `self_mem_bytes` that minus the top-level sections' changes. With one thread this is MOOSE's
    /// `self = total - children`; with several, the children's times add up over threads and can exceed
    /// the wall time.
    pub tree: CallTree,
    /// One entry per thread that recorded, in order of first section.
    pub threads: Vec<ThreadSummary>,
    /// Section records lost to ring overflow, all threads. Counts and times are exact regardless; only the
    /// outputs that need every call (trace, interval statistics) lack them.
    pub dropped: u64,
    /// For a merge of many processes' runs (`perfgraph merge`): the processes, and how the paths' times
    /// spread over them. `None` for one process's run.
    pub merged: Option<Merged>,
}

/// Which process a run was: what tells apart the files of the processes of one job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProcessInfo {
    /// The process id.
    pub pid: u32,
    /// Its rank: from the launcher's environment (`OMPI_COMM_WORLD_RANK`, `PMI_RANK`, `PMIX_RANK`,
    /// `SLURM_PROCID`, `RANK`, the first set), 0 without one.
    pub rank: u32,
    /// The machine's host name.
    pub host: String,
    /// Wall-clock time of the run's time zero (the start of `wall_ns`, and of the trace's timestamps), ns
    /// since the Unix epoch.
    pub start_unix_ns: u64,
}

/// What a merge of many processes' runs keeps besides the summed tree.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Merged {
    /// The processes merged, in the order given.
    pub processes: Vec<ProcessInfo>,
    /// Per node of the merged tree (same index): how its total time spread over the processes.
    pub spread: Vec<ProcessSpread>,
}

/// How one call path's total time spread over the processes of a merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProcessSpread {
    /// Processes that have the path.
    pub processes: u32,
    /// The smallest total time of one process, ns.
    pub min_ns: u64,
    /// The processes' total times summed, ns (divide by `processes` for the average).
    pub sum_ns: u64,
    /// The largest total time of one process, ns.
    pub max_ns: u64,
    /// The rank of the process with the largest (the first one given, on a tie).
    pub max_rank: u32,
}

impl ProcessSpread {
    /// The average total time over the processes that have the path, ns.
    pub fn avg_ns(&self) -> u64 {
        self.sum_ns
            .checked_div(u64::from(self.processes))
            .unwrap_or(0)
    }
}

/// One thread's line in the `threads` report.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ThreadSummary {
    /// Dense number in order of first section.
    pub index: u32,
    /// The thread's name (`worker#2` for the second thread named `worker`, `unnamed-<OS thread id>` for unnamed threads).
    pub name: String,
    /// Whether this is the process's main thread.
    pub is_main: bool,
    /// Whether the thread has exited.
    pub exited: bool,
    /// Wall time from its first section to its exit (or to the report while it runs), ns; summed over
    /// the threads of a group of exited ones ([`ThreadSnapshot::group`](super::thread_snapshot::ThreadSnapshot::group)).
    pub alive_ns: u64,
    /// Time inside its top-level sections, ns (running ones up to the report).
    pub busy_ns: u64,
    /// CPU time (user + system) over its time alive, ns; summed over a group (0 where threads' CPU clocks
    /// cannot be read).
    pub cpu_ns: u64,
    /// Section calls on this thread, all depths.
    pub calls: u64,
    /// Its records lost to ring overflow.
    pub dropped: u64,
    /// Its own call tree (node 0 is the thread's root, `(root)`, whose total is `busy_ns`).
    pub tree: CallTree,
}

/// One line of `Heaviest Sections:`: every call path of a section name, summed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SectionTotal {
    /// The section's name (the program's name for the root).
    pub name: &'static str,
    /// Calls, all paths.
    pub calls: u64,
    /// Self time, all paths, ns.
    pub self_ns: u64,
    /// Self memory change, all paths, bytes.
    pub self_mem_bytes: i64,
    /// Completed calls by duration, all paths.
    pub latency: Latency,
}

/// One line of `Async Sections:`: every call path of an async section name (timed futures), summed.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AsyncTotal {
    /// The section's name.
    pub name: &'static str,
    /// Futures (counted at their first poll), all paths.
    pub calls: u64,
    /// Polls, all paths.
    pub polls: u64,
    /// Busy time (inside polls, children included), ns: the paths' total time, counted once where a path
    /// of the section is inside another of it.
    pub busy_ns: u64,
    /// Wall time of the futures that ended, summed, ns.
    pub wall_ns: u64,
    /// The longest of those, ns.
    pub max_wall_ns: u64,
    /// Futures dropped before they completed.
    pub cancelled: u64,
}

/// One line of `Allocations:`: every call path of a section name, summed (the counting allocator's figures).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AllocTotal {
    /// The section's name.
    pub name: &'static str,
    /// Calls, all paths.
    pub calls: u64,
    /// Allocations, children included, counted once where a path of the section is inside another of it.
    pub allocs: u64,
    /// Bytes they asked for, counted the same way.
    pub alloc_bytes: u64,
    /// Allocations made in the section and not in its children, all paths.
    pub self_allocs: u64,
    /// Bytes those asked for.
    pub self_alloc_bytes: u64,
    /// The largest heap growth within one call, bytes.
    pub heap_peak_bytes: u64,
}

/// One line of `CPU:`: every call path of a section name that measured its CPU time (the `cpu` option,
/// `PERFGRAPH_CPU=all`), summed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CpuTotal {
    /// The section's name.
    pub name: &'static str,
    /// Calls, all those paths.
    pub calls: u64,
    /// Their time, children included (busy time, inside polls, for timed futures), counted once where a
    /// path of the section is inside another of it, ns.
    pub total_ns: u64,
    /// What they measured: the figures that include children counted the same way, the others summed
    /// over every path.
    pub cpu: CpuFigures,
}

impl CpuTotal {
    /// The time not spent on the CPU (blocked, sleeping, waiting for a core): total minus CPU, ns.
    pub fn waiting_ns(&self) -> u64 {
        self.total_ns.saturating_sub(self.cpu.cpu_ns)
    }
}

/// What a [`Report`] says about the run besides its threads' snapshots.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunInfo {
    /// The program's name (the file name of `argv[0]`): the root row's name.
    pub program: &'static str,
    /// The clock the times come from (`"tsc"` or `"CLOCK_MONOTONIC"`; `"manual"` in this crate's
    /// deterministic tests).
    pub clock: &'static str,
    /// Wall time of the run so far, ns: from the runtime's start (the first recorded section or the first
    /// call into perfgraph) to the report.
    pub wall_ns: u64,
    /// The resident-memory change since the start, bytes.
    pub rss_change_bytes: i64,
    /// The verbosity in force: sections above it are not recorded.
    pub verbosity: Verbosity,
    /// Sections reached at least once while their level was above the verbosity, by name, in the order
    /// first seen: some or all of their calls are absent.
    pub skipped: Vec<&'static str>,
    /// Whether an output that needs every call (the trace, interval statistics) is on, so records lost to
    /// overflow are missing from it. Without one, the background thread drains the rings only now and then
    /// and lets a busy thread's ring wrap: the footer still states the count, and says nothing needed those
    /// records.
    pub needs_every_record: bool,
    /// Which process made the run (for a merge of many: the first one given).
    pub process: ProcessInfo,
    /// What perfgraph itself costs per section, ns, as measured at start-up; `None` when not measured.
    pub overhead_ns_per_section: Option<f64>,
    /// Whether the counting allocator (`CountingAllocator`) was installed: the nodes' allocation figures
    /// (`allocs`, `alloc_bytes`, ...) are then exact counts, and the `Allocations:` table and the JSON
    /// allocation fields are shown.
    pub heap_counted: bool,
    /// What `counter!` recorded, one row per counter name, by name (empty without counters).
    pub counters: Vec<CounterStats>,
    /// What `perfgraph_core::sync`'s locks recorded, one row per lock name, by name (empty without them).
    pub locks: Vec<crate::data::locks::LockStats>,
}

impl RunInfo {
    /// What is known of a run of `program` timed by `clock` for `wall_ns`, with the rest at its neutral
    /// value (no memory change, every level recorded, nothing skipped, no process identity, no overhead
    /// measured, no counting allocator): for reports built by hand, with the fields set that are known.
    ///
    /// ```
    /// use perfgraph_core::data::{CallNode, CallTree, Report, RunInfo, ThreadSnapshot};
    ///
    /// let mut run = RunInfo::new("converter", "tsc", 2_000_000_000);
    /// run.process.rank = 3;
    /// let tree = CallTree::new(vec![CallNode::new(0, "(root)", 0, 0, None)]);
    /// let report = Report::build(run, &[ThreadSnapshot::new(0, "main", tree)]);
    /// assert_eq!(report.run.wall_ns, 2_000_000_000);
    /// ```
    pub fn new(program: &'static str, clock: &'static str, wall_ns: u64) -> RunInfo {
        RunInfo {
            program,
            clock,
            wall_ns,
            rss_change_bytes: 0,
            verbosity: Verbosity::Level(3),
            skipped: Vec::new(),
            needs_every_record: false,
            process: ProcessInfo::default(),
            overhead_ns_per_section: None,
            heap_counted: false,
            counters: Vec::new(),
            locks: Vec::new(),
        }
    }
}

impl Report {
    /// Builds a report from what is known of the run and its threads' snapshots (pure: the same input gives
    /// the same report).
    pub fn build(run: RunInfo, threads: &[ThreadSnapshot]) -> Report {
        Report::from_snapshots(run, threads.to_vec())
    }

    /// As [`build`](Report::build), taking the snapshots: their trees become the threads' trees, not
    /// copies, so the report holds each thread's tree once, besides the merged tree. Reports
    /// [`process::progress`] every few thousand nodes and threads.
    pub(crate) fn from_snapshots(run: RunInfo, threads: Vec<ThreadSnapshot>) -> Report {
        let mut merger = Merger::new();
        for t in &threads {
            merger.add(&t.tree);
        }
        let tree = program_tree(&run, merger.finish(), main_in_sections(&threads));
        let dropped = threads.iter().map(|t| t.dropped).sum();
        let wall_ns = run.wall_ns;
        let summaries = threads
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                process::progress_at(i);
                ThreadSummary::from_snapshot(t, wall_ns)
            })
            .collect();
        Report {
            run,
            tree,
            threads: summaries,
            dropped,
            merged: None,
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
            process::progress_at(i);
            // The root keeps its own entry even if a section has the program's name.
            let key = (node.name, i == 0);
            let at = *index.entry(key).or_insert_with(|| {
                by_name.push(SectionTotal {
                    name: node.name,
                    calls: 0,
                    self_ns: 0,
                    self_mem_bytes: 0,
                    latency: Latency::default(),
                });
                by_name.len() - 1
            });
            let s = &mut by_name[at];
            s.calls += node.calls;
            s.self_ns += node.self_ns;
            s.self_mem_bytes += node.self_mem_bytes;
            s.latency.add(&node.latency);
        }
        by_name.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then(a.name.cmp(b.name)));
        by_name.truncate(n);
        by_name
    }
}

impl Report {
    /// The async sections (those with timed futures), each summed over its call paths, by busy time,
    /// largest first (ties by name).
    pub fn async_sections(&self) -> Vec<AsyncTotal> {
        let mut by_name = ByName::default();
        let nodes = &self.tree.nodes;
        for (i, n) in nodes.iter().enumerate() {
            if i == 0 || !n.is_async() {
                continue;
            }
            // A path inside another path of the same section adds no busy time of its own.
            let nested = self.tree.inside_own_section(i);
            let row = by_name.row(n.name, |name| AsyncTotal {
                name,
                ..AsyncTotal::default()
            });
            row.calls += n.calls;
            row.polls += n.polls;
            if !nested {
                row.busy_ns += n.total_ns;
            }
            row.wall_ns += n.wall_ns;
            row.max_wall_ns = row.max_wall_ns.max(n.max_wall_ns);
            row.cancelled += n.cancelled;
        }
        let mut rows = by_name.rows;
        rows.sort_by(|a, b| b.busy_ns.cmp(&a.busy_ns).then(a.name.cmp(b.name)));
        rows
    }
}

impl Report {
    /// The sections' allocation figures, each summed over its call paths, by bytes allocated (children
    /// included), largest first (ties by name). Empty unless the counting allocator was installed.
    pub fn alloc_sections(&self) -> Vec<AllocTotal> {
        let mut by_name = ByName::default();
        if !self.run.heap_counted {
            return by_name.rows;
        }
        let nodes = &self.tree.nodes;
        for (i, n) in nodes.iter().enumerate().skip(1) {
            process::progress_at(i);
            // A path inside another path of the same section adds no inclusive figures of its own.
            let nested = self.tree.inside_own_section(i);
            let row = by_name.row(n.name, |name| AllocTotal {
                name,
                ..AllocTotal::default()
            });
            row.calls += n.calls;
            if !nested {
                row.allocs += n.allocs;
                row.alloc_bytes += n.alloc_bytes;
            }
            row.self_allocs += n.self_allocs;
            row.self_alloc_bytes += n.self_alloc_bytes;
            row.heap_peak_bytes = row.heap_peak_bytes.max(n.heap_peak_bytes);
        }
        let mut rows = by_name.rows;
        rows.sort_by(|a, b| b.alloc_bytes.cmp(&a.alloc_bytes).then(a.name.cmp(b.name)));
        rows
    }
}

impl Report {
    /// Whether any section measured its CPU time: the `CPU:` table then has rows.
    pub fn cpu_measured(&self) -> bool {
        self.tree.nodes.iter().any(|n| n.cpu.is_some())
    }

    /// The CPU time of the sections that measured it, each summed over those call paths, by CPU time
    /// (children included), largest first (ties by name): the rows of the `CPU:` table.
    ///
    /// ```
    /// use perfgraph_core::time_section;
    ///
    /// {
    ///     time_section!("wait_for_disk", cpu);
    ///     std::thread::sleep(std::time::Duration::from_millis(20));
    /// }
    /// let r = perfgraph_core::report();
    /// let row = r.cpu_sections().into_iter().find(|s| s.name == "wait_for_disk").unwrap();
    /// assert_eq!(row.calls, 1);
    /// assert!(row.waiting_ns() >= 15_000_000 && row.cpu.cpu_ns < row.total_ns);
    /// ```
    pub fn cpu_sections(&self) -> Vec<CpuTotal> {
        let mut by_name = ByName::default();
        let nodes = &self.tree.nodes;
        for (i, n) in nodes.iter().enumerate().skip(1) {
            process::progress_at(i);
            let Some(cpu) = n.cpu else { continue };
            let row = by_name.row(n.name, |name| CpuTotal {
                name,
                ..CpuTotal::default()
            });
            row.calls += n.calls;
            // A path inside another path of the same section adds no inclusive figures of its own.
            let inside = self.tree.inside_own_section(i);
            if !inside {
                row.total_ns += n.total_ns;
            }
            let (mut sum, add) = (row.cpu.values(), cpu.values());
            for (k, v) in sum.iter_mut().enumerate() {
                if !(inside && CpuFigures::SUMS[k] == Sum::Inclusive) {
                    *v += add[k];
                }
            }
            row.cpu = CpuFigures::from_values(sum);
        }
        let mut rows = by_name.rows;
        rows.sort_by(|a, b| b.cpu.cpu_ns.cmp(&a.cpu.cpu_ns).then(a.name.cmp(b.name)));
        rows
    }
}

/// The rows of a per-section table being summed over call paths: one per section name, in order of first
/// appearance, found by name in constant time (a tree has thousands of paths).
struct ByName<T> {
    rows: Vec<T>,
    /// Invariant: `index[name]` is the position in `rows` of `name`'s row.
    index: std::collections::HashMap<&'static str, usize>,
}

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName {
            rows: Vec::new(),
            index: Default::default(),
        }
    }
}

impl<T> ByName<T> {
    /// `name`'s row, made by `new(name)` the first time.
    fn row(&mut self, name: &'static str, new: impl FnOnce(&'static str) -> T) -> &mut T {
        let rows = &mut self.rows;
        let at = *self.index.entry(name).or_insert_with(|| {
            rows.push(new(name));
            rows.len() - 1
        });
        &mut self.rows[at]
    }
}

impl ThreadSummary {
    /// Thread `t`'s line, its tree taken from the snapshot; `wall_ns` is the report's wall time (the time
    /// alive of a thread still running ends there).
    pub(crate) fn from_snapshot(t: ThreadSnapshot, wall_ns: u64) -> ThreadSummary {
        ThreadSummary {
            index: t.index,
            exited: t.exited_ns.is_some(),
            alive_ns: t.group.map_or_else(
                || t.exited_ns.unwrap_or(wall_ns).saturating_sub(t.started_ns),
                |g| g.alive_ns,
            ),
            busy_ns: t.tree.root().total_ns,
            cpu_ns: t.cpu_ns,
            calls: t.tree.nodes.iter().skip(1).map(|n| n.calls).sum(),
            dropped: t.dropped,
            is_main: t.is_main,
            name: t.name,
            tree: t.tree,
        }
    }
}

/// The main thread's time in sections (0 if it recorded nothing): the program's own time is the rest.
pub(crate) fn main_in_sections(threads: &[ThreadSnapshot]) -> u64 {
    threads
        .iter()
        .find(|t| t.is_main)
        .map_or(0, |t| t.tree.root().total_ns)
}

/// The merged `tree` with its root made the whole program's (see [`Report::tree`]).
pub(crate) fn program_tree(run: &RunInfo, mut tree: CallTree, main_in_sections: u64) -> CallTree {
    let children_mem: i64 = tree.nodes[0]
        .children
        .iter()
        .map(|&c| tree.nodes[c].total_mem_bytes)
        .sum();
    let root = &mut tree.nodes[0];
    root.name = run.program;
    root.calls = 1;
    root.total_ns = run.wall_ns;
    root.self_ns = run.wall_ns.saturating_sub(main_in_sections);
    root.total_mem_bytes = run.rss_change_bytes;
    root.self_mem_bytes = run.rss_change_bytes - children_mem;
    tree
}
