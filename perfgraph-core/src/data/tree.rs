//! Call trees as plain values: what a snapshot of the recording threads reads, and what the reports and
//! exports render. Counts are exact; times are nanoseconds; every node's `total_ns` is its `self_ns` plus
//! its children's `total_ns`.

use crate::base::process;
use crate::base::registry::{self, SectionId};
use crate::data::figures::CpuFigures;
use crate::data::latency::Latency;

/// One node of a call tree: a call path.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallNode {
    /// The section (0 for the root).
    pub section: SectionId,
    /// The section's name (`(root)` for the root).
    pub name: &'static str,
    /// The section's level.
    pub level: u8,
    /// Depth in the tree (root 0).
    pub depth: u32,
    /// Parent index, `None` for the root.
    pub parent: Option<usize>,
    /// Child indices, in order of first call.
    pub children: Vec<usize>,
    /// Calls started (including any still running).
    pub calls: u64,
    /// Calls running at the snapshot.
    pub running: u64,
    /// Time in this path not spent in its children, ns.
    pub self_ns: u64,
    /// Time in this path, children included, ns.
    pub total_ns: u64,
    /// Resident-memory change not attributed to children, bytes (may be negative).
    pub self_mem_bytes: i64,
    /// Resident-memory change over its calls, children included, bytes (may be negative).
    pub total_mem_bytes: i64,
    /// Polls, for a path of timed futures (`#[timed] async fn`, `time_future!`, a `tracing` span entered
    /// per poll); 0 for a synchronous section. `calls` counts its futures (at their first poll), and
    /// `self_ns` and `total_ns` are busy time, spent inside polls.
    pub polls: u64,
    /// Wall time of the futures that ended at this path (from their first poll to their completion or
    /// drop), summed, ns.
    pub wall_ns: u64,
    /// The longest of those, ns.
    pub max_wall_ns: u64,
    /// Futures dropped at this path before they completed.
    pub cancelled: u64,
    /// Its completed calls by duration (empty for a path a thread kept no histogram for: see
    /// docs/json-schema.md).
    pub latency: Latency,
    /// Heap allocations of its completed calls, children included, as the counting allocator
    /// (`CountingAllocator`) counted them; 0 without it.
    pub allocs: u64,
    /// Bytes those allocations asked for.
    pub alloc_bytes: u64,
    /// Allocations made in this path and not in its children.
    pub self_allocs: u64,
    /// Bytes those asked for.
    pub self_alloc_bytes: u64,
    /// Net heap growth (allocated minus freed on the calls' threads) over its completed calls, children
    /// included, bytes (may be negative).
    pub heap_growth_bytes: i64,
    /// The largest heap growth within one call, above the heap at its start, bytes.
    pub heap_peak_bytes: u64,
    /// What its completed calls (polls, for timed futures) measured, for a section that measures (the
    /// `cpu` option, `PERFGRAPH_CPU=all`): CPU time and the rest of [`CpuFigures`]; `None` for one that
    /// does not.
    pub cpu: Option<CpuFigures>,
}

/// The name of 0.1.0 for [`CpuFigures`].
#[deprecated(
    since = "0.2.0",
    note = "renamed `CpuFigures`: it holds more than CPU time"
)]
pub type CpuTime = CpuFigures;

impl CallNode {
    /// A node of `section` (named `name`, at `level`) at `depth` under `parent`, with no figures yet: for
    /// a tree built by hand (a converter, a test); set the figures it has, then
    /// [`CallTree::new`] links the children.
    ///
    /// ```
    /// use perfgraph_core::data::{CallNode, CallTree};
    ///
    /// let mut solve = CallNode::new(1, "solve", 0, 1, Some(0));
    /// solve.calls = 3;
    /// let tree = CallTree::new(vec![CallNode::new(0, "(root)", 0, 0, None), solve]);
    /// assert_eq!(tree.find(&["solve"]).unwrap().calls, 3);
    /// assert_eq!(tree.root().children, [1]);
    /// ```
    pub fn new(
        section: SectionId,
        name: &'static str,
        level: u8,
        depth: u32,
        parent: Option<usize>,
    ) -> CallNode {
        CallNode {
            section,
            name,
            level,
            depth,
            parent,
            ..root_node()
        }
    }

    /// A node of the same section (id, name, level) at `parent` and `depth`, with no figures yet: where
    /// merges add those of the nodes they fold into it ([`add_figures`](CallNode::add_figures)).
    pub(crate) fn empty_like(&self, parent: Option<usize>, depth: u32) -> CallNode {
        CallNode::new(self.section, self.name, self.level, depth, parent)
    }

