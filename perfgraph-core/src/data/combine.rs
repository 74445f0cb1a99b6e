//! Combining call trees by call path: threads' trees into one ([`combine`]), or one at a time, each handed
//! over once done with ([`Merger`]).

use std::collections::HashMap;

use crate::base::process;
use crate::base::registry::SectionId;
use crate::data::tree::{CallNode, CallTree, root_node};

/// The old name of [`combine`].
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "renamed `combine`: threads are combined, processes merged"
)]
pub fn merge<'a>(trees: impl IntoIterator<Item = &'a CallTree>) -> CallTree {
    combine(trees)
}

/// Combines trees (of threads) by call path: one node per path, its figures summed. Reports
/// `process::progress` every few thousand nodes. (Runs of many processes are *merged*:
/// [`Report::merge_runs`](crate::data::Report::merge_runs).)
///
/// ```
/// use perfgraph_core::data::combine;
///
/// #[perfgraph_core::timed]
/// fn step() {}
///
/// step();
/// let threads = perfgraph_core::threads();
/// let tree = combine(threads.iter().map(|t| &t.tree));
/// assert!(tree.find(&["step"]).unwrap().calls >= 1);
/// ```
pub fn combine<'a>(trees: impl IntoIterator<Item = &'a CallTree>) -> CallTree {
    let mut merger = Merger::new();
    for tree in trees {
        merger.add(tree);
    }
    merger.finish()
}

/// A merge by call path that takes its trees one at a time ([`merge`] is one), so a caller can hand each
/// over once it is done with it ([`Merger::add_owned`]).
pub(crate) struct Merger {
    out: CallTree,
    /// `(parent, section)` to the merged node; `None` until a second tree needs it (after
    /// [`add_owned`](Merger::add_owned) took the first tree whole).
    index: Option<HashMap<(usize, SectionId), usize>>,
    /// Whether no tree has been added yet.
    empty: bool,
    /// Nodes merged so far, for [`process::progress_at`].
    seen: usize,
}

impl Merger {
    pub(crate) fn new() -> Merger {
        Merger {
            out: CallTree {
                nodes: vec![root_node()],
            },
            index: Some(HashMap::new()),
            empty: true,
            seen: 0,
        }
    }

    /// Merges `tree`: its nodes add to those of the same call path, new paths become new nodes.
    pub(crate) fn add(&mut self, tree: &CallTree) {
        let out = &mut self.out;
        let index = self.index.get_or_insert_with(|| {
            // Every merged node but the root, under its parent.
            let mut index = HashMap::with_capacity(out.nodes.len());
            for (i, n) in out.nodes.iter().enumerate() {
                if let Some(p) = n.parent {
                    index.insert((p, n.section), i);
                }
            }
            index
        });
        self.empty = false;
        let mut map = vec![0usize; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate() {
            process::progress_at(self.seen);
            self.seen += 1;
            let target = match n.parent {
                None => 0,
                Some(p) => {
                    let parent = map[p];
                    *index.entry((parent, n.section)).or_insert_with(|| {
                        out.nodes.push(n.empty_like(Some(parent), n.depth));
                        let new = out.nodes.len() - 1;
                        out.nodes[parent].children.push(new);
                        new
                    })
                }
            };
            map[i] = target;
            out.nodes[target].add_figures(n);
        }
    }

    /// As [`add`](Merger::add), taking the tree: the first one becomes the merged tree itself rather than
    /// being copied into it, so merging a single huge tree costs no second copy of it. `tree` is one as
    /// snapshots make them: node 0 its root, then the other nodes depth-first, parents first, each child
    /// of a node a section of its own.
    pub(crate) fn add_owned(&mut self, mut tree: CallTree) {
        if !self.empty || tree.nodes.is_empty() {
            self.add(&tree);
            return;
        }
        debug_assert!(
            tree.nodes
                .iter()
                .enumerate()
                .skip(1)
                .all(|(i, n)| n.parent.is_some_and(|p| p < i)),
            "a snapshot's tree: parents first"
        );
        self.seen += tree.nodes.len();
        process::progress();
        let root = &mut tree.nodes[0];
        *root = CallNode {
            children: std::mem::take(&mut root.children),
            calls: root.calls,
            running: root.running,
            self_ns: root.self_ns,
            total_ns: root.total_ns,
            self_mem_bytes: root.self_mem_bytes,
            total_mem_bytes: root.total_mem_bytes,
            polls: root.polls,
            wall_ns: root.wall_ns,
            max_wall_ns: root.max_wall_ns,
            cancelled: root.cancelled,
            latency: std::mem::take(&mut root.latency),
            allocs: root.allocs,
            alloc_bytes: root.alloc_bytes,
            self_allocs: root.self_allocs,
            self_alloc_bytes: root.self_alloc_bytes,
            heap_growth_bytes: root.heap_growth_bytes,
            heap_peak_bytes: root.heap_peak_bytes,
            cpu: root.cpu,
            ..root_node()
        };
        self.out = tree;
        self.index = None;
        self.empty = false;
    }

    /// The merged tree, depth-first.
    pub(crate) fn finish(self) -> CallTree {
        drop(self.index);
        let mut out = self.out;
        out.reorder();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tree::testing::tree;

    #[test]
    fn merging_and_reordering_a_large_tree_count_as_progress_of_the_exit() {
        let n = 3 * process::PROGRESS_EVERY as u32;
        let deep: Vec<(u32, &str)> = (1..=n).map(|d| (d, "r")).collect();
        let mut t = tree(&deep);
        // Other tests may report progress meanwhile: only lower bounds hold.
        let before = process::progress_count();
        combine([&t]);
        let merged = process::progress_count();
        assert!(merged - before >= 3);
        t.nodes.swap(1, 2);
        t.nodes[0].children = vec![2];
        t.nodes[2].children = vec![1];
        t.nodes[2].parent = Some(0);
        t.nodes[1].parent = Some(2);
        t.nodes[1].children = vec![3];
        t.nodes[3].parent = Some(1);
        t.reorder();
        assert_eq!(t, tree(&deep), "back in depth-first order");
        assert!(process::progress_count() - merged >= 3);
    }

    #[test]
    fn a_merge_that_takes_its_first_tree_gives_the_same_tree() {
        let one = tree(&[(1, "a"), (2, "b"), (3, "c"), (2, "d"), (1, "e")]);
        let two = tree(&[(1, "e"), (2, "f"), (1, "a"), (2, "d"), (3, "g")]);
        let deep: Vec<(u32, &str)> = (1..=50).map(|d| (d, "r")).collect();
        let three = tree(&deep);
        let trees = [one, two, three];
        let expected = combine(&trees);
        let mut merger = Merger::new();
        for t in trees.clone() {
            merger.add_owned(t);
        }
        assert_eq!(merger.finish(), expected);
        // A single tree: the merge is that tree.
        let mut merger = Merger::new();
        merger.add_owned(trees[2].clone());
        let alone = merger.finish();
        assert_eq!(alone, combine([&trees[2]]));
        assert_eq!(alone, trees[2]);
    }
}
