//! Reading what was recorded, at any time, from any thread, into plain values: per-thread call trees and
//! what each thread is running now.
//!
//! Counts are exact. Times of sections still running are included up to the moment of the snapshot (their
//! self time so far), so a snapshot taken mid-run is consistent: every node's `total_ns` is its `self_ns`
//! plus its children's `total_ns`.

use std::collections::HashMap;

use super::frames::OpenFrame;
use super::thread::{self, ThreadState};
use super::tree::Tree;
use super::verbosity;
use crate::base::clock::{self, Scale, Ticks};
use crate::base::config::{Config, Verbosity};
use crate::base::{process, registry};
use crate::data::report::{Report, RunInfo};
use crate::data::tree::{CallNode, CallTree, RunningSection, ThreadSnapshot};

/// Every thread's snapshot, in order of first section, with the one conversion all of their figures use
/// (reports compute the wall time alongside them with it).
pub fn all() -> (Vec<ThreadSnapshot>, Scale) {
    clock::calibrate();
    let scale = clock::scale();
    let now = clock::now().0;
    let snapshots = thread::all()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            process::progress_at(i);
            snapshot(t, now, scale)
        })
        .collect();
    (snapshots, scale)
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
    let wall_ns = scale.to_ns(clock::now());
    let rss_kb = process::rss_kb() as i64 - process::start_rss_kb() as i64;
    let run = RunInfo {
        program: process::program_name(),
        clock: clock::source().name(),
        wall_ns,
        rss_change_bytes: rss_kb * 1024,
        verbosity: verbosity::current().unwrap_or(Verbosity::Off),
        skipped: registry::skipped().iter().map(|s| s.name).collect(),
        needs_every_record: config.needs_every_record(),
    };
    (run, threads)
}

fn snapshot(t: &ThreadState, now: u64, scale: Scale) -> ThreadSnapshot {
    // The thread keeps recording while we read. Its open frames are read before and after its tree, and
    // only calls open at both reads count as running: read only before, a call that ended meanwhile was
    // counted twice (in its node, and as running); read only after, a call entered meanwhile could run in a
    // node whose count was read before it started.
    let before = t.open_frames();
    let exited = t.exited_ticks.load(std::sync::atomic::Ordering::Acquire);
    let (tree, open) = build_tree(&t.tree, &before, || t.open_frames(), now, scale);
    ThreadSnapshot {
        index: t.index,
        name: t.name.clone(),
        is_main: t.is_main,
        started_ns: scale.to_ns(Ticks(t.born_ticks)),
        exited_ns: (exited != 0).then(|| scale.to_ns(Ticks(exited))),
        recorded: t.ring.pushed(),
        dropped: t.dropped.load(std::sync::atomic::Ordering::Relaxed),
        tree,
        running: open
            .iter()
            .map(|f| RunningSection {
                section: f.section,
                name: registry::info(f.section).map_or("?", |i| i.name),
                depth: f.depth,
                start_ns: scale.to_ns(Ticks(f.start)),
                elapsed_ns: scale.delta_ns(Ticks(now.saturating_sub(f.start))),
            })
            .collect(),
    }
}

/// Reads a live tree into plain values, adding the running calls' time so far. `before` are the open
/// frames read just before, `after` reads them again once the nodes are read; the calls open at both
/// (the common prefix) are the running ones, which it returns. Any call that ends during the reads is
/// then either complete in its node or missing (its time is not counted twice).
pub(crate) fn build_tree(
    tree: &Tree,
    before: &[OpenFrame],
    after: impl FnOnce() -> Vec<OpenFrame>,
    now: u64,
    scale: Scale,
) -> (CallTree, Vec<OpenFrame>) {
    use std::sync::atomic::Ordering::Relaxed;
    let len = tree.len() as usize;
    // Nodes hold their self time in ticks until the end (one conversion for all).
    let mut nodes: Vec<CallNode> = Vec::with_capacity(len);
    // Where the walk puts the nodes of the calls open before it, the only ones that can be running: an
    // entry per open call, not per node (a recursion has as many nodes as it is deep).
    let mut index_of: HashMap<u32, usize> = before.iter().map(|f| (f.node, usize::MAX)).collect();
    // Walk from the root; collect children oldest first (node indices grow with creation time).
    let mut stack = vec![(0u32, None::<usize>, 0u32)];
    while let Some((id, parent, depth)) = stack.pop() {
        process::progress_at(nodes.len());
        let Some(n) = tree.get(id) else { continue };
        let section = n.section.load(Relaxed);
        let info = registry::info(section).unwrap_or(registry::ROOT);
        let i = nodes.len();
        if let Some(slot) = index_of.get_mut(&id) {
            *slot = i;
        }
        nodes.push(CallNode {
            section,
            name: info.name,
            level: info.level,
            depth,
            parent,
            children: Vec::new(),
            calls: n.calls.load(Relaxed),
            running: 0,
            // Acquire: pairs with the Release store in `ThreadState::close`; a call whose time this sees
            // is closed in the frames read after it (`after`), so it is not counted again as running.
            self_ns: n.self_ticks.load(std::sync::atomic::Ordering::Acquire),
            total_ns: 0,
            self_mem_bytes: n.self_mem_kb.load(Relaxed) * 1024,
            total_mem_bytes: 0,
        });
        if let Some(p) = parent {
            nodes[p].children.push(i);
        }
        let mut kids: Vec<u32> = tree.children(id).collect();
        kids.sort_unstable_by(|a, b| b.cmp(a)); // pop order: oldest first
        // Room for exactly its children: a deep recursion has as many nodes as calls deep.
        nodes[i].children.reserve_exact(kids.len());
        stack.extend(kids.into_iter().map(|c| (c, Some(i), depth + 1)));
    }
    let after = after();
    let common = before
        .iter()
        .zip(&after)
        .take_while(|(b, a)| b.seq == a.seq && b.depth == a.depth)
        .count();
    // Running calls: self time so far = elapsed - completed children - the open child's elapsed. Their
    // frames as read after the nodes, so every child in the nodes is in `child_ticks` (a child that ended
    // after the node reads is in neither: missing, not counted twice).
    let open = &after;
    for (k, f) in open.iter().enumerate().take(common) {
        let Some(&i) = index_of.get(&f.node).filter(|&&i| i != usize::MAX) else {
            continue;
        };
        let elapsed = now.saturating_sub(f.start);
        let inner = open.get(k + 1).map_or(0, |c| now.saturating_sub(c.start));
        nodes[i].self_ns += elapsed.saturating_sub(f.child_ticks).saturating_sub(inner);
        nodes[i].running += 1;
    }
    for n in &mut nodes {
        n.self_ns = scale.delta_ns(Ticks(n.self_ns));
    }
    // Totals bottom-up (children come after parents).
    for i in (0..nodes.len()).rev() {
        let (time, mem) = nodes[i].children.iter().fold((0u64, 0i64), |(t, m), &c| {
            (t + nodes[c].total_ns, m + nodes[c].total_mem_bytes)
        });
        nodes[i].total_ns = nodes[i].self_ns + time;
        nodes[i].total_mem_bytes = nodes[i].self_mem_bytes + mem;
    }
    let mut tree = CallTree { nodes };
    tree.reorder();
    let mut running = after;
    running.truncate(common);
    (tree, running)
}