    /// Whether timed futures ran at this path (polled, or ended here): the JSON then carries `polls`,
    /// `wall_ns`, `max_wall_ns` and `cancelled`, and the `Async Sections:` table lists its section.
    pub fn is_async(&self) -> bool {
        self.polls > 0 || self.wall_ns > 0 || self.cancelled > 0
    }
}

/// A call tree; node 0 is the root.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CallTree {
    /// Nodes in depth-first order (parents before children).
    pub nodes: Vec<CallNode>,
}

/// A node with no figures: the root of a tree, and what [`CallNode::new`] fills in.
pub(super) fn root_node() -> CallNode {
    CallNode {
        section: 0,
        name: registry::ROOT.name,
        level: 0,
        depth: 0,
        parent: None,
        children: Vec::new(),
        calls: 0,
        running: 0,
        self_ns: 0,
        total_ns: 0,
        self_mem_bytes: 0,
        total_mem_bytes: 0,
        polls: 0,
        wall_ns: 0,
        max_wall_ns: 0,
        cancelled: 0,
        latency: Latency::default(),
        allocs: 0,
        alloc_bytes: 0,
        self_allocs: 0,
        self_alloc_bytes: 0,
        heap_growth_bytes: 0,
        heap_peak_bytes: 0,
        cpu: None,
    }
}

impl CallTree {
    /// A tree of `nodes` (depth-first, each after its parent, the root first), with each node's `children`
    /// set from the parents (any given are replaced).
    ///
    /// ```
    /// use perfgraph_core::data::{CallNode, CallTree};
    ///
    /// let tree = CallTree::new(vec![
    ///     CallNode::new(0, "(root)", 0, 0, None),
    ///     CallNode::new(1, "a", 0, 1, Some(0)),
    ///     CallNode::new(2, "b", 0, 2, Some(1)),
    /// ]);
    /// assert!(tree.find(&["a", "b"]).is_some());
    /// ```
    pub fn new(mut nodes: Vec<CallNode>) -> CallTree {
        for n in &mut nodes {
            n.children.clear();
        }
        for i in 0..nodes.len() {
            if let Some(p) = nodes[i].parent.filter(|&p| p < i) {
                nodes[p].children.push(i);
            }
        }
        CallTree { nodes }
    }

    /// The root.
    pub fn root(&self) -> &CallNode {
        &self.nodes[0]
    }

    /// Renumbers nodes depth-first (children in their current order) so parents precede children; nodes
    /// not under the root are dropped. In place: besides the tree it takes two indices per node, and
    /// nothing at all is moved when the nodes are in that order already (a single thread's tree, or a
    /// merge of one). Reports [`process::progress`] every few thousand nodes.
    pub(crate) fn reorder(&mut self) {
        self.reorder_with(|_, _| {});
    }

    /// [`reorder`](CallTree::reorder), calling `swapped(i, j)` for each swap of nodes `i` and `j`, so a
    /// caller can apply the same permutation to data of its own, one entry per node (`Vec::swap`, then
    /// `Vec::truncate` to the nodes kept).
    pub(crate) fn reorder_with(&mut self, mut swapped: impl FnMut(usize, usize)) {
        let len = self.nodes.len();
        if len == 0 {
            return;
        }
        // Where each node goes: depth-first from the root, then whatever the root does not reach.
        const UNREACHED: usize = usize::MAX;
        let mut new_index = vec![UNREACHED; len];
        let mut next = 0usize;
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            process::progress_at(next);
            new_index[i] = next;
            next += 1;
            stack.extend(self.nodes[i].children.iter().rev());
        }
        drop(stack);
        let reached = next;
        if reached == len && new_index.iter().enumerate().all(|(old, &new)| old == new) {
            return;
        }
        for slot in new_index.iter_mut().filter(|s| **s == UNREACHED) {
            *slot = next;
            next += 1;
        }
        for (i, n) in self.nodes.iter_mut().enumerate() {
            process::progress_at(i);
            n.parent = n.parent.map(|p| new_index[p]);
            for c in &mut n.children {
                *c = new_index[*c];
            }
        }
        // Apply the permutation by cycles: each swap puts one node in its place for good.
        for i in 0..len {
            process::progress_at(i);
            while new_index[i] != i {
                let j = new_index[i];
                self.nodes.swap(i, j);
                swapped(i, j);
                new_index.swap(i, j);
            }
        }
        self.nodes.truncate(reached);
    }

    /// Whether node `i` is under another node of its own section (a recursion, or a timed future awaiting
    /// one of its kind): its inclusive figures are already in that one's.
    pub(crate) fn inside_own_section(&self, i: usize) -> bool {
        let section = self.nodes[i].section;
        let mut up = self.nodes[i].parent;
        while let Some(p) = up {
            if p != 0 && self.nodes[p].section == section {
                return true;
            }
            up = self.nodes[p].parent;
        }
        false
    }

    /// Node `i`'s call path as `a;b;c` (the root left out), for messages: a path more than 8 sections deep
    /// is shown by its first and last 3 (`a;…;x;y;z`).
    pub(crate) fn path_of(&self, i: usize) -> String {
        let mut names = Vec::new();
        let mut at = Some(i);
        while let Some(n) = at.and_then(|n| self.nodes.get(n)) {
            if n.parent.is_none() {
                break;
            }
            names.push(n.name);
            at = n.parent;
        }
        names.reverse();
        if names.len() > 8 {
            let tail = names.split_off(names.len() - 3);
            names.truncate(1);
            names.push("…");
            names.extend(tail);
        }
        names.join(";")
    }

    /// Finds the first node on the path of section names from the root (`["solve", "residual"]`).
    pub fn find(&self, path: &[&str]) -> Option<&CallNode> {
        let mut at = 0usize;
        for name in path {
            at = *self.nodes[at]
                .children
                .iter()
                .find(|&&c| self.nodes[c].name == *name)?;
        }
        Some(&self.nodes[at])
    }
}

