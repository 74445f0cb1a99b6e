//! Call trees as plain values: what a snapshot of the recording threads reads, and what the reports and
//! exports render. Counts are exact; times are nanoseconds; every node's `total_ns` is its `self_ns` plus
//! its children's `total_ns`.

use std::collections::HashMap;

use crate::base::registry::{self, SectionId};

/// One node of a call tree: a call path.
#[derive(Debug, Clone, PartialEq)]
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
}

/// A call tree; node 0 is the root.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallTree {
    /// Nodes in depth-first order (parents before children).
    pub nodes: Vec<CallNode>,
}

/// A section running at the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningSection {
    /// The section.
    pub section: SectionId,
    /// Its name.
    pub name: &'static str,
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Start, ns since the runtime started.
    pub start_ns: u64,
    /// Elapsed so far, ns.
    pub elapsed_ns: u64,
}

/// What one thread recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSnapshot {
    /// Dense number in order of first section.
    pub index: u32,
    /// Name (`thread-<n>` for unnamed threads).
    pub name: String,
    /// Whether this is the main thread.
    pub is_main: bool,
    /// First section, ns since the runtime started.
    pub started_ns: u64,
    /// Exit, ns since the runtime started; `None` while it runs.
    pub exited_ns: Option<u64>,
    /// Sections completed (records pushed to its ring).
    pub recorded: u64,
    /// Records the background thread lost to overflow so far.
    pub dropped: u64,
    /// Its call tree.
    pub tree: CallTree,
    /// What it runs now, outermost first (up to 64 deep).
    pub running: Vec<RunningSection>,
}

/// Merges trees by call path.
pub fn merge<'a>(trees: impl IntoIterator<Item = &'a CallTree>) -> CallTree {
    let mut out = CallTree {
        nodes: vec![root_node()],
    };
    let mut index: HashMap<(usize, SectionId), usize> = HashMap::new();
    for tree in trees {
        let mut map = vec![0usize; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate() {
            let target = match n.parent {
                None => 0,
                Some(p) => {
                    let parent = map[p];
                    *index.entry((parent, n.section)).or_insert_with(|| {
                        out.nodes.push(CallNode {
                            parent: Some(parent),
                            children: Vec::new(),
                            calls: 0,
                            running: 0,
                            self_ns: 0,
                            total_ns: 0,
                            self_mem_bytes: 0,
                            total_mem_bytes: 0,
                            ..n.clone()
                        });
                        let new = out.nodes.len() - 1;
                        out.nodes[parent].children.push(new);
                        new
                    })
                }
            };
            map[i] = target;
            let t = &mut out.nodes[target];
            t.calls += n.calls;
            t.running += n.running;
            t.self_ns += n.self_ns;
            t.total_ns += n.total_ns;
            t.self_mem_bytes += n.self_mem_bytes;
            t.total_mem_bytes += n.total_mem_bytes;
        }
    }
    out.reorder();
    out
}

fn root_node() -> CallNode {
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
    }
}

impl CallTree {
    /// The root.
    pub fn root(&self) -> &CallNode {
        &self.nodes[0]
    }

    /// Renumbers nodes depth-first (children in their current order) so parents precede children.
    pub(crate) fn reorder(&mut self) {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(self.nodes[i].children.iter().rev());
        }
        let mut new_index = vec![0usize; self.nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut nodes: Vec<CallNode> = order.iter().map(|&old| self.nodes[old].clone()).collect();
        for n in &mut nodes {
            n.parent = n.parent.map(|p| new_index[p]);
            for c in &mut n.children {
                *c = new_index[*c];
            }
        }
        self.nodes = nodes;
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
