//! Many processes' runs as one report (`perfgraph merge`): each call path's calls, times, memory and
//! latency summed over the processes, and how its total time spread over them.
//!
//! Paths are matched by their sections' names, not ids: ids are only stable within one run.

use std::collections::HashMap;

use super::report::{Merged, ProcessInfo, ProcessSpread, Report, RunInfo, ThreadSummary};
use super::tree::{CallNode, CallTree};

impl Report {
    /// The runs of many processes as one report: the tree summed path by path (its root's figures, the
    /// processes' wall times, summed too, and so `wall_ns`), every process's threads (named `<name> @<rank>`),
    /// and [`merged`](Report::merged) holding the processes and each path's spread of total time over
    /// them. A run that is itself a merge counts as its processes. Program name, clock, verbosity and
    /// identity are the first run's; the overhead per section is the average weighted by calls.
    ///
    /// A sum that would overflow (runs read from files can hold anything up to `u64::MAX`) is an error
    /// naming the run, the field and the call path, never a wrapped figure.
    ///
    /// ```
    /// use perfgraph_core::{report, timed, Report};
    ///
    /// #[timed]
    /// fn assemble() {}
    ///
    /// assemble();
    /// let one = report();
    /// let all = Report::merge_runs(&[one.clone(), one]).unwrap();
    /// assert_eq!(all.tree.find(&["assemble"]).unwrap().calls, 2);
    /// assert_eq!(all.merged.unwrap().processes.len(), 2);
    /// ```
    pub fn merge_runs(runs: &[Report]) -> Result<Report, MergeError> {
        let mut out = MergedTree::default();
        let mut processes: Vec<ProcessInfo> = Vec::new();
        let mut threads: Vec<ThreadSummary> = Vec::new();
        let mut skipped: Vec<&'static str> = Vec::new();
        let (mut weighted, mut calls_with_cost, mut all_costed) = (0.0, 0u64, true);
        let mut dropped: u64 = 0;
        for (index, run) in runs.iter().enumerate() {
            out.add(run).map_err(|message| MergeError {
                run: index,
                message,
            })?;
            dropped = dropped.checked_add(run.dropped).ok_or(MergeError {
                run: index,
                message: "\"dropped\" overflows".into(),
            })?;
            match &run.merged {
                Some(m) => processes.extend(m.processes.iter().cloned()),
                None => processes.push(run.run.process.clone()),
            }
            let rank = run.run.process.rank;
            for t in &run.threads {
                threads.push(ThreadSummary {
                    index: threads.len() as u32,
                    name: if run.merged.is_some() {
                        t.name.clone()
                    } else {
                        format!("{} @{rank}", t.name)
                    },
                    ..t.clone()
                });
            }
            for s in &run.run.skipped {
                if !skipped.contains(s) {
                    skipped.push(s);
                }
            }
            let calls: u64 = run.tree.nodes.iter().skip(1).map(|n| n.calls).sum();
            match run.run.overhead_ns_per_section {
                Some(ns) => {
                    weighted += ns * calls as f64;
                    calls_with_cost += calls;
                }
                None => all_costed = false,
            }
        }
        let (tree, spread) = out.finish();
        let first = runs.first();
        let run = RunInfo {
            program: first.map_or("(none)", |r| r.run.program),
            clock: first.map_or("", |r| r.run.clock),
            wall_ns: tree.nodes.first().map_or(0, |n| n.total_ns),
            rss_change_bytes: tree.nodes.first().map_or(0, |n| n.total_mem_bytes),
            verbosity: first.map_or(crate::base::config::Verbosity::Off, |r| r.run.verbosity),
            skipped,
            needs_every_record: runs.iter().any(|r| r.run.needs_every_record),
            process: first.map(|r| r.run.process.clone()).unwrap_or_default(),
            overhead_ns_per_section: (all_costed && calls_with_cost > 0)
                .then(|| weighted / calls_with_cost as f64),
            heap_counted: runs.iter().any(|r| r.run.heap_counted),
            counters: combine_counters(runs.iter().map(|r| &r.run.counters[..])),
            locks: combine_locks(runs.iter().map(|r| &r.run.locks[..])),
        };
        Ok(Report {
            run,
            tree,
            threads,
            dropped,
            merged: Some(Merged { processes, spread }),
        })
    }
}

/// Why [`Report::merge_runs`] refused: which run (its index in the slice given) and what overflowed.
///
/// ```
/// use perfgraph_core::{report, timed, Report};
///
/// #[timed]
/// fn assemble() {}
///
/// assemble();
/// let mut huge = report();
/// let node = huge.tree.nodes.iter().position(|n| n.name == "assemble").unwrap();
/// huge.tree.nodes[node].calls = u64::MAX;
/// let err = Report::merge_runs(&[huge.clone(), huge]).unwrap_err();
/// assert_eq!(err.run, 1);
/// assert!(err.to_string().contains("\"calls\" overflows at assemble"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeError {
    /// The run whose figures overflowed, counted from 0 in the order given.
    pub run: usize,
    /// What overflowed, and where: `"calls" overflows at solve;residual`.
    pub message: String,
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MergeError {}

