//! Reading what was recorded, at any time, from any thread, into plain values: per-thread call trees and
//! what each thread is running now.
//!
//! Counts are exact. Times of sections still running are included up to the moment of the snapshot (their
//! self time so far), so a snapshot taken mid-run is consistent: every node's `total_ns` is its `self_ns`
//! plus its children's `total_ns`.

use super::reading::{NodeReading, Reading};
use super::retired::Group as RetiredGroup;
use super::thread::ThreadState;
use super::threads;
use super::verbosity;
use crate::base::clock::{self, Scale, Ticks};
use crate::base::config::{Config, Verbosity};
use crate::base::{heap, identity, process, registry, sys};
use crate::data::latency::Latency;
use crate::data::report::{ProcessInfo, Report, RunInfo};
use crate::data::thread_snapshot::{RunningSection, ThreadGroup, ThreadSnapshot};
use crate::data::tree::{CallNode, CallTree};

/// Every thread's snapshot, in order of first section, with the one conversion all of their figures use
/// (reports compute the wall time alongside them with it). Exited threads the background thread has
/// folded come one entry per name ([`retired`](super::retired)), at their first thread's place.
pub fn all() -> (Vec<ThreadSnapshot>, Scale) {
    clock::calibrate();
    let scale = clock::scale();
    let now = end_ticks();
    // One instant: each thread is live or folded, never both, never neither.
    let (live, retired) = threads::view();
    let mut snapshots: Vec<ThreadSnapshot> = live
        .iter()
        .enumerate()
        .map(|(i, t)| {
            process::progress_at(i);
            snapshot(t, now, scale)
        })
        .collect();
    snapshots.extend(retired.iter().map(|g| folded(g, scale)));
    snapshots.sort_by_key(|s| s.index);
    (snapshots, scale)
}

/// Now, or, once process exit has begun, when it began: a report taken at exit covers the run, not
/// perfgraph's own final pass (writing files, measuring its overhead).
fn end_ticks() -> u64 {
    process::run_end_ticks().unwrap_or_else(|| clock::now().0)
}

/// A group of folded threads as one entry.
fn folded(g: &RetiredGroup, scale: Scale) -> ThreadSnapshot {
    ThreadSnapshot {
        index: g.index,
        name: g.shown_name(),
        is_main: g.is_main,
        started_ns: scale.to_ns(Ticks(g.born_ticks)),
        exited_ns: Some(scale.to_ns(Ticks(g.exited_ticks))),
        recorded: g.recorded,
        dropped: g.dropped,
        cpu_ns: g.cpu_ns,
        tree: build_tree(&g.nodes, scale),
        running: Vec::new(),
        group: Some(ThreadGroup {
            threads: g.threads,
            alive_ns: scale.delta_ns(Ticks(g.alive_ticks)),
        }),
    }
}

/// A report of everything recorded so far, while threads keep running: counts are exact, and running
/// sections count with their time so far. `config` is the settings in force.
pub fn report(config: &Config) -> Report {
    let (run, threads) = parts(config);
    // The snapshots' trees become the report's: each is held once, besides the merged tree.
    Report::from_snapshots(run, threads)
}

/// What [`report`] builds its report from: what is known of the run, and every thread's snapshot.
pub fn parts(config: &Config) -> (RunInfo, Vec<ThreadSnapshot>) {
    let (threads, scale) = all();
    // After the snapshot, so the wall time covers every time in it; with the snapshot's conversion, so the
    // two compare.
    let wall_ns = scale.to_ns(Ticks(end_ticks()));
    let rss_kb = process::rss_kb() as i64 - process::start_rss_kb() as i64;
    let run = RunInfo {
        program: process::program_name(),
        clock: clock::source().name(),
        wall_ns,
        rss_change_bytes: rss_kb * 1024,
        verbosity: verbosity::current().unwrap_or(Verbosity::Off),
        skipped: registry::skipped().iter().map(|s| s.name).collect(),
        needs_every_record: config.needs_every_record(),
        process: ProcessInfo {
            pid: sys::process_id(),
            rank: identity::rank(),
            host: identity::host().to_owned(),
            start_unix_ns: identity::start_unix_ns(),
        },
        overhead_ns_per_section: process::overhead_ns(),
        heap_counted: heap::installed(),
        counters: counters(),
        locks: super::locks::gather(|ticks| scale.delta_ns(Ticks(ticks))),
    };
    (run, threads)
}

