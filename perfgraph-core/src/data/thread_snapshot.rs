//! What one thread recorded, as a snapshot reads it: its tree, what it runs now, and (for exited threads
//! folded into one entry) the group it stands for.

use crate::base::registry::SectionId;
use crate::data::tree::CallTree;

/// A section running at the snapshot.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct ThreadSnapshot {
    /// Dense number in order of first section.
    pub index: u32,
    /// Name (`worker#2` for the second thread named `worker`, `unnamed-<OS thread id>` for unnamed threads).
    pub name: String,
    /// Whether this is the main thread.
    pub is_main: bool,
    /// First section, ns since the runtime started.
    pub started_ns: u64,
    /// Exit, ns since the runtime started; `None` while it runs.
    pub exited_ns: Option<u64>,
    /// Records pushed to its ring: one per completed section, one more per call that measured its CPU
    /// time (the `cpu` option, `PERFGRAPH_CPU=all`), and, while a trace is written, one per timed future's
    /// life and `tracing` event.
    pub recorded: u64,
    /// Records the background thread lost to overflow so far.
    pub dropped: u64,
    /// CPU time (user + system) the thread used from its first section, ns (the span of its time alive):
    /// read at the snapshot while it runs, at its exit once it has exited. 0 where threads' CPU clocks
    /// cannot be read.
    pub cpu_ns: u64,
    /// Its call tree.
    pub tree: CallTree,
    /// What it runs now, outermost first (up to 64 deep).
    pub running: Vec<RunningSection>,
    /// `None` for a thread still recording (or exited and not folded yet). For exited threads the
    /// background thread has folded (see [`ThreadGroup`]): how many threads this entry stands for, and their
    /// time alive summed; `name` is then the thread's own for one thread, `<name> ×<count>` for more,
    /// `index` the first one's, `started_ns` the earliest start, `exited_ns` the latest exit, and the tree,
    /// `recorded`, `dropped` and `cpu_ns` are summed.
    pub group: Option<ThreadGroup>,
}

impl ThreadSnapshot {
    /// A thread `index` named `name` that recorded `tree`, with nothing else known yet (not the main
    /// thread, started at 0, running, nothing lost): for snapshots built by hand, then fed to
    /// [`Report::build`](crate::data::Report::build).
    ///
    /// ```
    /// use perfgraph_core::data::{CallNode, CallTree, ThreadSnapshot};
    ///
    /// let tree = CallTree::new(vec![CallNode::new(0, "(root)", 0, 0, None)]);
    /// let mut main = ThreadSnapshot::new(0, "main", tree);
    /// main.is_main = true;
    /// assert_eq!(main.name, "main");
    /// ```
    pub fn new(index: u32, name: impl Into<String>, tree: CallTree) -> ThreadSnapshot {
        ThreadSnapshot {
            index,
            name: name.into(),
            is_main: false,
            started_ns: 0,
            exited_ns: None,
            recorded: 0,
            dropped: 0,
            cpu_ns: 0,
            tree,
            running: Vec::new(),
            group: None,
        }
    }
}

/// Exited threads of one name, folded into one entry of the thread list (see [`ThreadSnapshot::group`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadGroup {
    /// How many threads.
    pub threads: u64,
    /// Their time alive (first section to exit), summed, ns.
    pub alive_ns: u64,
}