/// The tree being merged, with each node's spread.
#[derive(Default)]
struct MergedTree {
    nodes: Vec<CallNode>,
    spread: Vec<ProcessSpread>,
    /// `(parent, name)` to the node.
    index: HashMap<(usize, &'static str), usize>,
}

impl MergedTree {
    /// Adds `run`'s tree; on an overflow, what overflowed and where.
    fn add(&mut self, run: &Report) -> Result<(), String> {
        let mut map: Vec<usize> = Vec::with_capacity(run.tree.nodes.len());
        // This run's total per merged node (a path whose name two call sites share is one node here).
        let mut totals: HashMap<usize, u64> = HashMap::new();
        for (i, n) in run.tree.nodes.iter().enumerate() {
            let target = match n.parent {
                None => {
                    if self.nodes.is_empty() {
                        self.nodes.push(n.empty_like(None, n.depth));
                        self.spread.push(ProcessSpread::default());
                    }
                    0
                }
                Some(p) => {
                    let parent = map[p];
                    let (nodes, spread) = (&mut self.nodes, &mut self.spread);
                    *self.index.entry((parent, n.name)).or_insert_with(|| {
                        let depth = nodes[parent].depth + 1;
                        nodes.push(n.empty_like(Some(parent), depth));
                        spread.push(ProcessSpread::default());
                        let new = nodes.len() - 1;
                        nodes[parent].children.push(new);
                        new
                    })
                }
            };
            map.push(target);
            let overflow =
                |field: &str| format!("\"{field}\" overflows at {}", run.tree.path_of(i));
            self.nodes[target]
                .checked_add_figures(n)
                .map_err(overflow)?;
            match run.merged.as_ref().and_then(|m| m.spread.get(i)) {
                // A merge's node brings its own processes.
                Some(s) => combine(&mut self.spread[target], *s).map_err(overflow)?,
                None => {
                    let t = totals.entry(target).or_insert(0);
                    *t = t
                        .checked_add(n.total_ns)
                        .ok_or_else(|| overflow("total_ns"))?;
                }
            }
        }
        let mut totals: Vec<(usize, u64)> = totals.into_iter().collect();
        totals.sort_unstable();
        for (target, ns) in totals {
            combine(
                &mut self.spread[target],
                ProcessSpread {
                    processes: 1,
                    min_ns: ns,
                    sum_ns: ns,
                    max_ns: ns,
                    max_rank: run.run.process.rank,
                },
            )
            .map_err(|field| format!("\"{field}\" overflows"))?;
        }
        Ok(())
    }

    /// The tree depth-first (parents first, children in order of first appearance), and the spread in the
    /// same order.
    fn finish(self) -> (CallTree, Vec<ProcessSpread>) {
        let mut tree = CallTree { nodes: self.nodes };
        let mut spread = self.spread;
        tree.reorder_with(|i, j| spread.swap(i, j));
        spread.truncate(tree.nodes.len());
        (tree, spread)
    }
}

/// Adds `s` (one or more processes) to `into`; on an overflow, the field's name.
fn combine(into: &mut ProcessSpread, s: ProcessSpread) -> Result<(), &'static str> {
    if s.processes == 0 {
        return Ok(());
    }
    if into.processes == 0 {
        *into = s;
        return Ok(());
    }
    into.processes = into.processes.checked_add(s.processes).ok_or("processes")?;
    into.min_ns = into.min_ns.min(s.min_ns);
    into.sum_ns = into.sum_ns.checked_add(s.sum_ns).ok_or("sum_ns")?;
    if s.max_ns > into.max_ns {
        into.max_ns = s.max_ns;
        into.max_rank = s.max_rank;
    }
    Ok(())
}

/// Counters of many runs, one row per name (by name): their samples summed, the extremes kept, the last
/// value the first run's that set it.
pub(crate) fn combine_counters<'a>(
    runs: impl Iterator<Item = &'a [crate::data::counters::CounterStats]>,
) -> Vec<crate::data::counters::CounterStats> {
    combine_by_name(
        runs,
        |c| &c.name,
        crate::data::counters::CounterStats::combine,
    )
}

/// Locks of many runs, one row per name (by name), their figures summed and their maxima kept.
pub(crate) fn combine_locks<'a>(
    runs: impl Iterator<Item = &'a [crate::data::locks::LockStats]>,
) -> Vec<crate::data::locks::LockStats> {
    combine_by_name(runs, |l| &l.name, crate::data::locks::LockStats::combine)
}

/// Rows of many runs, one per name (by name, `name` giving a row's): the first run's row of a name, each
/// later run's row of that name added to it by `combine`.
fn combine_by_name<'a, R: Clone + 'a>(
    runs: impl Iterator<Item = &'a [R]>,
    name: impl Fn(&'a R) -> &'a str,
    combine: impl Fn(&mut R, &R),
) -> Vec<R> {
    let mut by_name: std::collections::BTreeMap<&str, R> = std::collections::BTreeMap::new();
    for row in runs.flatten() {
        by_name
            .entry(name(row))
            .and_modify(|into| combine(into, row))
            .or_insert_with(|| row.clone());
    }
    by_name.into_values().collect()
}
