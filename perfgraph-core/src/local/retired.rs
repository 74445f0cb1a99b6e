//! Exited threads, folded: what is left of a thread once the background thread has drained its ring for
//! the last time. Its call tree is merged, by call path (section ids), into the tree of every retired
//! thread of the same name, and its figures are summed there; its state (ring, frames, tree segments) is
//! then free to go. So a program that starts and ends threads all the time holds one small tree per
//! thread name, not one state per thread ever started.
//!
//! Threads group by the name they were given (`worker`, for `worker#2` too); unnamed threads (named
//! `unnamed-<OS thread id>` while they run) group together under
//! `(unnamed)`. A group of one thread keeps that thread's own name; a larger one is shown as
//! `<name> ×<count>` (`worker ×1000`). Figures are kept in ticks and converted by readers, as for running
//! threads. The summary lives beside the live thread list, under the same lock (`local::threads`), so a
//! reader sees each thread exactly once: running, or folded.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};

use super::counters::Stats;
use super::reading::{NodeReading, Reading};
use crate::base::registry::SectionId;

/// What unnamed threads group under.
pub const UNNAMED: &str = "(unnamed)";

/// Retired threads of one name, summed.
#[derive(Debug, Clone)]
pub struct Group {
    /// The name they share ([`UNNAMED`] for unnamed threads).
    pub name: String,
    /// The first one's own name (what a group of one shows).
    pub first_name: String,
    /// How many threads.
    pub threads: u64,
    /// The first one's index (the group's place among the threads).
    pub index: u32,
    /// Whether the main thread is among them.
    pub is_main: bool,
    /// Earliest first section, ticks.
    pub born_ticks: u64,
    /// Latest exit, ticks.
    pub exited_ticks: u64,
    /// Time alive, summed, ticks.
    pub alive_ticks: u64,
    /// Records pushed, summed.
    pub recorded: u64,
    /// Records lost to ring overflow, summed.
    pub dropped: u64,
    /// CPU time, summed, ns.
    pub cpu_ns: u64,
    /// Their call trees merged by call path: the root first, each node after its parent.
    pub nodes: Vec<NodeReading>,
}

impl Group {
    /// The name a report shows: the thread's own for a group of one, else `<name> ×<count>`.
    pub fn shown_name(&self) -> String {
        match self.threads {
            1 => self.first_name.clone(),
            n => format!("{} ×{n}", self.name),
        }
    }
}

/// One exited thread, as the fold takes it.
#[derive(Debug)]
pub struct Exited<'a> {
    /// Its own name (`worker#2`).
    pub name: &'a str,
    /// The name it was given (`worker`), which it groups under; `None` for an unnamed thread (it groups
    /// under [`UNNAMED`]).
    pub family: Option<&'a str>,
    /// Its index.
    pub index: u32,
    /// Whether it is the main thread.
    pub is_main: bool,
    /// First section and exit, ticks.
    pub born_ticks: u64,
    /// Exit, ticks.
    pub exited_ticks: u64,
    /// Records pushed.
    pub recorded: u64,
    /// Records lost.
    pub dropped: u64,
    /// CPU time, ns.
    pub cpu_ns: u64,
}

/// Every retired thread, by name.
#[derive(Debug)]
pub struct Retired {
    groups: Vec<Group>,
    by_name: HashMap<String, usize, Fixed>,
    /// `(group, parent node, section)` to the node: one map for all groups' trees.
    children: HashMap<(u32, u32, SectionId), u32, Fixed>,
    /// The exited threads' counters summed, by site id (index `id - 1`): bounded by the sites.
    counters: Vec<Stats>,
}

/// A hasher that can be built in a `const` (the summary lives in a `static`); the keys are ours.
type Fixed = BuildHasherDefault<DefaultHasher>;

impl Retired {
    /// An empty summary.
    pub const fn new() -> Retired {
        Retired {
            groups: Vec::new(),
            by_name: HashMap::with_hasher(BuildHasherDefault::new()),
            children: HashMap::with_hasher(BuildHasherDefault::new()),
            counters: Vec::new(),
        }
    }

    /// Adds an exited thread's counters (`(site id, stats)`).
    pub fn fold_counters(&mut self, counters: &[(u32, Stats)]) {
        for (id, stats) in counters {
            let i = *id as usize - 1;
            if self.counters.len() <= i {
                self.counters.resize(i + 1, Stats::default());
            }
            self.counters[i].combine(stats);
        }
    }

