//! Reading what was recorded, at any time, from any thread: per-thread call trees, the merged tree, and
//! what each thread is running now.
//!
//! Counts are exact. Times of sections still running are included up to the moment of the snapshot (their
//! self time so far), so a snapshot taken mid-run is consistent: every node's `total_ns` is its `self_ns`
//! plus its children's `total_ns`.

use std::collections::HashMap;

use crate::registry::{self, SectionId};
use crate::thread::{self, OpenFrame, ThreadState};
use crate::tree::Tree;
use crate::{clock, runtime};

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

/// A snapshot of every thread that recorded, in order of first section.
///
/// ```
/// use perfgraph_core::{threads, timed};
///
/// #[timed]
/// fn work() -> u32 { 42 }
///
/// work();
/// let me = threads().into_iter().find(|t| t.name == std::thread::current().name().unwrap()).unwrap();
/// let node = me.tree.nodes.iter().find(|n| n.name == "work").unwrap();
/// assert_eq!(node.calls, 1);
/// ```
pub fn threads() -> Vec<ThreadSnapshot> {
    snapshot_all().0
}

/// Every thread's snapshot, with the one conversion all of their figures used (for figures computed
/// alongside them, such as the report's wall time).
pub(crate) fn snapshot_all() -> (Vec<ThreadSnapshot>, clock::Scale) {
    runtime::ensure_init();
    clock::calibrate();
    let scale = clock::scale();
    let now = clock::now();
    let snapshots = thread::all()
        .iter()
        .map(|t| snapshot(t, now, scale))
        .collect();
    (snapshots, scale)
}

/// The call tree of all threads merged by call path (a section under two parents stays two nodes).
pub fn merged() -> CallTree {
    merge(threads().iter().map(|t| &t.tree))
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
    fn reorder(&mut self) {
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

fn snapshot(t: &ThreadState, now: u64, scale: clock::Scale) -> ThreadSnapshot {
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
        started_ns: scale.to_ns(t.born_ticks),
        exited_ns: (exited != 0).then(|| scale.to_ns(exited)),
        recorded: t.ring.pushed(),
        dropped: t.dropped.load(std::sync::atomic::Ordering::Relaxed),
        tree,
        running: open
            .iter()
            .map(|f| RunningSection {
                section: f.section,
                name: registry::info(f.section).map_or("?", |i| i.name),
                depth: f.depth,
                start_ns: scale.to_ns(f.start),
                elapsed_ns: scale.delta_ns(now.saturating_sub(f.start)),
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
    scale: clock::Scale,
) -> (CallTree, Vec<OpenFrame>) {
    use std::sync::atomic::Ordering::Relaxed;
    let len = tree.len() as usize;
    let mut nodes: Vec<CallNode> = Vec::with_capacity(len);
    let mut self_ticks = Vec::with_capacity(len);
    // Walk from the root; collect children oldest first (node indices grow with creation time).
    let mut index_of = HashMap::with_capacity(len);
    let mut stack = vec![(0u32, None::<usize>, 0u32)];
    while let Some((id, parent, depth)) = stack.pop() {
        let Some(n) = tree.get(id) else { continue };
        let section = n.section.load(Relaxed);
        let info = registry::info(section).unwrap_or(registry::ROOT);
        let i = nodes.len();
        index_of.insert(id, i);
        nodes.push(CallNode {
            section,
            name: info.name,
            level: info.level,
            depth,
            parent,
            children: Vec::new(),
            calls: n.calls.load(Relaxed),
            running: 0,
            self_ns: 0,
            total_ns: 0,
            self_mem_bytes: n.self_mem_kb.load(Relaxed) * 1024,
            total_mem_bytes: 0,
        });
        // Acquire: pairs with the Release store in `ThreadState::close`; a call whose time this sees is
        // closed in the frames read after it (`after`), so it is not counted again as running.
        self_ticks.push(n.self_ticks.load(std::sync::atomic::Ordering::Acquire));
        if let Some(p) = parent {
            nodes[p].children.push(i);
        }
        let mut kids: Vec<u32> = tree.children(id).collect();
        kids.sort_unstable_by(|a, b| b.cmp(a)); // pop order: oldest first
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
        let Some(&i) = index_of.get(&f.node) else {
            continue;
        };
        let elapsed = now.saturating_sub(f.start);
        let inner = open.get(k + 1).map_or(0, |c| now.saturating_sub(c.start));
        self_ticks[i] += elapsed.saturating_sub(f.child_ticks).saturating_sub(inner);
        nodes[i].running += 1;
    }
    for (n, ticks) in nodes.iter_mut().zip(&self_ticks) {
        n.self_ns = scale.delta_ns(*ticks);
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