fn snapshot(t: &ThreadState, now: u64, scale: Scale) -> ThreadSnapshot {
    // Acquire: pairs with the Release store in `threads::ExitHook::drop`. Read first: if the thread has
    // exited, the reading below is of its final state.
    let exited = t.exited_ticks.load(std::sync::atomic::Ordering::Acquire);
    // The thread keeps recording while we read; `Stack::read` sees that no call counts twice.
    let Reading { nodes, running } = t.stack.read(now);
    ThreadSnapshot {
        index: t.index,
        name: t.name.clone(),
        is_main: t.is_main,
        started_ns: scale.to_ns(Ticks(t.born_ticks)),
        exited_ns: (exited != 0).then(|| scale.to_ns(Ticks(exited))),
        recorded: t.stack.ring.pushed(),
        dropped: t.dropped.load(std::sync::atomic::Ordering::Relaxed),
        cpu_ns: t.read_cpu(),
        tree: build_tree(&nodes, scale),
        running: running
            .iter()
            .map(|f| RunningSection {
                section: f.section,
                name: registry::info(f.section).map_or("?", |i| i.name),
                depth: f.depth,
                start_ns: scale.to_ns(Ticks(f.start)),
                elapsed_ns: scale.delta_ns(Ticks(now.saturating_sub(f.start))),
            })
            .collect(),
        group: None,
    }
}

/// Turns a reading's nodes into plain values: names, nanoseconds (with `scale`), totals summed bottom-up.
pub(crate) fn build_tree(reading: &[NodeReading], scale: Scale) -> CallTree {
    let mut nodes: Vec<CallNode> = reading
        .iter()
        .enumerate()
        .map(|(i, n)| {
            process::progress_at(i);
            let info = registry::info(n.section).unwrap_or(registry::ROOT);
            CallNode {
                section: n.section,
                name: info.name,
                level: info.level,
                depth: n.depth,
                parent: n.parent,
                children: Vec::new(),
                calls: n.calls,
                running: n.running,
                self_ns: scale.delta_ns(Ticks(n.self_ticks)),
                total_ns: 0,
                self_mem_bytes: n.self_mem_kb * 1024,
                total_mem_bytes: 0,
                polls: n.asyncs.polls,
                wall_ns: scale.delta_ns(Ticks(n.asyncs.wall_ticks)),
                max_wall_ns: scale.delta_ns(Ticks(n.asyncs.max_wall_ticks)),
                cancelled: n.asyncs.cancelled,
                latency: Latency::from_ticks(
                    n.latency.min,
                    n.latency.max,
                    &n.latency.buckets,
                    scale,
                ),
                allocs: 0,
                alloc_bytes: 0,
                self_allocs: n.side.self_allocs,
                self_alloc_bytes: n.side.self_alloc_bytes,
                heap_growth_bytes: n.side.heap_growth,
                heap_peak_bytes: n.side.heap_peak,
                cpu: (n.side.cpu_calls > 0).then_some(n.side.cpu),
            }
        })
        .collect();
    // Parents come before their children, and siblings in the reading's order (oldest first).
    for i in 0..nodes.len() {
        if let Some(p) = nodes[i].parent {
            nodes[p].children.push(i);
        }
    }
    // Totals bottom-up (children come after parents).
    for i in (0..nodes.len()).rev() {
        let (time, mem) = nodes[i].children.iter().fold((0u64, 0i64), |(t, m), &c| {
            (t + nodes[c].total_ns, m + nodes[c].total_mem_bytes)
        });
        nodes[i].total_ns = nodes[i].self_ns + time;
        nodes[i].total_mem_bytes = nodes[i].self_mem_bytes + mem;
        let (allocs, bytes) = nodes[i].children.iter().fold((0u64, 0u64), |(a, b), &c| {
            (a + nodes[c].allocs, b + nodes[c].alloc_bytes)
        });
        nodes[i].allocs = nodes[i].self_allocs + allocs;
        nodes[i].alloc_bytes = nodes[i].self_alloc_bytes + bytes;
    }
    let mut tree = CallTree { nodes };
    tree.reorder();
    tree
}

/// What every thread's `counter!`s set, live and exited, one row per counter name, by name.
fn counters() -> Vec<crate::data::counters::CounterStats> {
    let mut by_name: std::collections::BTreeMap<&'static str, super::counters::Stats> =
        std::collections::BTreeMap::new();
    for (id, stats) in threads::counters() {
        if let Some(site) = super::counters::site(id) {
            by_name.entry(site.name).or_default().combine(&stats);
        }
    }
    by_name
        .into_iter()
        .map(|(name, s)| {
            let mut row = crate::data::counters::CounterStats::new(name);
            (row.samples, row.sum, row.min, row.max, row.last) =
                (s.samples, s.sum, s.min, s.max, s.last);
            row
        })
        .collect()
}
