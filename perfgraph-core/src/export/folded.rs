//! Folded stacks (`PERFGRAPH_FOLDED`): one line per call path with self time, `outer;inner;leaf <self ns>`,
//! the input format of inferno (`inferno-flamegraph --countname ns`) and Brendan Gregg's flamegraph.pl.
//!
//! The paths are those of the merged call tree (all threads, as in the `graph` report), without the root,
//! so a flame graph's width is the time spent in sections. Paths with no self time are left out; the tools
//! rebuild the parents from their children. A `;` in a section name would split it into two frames and a
//! line break would end the line, so both become `_`.
//!
//! Every line repeats its whole path, so a recursion `n` calls deep costs `n²` frames. Paths deeper than
//! [`FOLDED_DEPTH`] are cut there: their self time is summed into one `(deeper)` frame under their ancestor
//! at that depth, so the totals stay exact and the file stays small.

use crate::data::report::Report;
use crate::data::tree::CallTree;

impl Report {
    /// Folded stacks (`outer;inner;leaf <self ns>`), the input of inferno and flamegraph.pl.
    pub fn folded(&self) -> String {
        render(&self.tree)
    }
}

/// Deepest path written in full, in frames.
pub const FOLDED_DEPTH: usize = 256;

/// Renders `tree` as folded stacks, in depth-first order.
pub(crate) fn render(tree: &CallTree) -> String {
    let mut out = String::new();
    // The path of the node being visited, one frame per depth.
    let mut path: Vec<String> = Vec::new();
    // Self time of nodes below FOLDED_DEPTH under the current path, not yet written.
    let mut deeper = 0u64;
    let line = |out: &mut String, path: &[String], extra: Option<&str>, ns: u64| {
        out.push_str(&path.join(";"));
        if let Some(extra) = extra {
            out.push(';');
            out.push_str(extra);
        }
        out.push(' ');
        out.push_str(&ns.to_string());
        out.push('\n');
    };
    for node in tree.nodes.iter().skip(1) {
        let depth = node.depth as usize;
        if depth > FOLDED_DEPTH {
            deeper += node.self_ns;
            continue;
        }
        if deeper > 0 {
            line(&mut out, &path, Some("(deeper)"), deeper);
            deeper = 0;
        }
        path.truncate(depth - 1);
        path.push(frame(node.name));
        if node.self_ns > 0 {
            line(&mut out, &path, None, node.self_ns);
        }
    }
    if deeper > 0 {
        line(&mut out, &path, Some("(deeper)"), deeper);
    }
    out
}

fn frame(name: &str) -> String {
    name.replace([';', '\n', '\r'], "_")
}