    /// The retired threads' counters, by site id.
    pub fn counters(&self) -> impl Iterator<Item = (u32, Stats)> + '_ {
        self.counters
            .iter()
            .enumerate()
            .filter(|(_, s)| s.samples > 0)
            .map(|(i, s)| (i as u32 + 1, *s))
    }

    /// The groups, in order of their first thread.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Folds thread `t`, whose final reading is `reading`, into its group.
    pub fn fold(&mut self, t: &Exited<'_>, reading: &Reading) {
        let key = t.family.unwrap_or(UNNAMED);
        let g = match self.by_name.get(key) {
            Some(&g) => g,
            None => {
                self.groups.push(Group {
                    name: key.to_owned(),
                    first_name: t.name.to_owned(),
                    threads: 0,
                    index: t.index,
                    is_main: false,
                    born_ticks: t.born_ticks,
                    exited_ticks: 0,
                    alive_ticks: 0,
                    recorded: 0,
                    dropped: 0,
                    cpu_ns: 0,
                    nodes: Vec::new(),
                });
                self.by_name.insert(key.to_owned(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        group.threads += 1;
        group.is_main |= t.is_main;
        group.born_ticks = group.born_ticks.min(t.born_ticks);
        group.exited_ticks = group.exited_ticks.max(t.exited_ticks);
        group.alive_ticks += t.exited_ticks.saturating_sub(t.born_ticks);
        group.recorded += t.recorded;
        group.dropped += t.dropped;
        group.cpu_ns += t.cpu_ns;
        merge(
            &mut group.nodes,
            &mut self.children,
            g as u32,
            &reading.nodes,
        );
    }
}

/// A node of `section` at `parent` and `depth` with nothing counted yet.
fn empty(section: SectionId, parent: Option<usize>, depth: u32) -> NodeReading {
    NodeReading {
        section,
        parent,
        depth,
        calls: 0,
        running: 0,
        self_ticks: 0,
        self_mem_kb: 0,
        asyncs: Default::default(),
        latency: Default::default(),
        side: Default::default(),
    }
}

/// Adds `from` (a reading's nodes: root first, parents before children) to `into`, by call path.
fn merge(
    into: &mut Vec<NodeReading>,
    children: &mut HashMap<(u32, u32, SectionId), u32, Fixed>,
    group: u32,
    from: &[NodeReading],
) {
    let mut map: Vec<usize> = Vec::with_capacity(from.len());
    for n in from {
        let target = match n.parent {
            None if into.is_empty() => {
                into.push(empty(n.section, None, n.depth));
                0
            }
            None => 0,
            Some(p) => {
                let parent = map[p];
                *children
                    .entry((group, parent as u32, n.section))
                    .or_insert_with(|| {
                        into.push(empty(n.section, Some(parent), n.depth));
                        (into.len() - 1) as u32
                    }) as usize
            }
        };
        map.push(target);
        let t = &mut into[target];
        t.calls += n.calls;
        t.running += n.running;
        t.self_ticks += n.self_ticks;
        t.self_mem_kb += n.self_mem_kb;
        t.asyncs.add(&n.asyncs);
        t.latency.add(&n.latency);
        t.side.add(&n.side);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(section: u32, parent: Option<usize>, depth: u32, calls: u64) -> NodeReading {
        NodeReading {
            section,
            parent,
            depth,
            calls,
            running: 0,
            self_ticks: 10 * calls,
            self_mem_kb: 0,
            asyncs: Default::default(),
            latency: Default::default(),
            side: Default::default(),
        }
    }

    fn exited(name: &str, named: bool, index: u32) -> Exited<'_> {
        let family = named.then_some(name);
        Exited {
            name,
            family,
            index,
            is_main: false,
            born_ticks: 100 + index as u64,
            exited_ticks: 200 + index as u64,
            recorded: 3,
            dropped: 1,
            cpu_ns: 10 + index as u64,
        }
    }

    #[test]
    fn threads_of_one_name_fold_into_one_tree_by_call_path() {
        let mut r = Retired::new();
        let a = Reading {
            nodes: vec![
                node(0, None, 0, 0),
                node(1, Some(0), 1, 2),
                node(2, Some(1), 2, 4),
            ],
            running: Vec::new(),
        };
        // Same paths, found in another order, plus a new one.
        let b = Reading {
            nodes: vec![
                node(0, None, 0, 0),
                node(3, Some(0), 1, 1),
                node(1, Some(0), 1, 1),
                node(2, Some(2), 2, 1),
            ],
            running: Vec::new(),
        };
        r.fold(&exited("w", true, 1), &a);
        r.fold(&exited("w", true, 2), &b);
        r.fold(&exited("thread-3", false, 3), &a);
        r.fold(&exited("thread-4", false, 4), &a);
        r.fold(&exited("solo", true, 5), &a);
        let g = r.groups();
        assert_eq!(g.len(), 3);
        assert_eq!(
            (g[0].shown_name(), g[0].threads, g[0].index),
            ("w ×2".to_owned(), 2, 1)
        );
        assert_eq!(g[1].shown_name(), "(unnamed) ×2");
        assert_eq!(g[2].shown_name(), "solo");
        assert_eq!((g[0].alive_ticks, g[0].recorded, g[0].dropped), (200, 6, 2));
        // CPU times summed: 11 + 12.
        assert_eq!(g[0].cpu_ns, 23);
        let calls: Vec<(u32, Option<usize>, u64)> = g[0]
            .nodes
            .iter()
            .map(|n| (n.section, n.parent, n.calls))
            .collect();
        assert_eq!(
            calls,
            vec![
                (0, None, 0),
                (1, Some(0), 3),
                (2, Some(1), 5),
                (3, Some(0), 1)
            ]
        );
    }
}
