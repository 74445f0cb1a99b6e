//! The flame graph's data, embedded in the page as JSON for its script: the call tree's nodes, at most
//! [`MAX_FRAMES`] of them. A run with more call paths keeps the heaviest (every path whose total time is
//! at least the [`MAX_FRAMES`]-th largest's): a path's total is never more than its parent's, so what is
//! kept is a tree, and the page says what was left out and how much time that was.

use std::collections::HashMap;
use std::io::{self, Write};

use super::name;
use crate::base::process;
use crate::data::report::Report;
use crate::report::TABLE_DEPTH;

/// Most call paths the flame graph shows: about 2 MB of data, which Chromium reads, lays out and draws
/// in well under a second.
pub const MAX_FRAMES: usize = 50_000;
/// Most rows of the page's `Performance Graph` table (the heaviest call paths, by the same rule): a
/// browser lays out a table of 50,000 rows in seconds, and each row is some 400 bytes of page.
pub const MAX_TABLE_ROWS: usize = 5_000;

/// Which call paths the page keeps.
pub(super) struct Cut {
    /// Per node, whether it is kept; empty when every node is.
    kept: Vec<bool>,
    /// Paths left out, and the smallest total time kept (ns).
    left_out: usize,
    floor_ns: u64,
}

impl Cut {
    /// The heaviest `limit` call paths of `r` (all of them when it has no more).
    pub(super) fn of(r: &Report, limit: usize) -> Cut {
        let nodes = &r.tree.nodes;
        if nodes.len() <= limit {
            return Cut {
                kept: Vec::new(),
                left_out: 0,
                floor_ns: 0,
            };
        }
        // The root always; of the rest, the heaviest.
        let mut totals: Vec<u64> = nodes.iter().skip(1).map(|n| n.total_ns).collect();
        let k = limit.saturating_sub(1).max(1);
        let (_, floor, _) = totals.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
        let floor_ns = (*floor).max(1);
        let mut kept: Vec<bool> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| i == 0 || n.total_ns >= floor_ns)
            .collect();
        // Ties at the floor may keep more than the limit: drop them from the end, children first (the
        // nodes are in depth-first order, so a later node is never another's parent before its child).
        let mut count = kept.iter().filter(|k| **k).count();
        for i in (1..nodes.len()).rev() {
            if count <= limit {
                break;
            }
            if kept[i] && nodes[i].total_ns == floor_ns && !has_kept_child(r, &kept, i) {
                kept[i] = false;
                count -= 1;
            }
        }
        // A kept node's parent is kept (a total never exceeds its parent's, bar the root's children).
        for i in 1..nodes.len() {
            if let (true, Some(p)) = (kept[i], nodes[i].parent) {
                debug_assert!(kept[p]);
                kept[p] = true;
            }
        }
        let left_out = kept.iter().filter(|k| !**k).count();
        Cut {
            kept,
            left_out,
            floor_ns,
        }
    }

    pub(super) fn keeps(&self, i: usize) -> bool {
        self.kept.is_empty() || self.kept[i]
    }

    /// The rows of the page's `Performance Graph` table: the kept paths, down to the text table's depth.
    pub(super) fn table_rows(&self, r: &Report) -> Vec<usize> {
        (0..r.tree.nodes.len())
            .filter(|&i| self.keeps(i) && r.tree.nodes[i].depth <= TABLE_DEPTH)
            .collect()
    }

    /// What the flame graph's note adds: nothing, or what was left out.
    pub(super) fn note(&self) -> String {
        if self.left_out == 0 {
            return String::new();
        }
        format!(
            " The run has more call paths than the page draws: {} paths whose total time is under {:.3} \
             ms are left out (the heaviest {MAX_FRAMES} are drawn); a frame's figures still include \
             them, and the JSON has every path.",
            self.left_out,
            self.floor_ns as f64 / 1e6
        )
    }

    /// The note over the page's `Performance Graph` table, when paths were left out.
    pub(super) fn table_note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "The heaviest {MAX_TABLE_ROWS} call paths: the {} under {:.3} ms are left out of this \
                 table; `perfgraph report` prints them all.",
                self.left_out,
                self.floor_ns as f64 / 1e6
            )
        })
    }
}

fn has_kept_child(r: &Report, kept: &[bool], i: usize) -> bool {
    r.tree.nodes[i].children.iter().any(|&c| kept[c])
}

/// The JSON the page's script reads: `{"title", "total_ns", "bytes", "names", "nodes"}`, `nodes` flat, 8
/// numbers a node (parent or -1, name index, total ns, self ns, calls, memory change bytes, bytes
/// allocated children included, and in the path itself), in depth-first order. Every `<` is written
/// `\u003c`, so no name can end the script element.
pub(super) fn write_data(w: &mut dyn Write, r: &Report, cut: &Cut) -> io::Result<()> {
    let nodes = &r.tree.nodes;
    let mut names: Vec<String> = Vec::new();
    let mut name_index: HashMap<&str, usize> = HashMap::new();
    let mut index = vec![usize::MAX; nodes.len()];
    let mut flat: Vec<String> = Vec::new();
    let mut next = 0usize;
    for (i, n) in nodes.iter().enumerate() {
        process::progress_at(i);
        if !cut.keeps(i) {
            continue;
        }
        index[i] = next;
        next += 1;
        let k = *name_index.entry(n.name).or_insert_with(|| {
            names.push(name(n.name));
            names.len() - 1
        });
        let parent = n.parent.map_or(-1, |p| index[p] as i64);
        flat.push(format!(
            "{parent},{k},{},{},{},{},{},{}",
            n.total_ns, n.self_ns, n.calls, n.total_mem_bytes, n.alloc_bytes, n.self_alloc_bytes
        ));
    }
    let total = nodes.first().map_or(0, |n| n.total_ns);
    let names_json = serde_json::to_string(&names).map_err(io::Error::other)?;
    let title = serde_json::to_string(&name(r.run.program)).map_err(io::Error::other)?;
    let text = format!(
        "{{\"title\":{title},\"total_ns\":{total},\"bytes\":{},\"names\":{names_json},\"nodes\":[",
        r.run.heap_counted
    );
    w.write_all(text.replace('<', "\\u003c").as_bytes())?;
    for (i, node) in flat.iter().enumerate() {
        if i > 0 {
            w.write_all(b",\n")?;
        }
        w.write_all(node.as_bytes())?;
    }
    w.write_all(b"]}")
}