/// Trees built by hand for this crate's unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{CallNode, CallTree};

    /// A tree from paths in depth-first order, `(depth, name)` with depth 1 at the top and a one-letter
    /// name (its section is the letter's place in the alphabet); the figures vary with the node's place,
    /// totals are summed bottom-up.
    pub(crate) fn tree(paths: &[(u32, &'static str)]) -> CallTree {
        let mut nodes = vec![super::root_node()];
        let mut open = vec![0usize];
        for (i, &(depth, name)) in paths.iter().enumerate() {
            open.truncate(depth as usize);
            let parent = *open
                .last()
                .expect("a path at most one deeper than the one before");
            let k = nodes.len();
            nodes.push(CallNode {
                section: u32::from(name.as_bytes()[0] - b'a' + 1),
                name,
                level: (i % 3) as u8,
                depth,
                parent: Some(parent),
                calls: i as u64 + 1,
                running: (i % 4 == 1) as u64,
                self_ns: 10 * i as u64 + 1,
                self_mem_bytes: i as i64 * 4096 - 8192,
                ..super::root_node()
            });
            nodes[parent].children.push(k);
            open.push(k);
        }
        for i in (0..nodes.len()).rev() {
            let (t, m) = nodes[i].children.iter().fold((0, 0), |(t, m), &c| {
                (t + nodes[c].total_ns, m + nodes[c].total_mem_bytes)
            });
            nodes[i].total_ns = nodes[i].self_ns + t;
            nodes[i].total_mem_bytes = nodes[i].self_mem_bytes + m;
        }
        CallTree { nodes }
    }
}
#[cfg(test)]
mod tests {
    use super::testing::tree;
    use super::*;

    /// `reorder` as it was first written: a depth-first walk copying every node.
    fn reordered_by_copy(tree: &CallTree) -> CallTree {
        let mut order = Vec::new();
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(tree.nodes[i].children.iter().rev());
        }
        let mut new_index = vec![0usize; tree.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut nodes: Vec<CallNode> = order.iter().map(|&old| tree.nodes[old].clone()).collect();
        for n in &mut nodes {
            n.parent = n.parent.map(|p| new_index[p]);
            for c in &mut n.children {
                *c = new_index[*c];
            }
        }
        CallTree { nodes }
    }

    #[test]
    fn reorder_in_place_renumbers_depth_first_and_drops_what_the_root_does_not_reach() {
        let mut t = tree(&[(1, "a"), (2, "b"), (3, "c"), (2, "d"), (1, "e"), (2, "f")]);
        // Already depth-first: nothing moves.
        let before = t.clone();
        t.reorder();
        assert_eq!(t, before);
        // The root's children the other way round, `b` and `d` swapped, and a node nothing points to.
        t.nodes[0].children.reverse();
        t.nodes[1].children.reverse();
        t.nodes.push(CallNode {
            parent: Some(3),
            ..t.nodes[3].clone()
        });
        let expected = reordered_by_copy(&t);
        assert_eq!(expected.nodes.len(), 7);
        assert_eq!(expected.nodes[1].name, "e");
        t.reorder();
        assert_eq!(t, expected);
    }
}
