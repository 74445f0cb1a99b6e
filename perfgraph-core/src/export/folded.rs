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
//!
//! Lines are written as they are made: besides the tree, writing the file holds one path (at most
//! [`FOLDED_DEPTH`] frames).

use std::io::{self, Write};

use crate::base::process;
use crate::data::report::Report;
use crate::data::tree::CallTree;

impl Report {
    /// Folded stacks (`outer;inner;leaf <self ns>`), the input of inferno and flamegraph.pl.
    pub fn folded(&self) -> String {
        let mut bytes = Vec::new();
        // Writing to a `Vec` cannot fail.
        let _ = write(&mut bytes, &self.tree);
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Deepest path written in full, in frames.
pub const FOLDED_DEPTH: usize = 256;

/// Writes `tree` as folded stacks, in depth-first order. Reports [`process::progress`] every few thousand
/// nodes.
pub(crate) fn write(out: &mut dyn Write, tree: &CallTree) -> io::Result<()> {
    // The path of the node being visited, one frame per depth.
    let mut path: Vec<String> = Vec::new();
    // Self time of nodes below FOLDED_DEPTH under the current path, not yet written.
    let mut deeper = 0u64;
    let line = |out: &mut dyn Write, path: &[String], extra: Option<&str>, ns: u64| {
        for (i, frame) in path.iter().enumerate() {
            if i > 0 {
                out.write_all(b";")?;
            }
            out.write_all(frame.as_bytes())?;
        }
        if let Some(extra) = extra {
            write!(out, ";{extra}")?;
        }
        writeln!(out, " {ns}")
    };
    for (i, node) in tree.nodes.iter().enumerate().skip(1) {
        process::progress_at(i);
        let depth = node.depth as usize;
        if depth > FOLDED_DEPTH {
            deeper += node.self_ns;
            continue;
        }
        if deeper > 0 {
            line(out, &path, Some("(deeper)"), deeper)?;
            deeper = 0;
        }
        path.truncate(depth - 1);
        path.push(frame(node.name));
        if node.self_ns > 0 {
            line(out, &path, None, node.self_ns)?;
        }
    }
    if deeper > 0 {
        line(out, &path, Some("(deeper)"), deeper)?;
    }
    Ok(())
}

fn frame(name: &str) -> String {
    name.replace([';', '\n', '\r'], "_")
}
