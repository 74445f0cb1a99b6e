//! Reading a call-tree JSON (`PERFGRAPH_JSON`, or a `perfgraph merge`) back into a [`Report`], so that the
//! `perfgraph` command renders a file with the very renderers the process used: `perfgraph report` prints
//! what `PERFGRAPH_REPORT` printed, byte for byte.
//!
//! The input is untrusted. It is read as a stream (serde's visitors over `serde_json`'s reader, one node at a
//! time, never the whole document as a `serde_json::Value`), so memory holds the report being built and
//! little more; and it is held to [`Report::MAX_JSON_BYTES`], [`Report::MAX_JSON_NODES`],
//! [`Report::MAX_JSON_NAME_BYTES`] and the tree's own shape (each node's `depth` one more than its parent's,
//! a parent before its children). Bad input is an error that says what is wrong and where
//! (`tree[3]: no "calls"`), never a panic and never an allocation the input chose. Fields added to version
//! 1 after a file was written (the latency figures, the process's identity) are read as absent; fields this
//! reader does not know are skipped.
//!
//! The reading is in four parts: [`fields`], one JSON value that is not a container and the objects of
//! them (a process, a counter, a lock: the fixed-shape records); [`tree`], a node array into a call tree
//! (its histograms and spreads); [`records`], the `threads`, `processes`, `skipped_sections`, `counters`
//! and `locks` members; [`document`], the top-level object and the report built from it.

mod document;
mod fields;
mod records;
mod tree;

use std::collections::HashSet;
use std::io::Read;
use std::sync::Mutex;

use serde::de::Deserializer as _;

use super::json_input::{Guard, Limits};
use crate::base::poison;
use crate::data::report::Report;
use document::Top;

impl Report {
    /// Largest call-tree JSON [`Report::read_json`] reads, bytes (8 GiB).
    pub const MAX_JSON_BYTES: u64 = 8 << 30;
    /// Most nodes a call-tree JSON may hold, all its trees together (the merged tree and each thread's),
    /// with its `processes` entries: 10,000,000.
    pub const MAX_JSON_NODES: usize = 10_000_000;
    /// Longest string a call-tree JSON may hold (a section, thread, program or host name), bytes once
    /// decoded: 4096. A longer one in the file is refused as it is read, before it is held.
    pub const MAX_JSON_NAME_BYTES: usize = 4096;

    /// Reads a call-tree JSON (schema in `docs/json-schema.md`) back into a report. The error says what is
    /// wrong with the text: not JSON, another format or version, a field missing or of the wrong type, a
    /// tree that is not one, or a limit passed. Never a panic.
    ///
    /// Names are interned for the life of the process (a report's names are `&'static str`): each
    /// distinct name is kept once, however many files are read.
    ///
    /// ```
    /// use perfgraph_core::{report, timed, Report};
    ///
    /// #[timed]
    /// fn assemble() {}
    ///
    /// assemble();
    /// let r = report();
    /// let back = Report::from_json(&r.json()).unwrap();
    /// assert_eq!(back.tree.find(&["assemble"]).unwrap().calls, 1);
    /// assert_eq!(back.json(), r.json());
    /// assert!(Report::from_json("{").unwrap_err().starts_with("not JSON"));
    /// ```
    pub fn from_json(text: &str) -> Result<Report, String> {
        Report::read_json(text.as_bytes())
    }

    /// [`Report::from_json`] from a reader (a file), streamed: memory holds the report being built, not
    /// the text. Past [`Report::MAX_JSON_BYTES`], [`Report::MAX_JSON_NODES`] or
    /// [`Report::MAX_JSON_NAME_BYTES`] it stops with an error naming the limit.
    ///
    /// ```
    /// use perfgraph_core::{report, time_section, Report};
    ///
    /// {
    ///     time_section!("load");
    /// }
    /// let json = report().json();
    /// let back = Report::read_json(std::io::Cursor::new(json)).unwrap();
    /// assert_eq!(back.tree.find(&["load"]).unwrap().calls, 1);
    /// let endless = std::io::repeat(b' ');
    /// assert!(Report::read_json(endless.take(100)).unwrap_err().starts_with("not JSON"));
    /// # use std::io::Read;
    /// ```
    pub fn read_json(reader: impl Read) -> Result<Report, String> {
        Report::read_json_within(reader, Report::MAX_JSON_NODES)
    }

    /// [`Report::read_json`] held to `max_nodes` nodes (a running process's dump: `attach::report`).
    pub(crate) fn read_json_within(reader: impl Read, max_nodes: usize) -> Result<Report, String> {
        let mut de = serde_json::Deserializer::from_reader(Guard::buffered(reader, &LIMITS));
        let mut nodes_left = max_nodes;
        let read = de
            .deserialize_any(Top {
                nodes_left: &mut nodes_left,
            })
            .and_then(|r| de.end().map(|()| r));
        read.map_err(|e| match e.classify() {
            serde_json::error::Category::Data => strip_position(&e),
            serde_json::error::Category::Io => {
                // Our guard's refusals (a limit) are errors of the reader.
                strip_position(&e)
            }
            _ => format!("not JSON, or cut short ({e})"),
        })
    }
}

/// An error's text without serde_json's `at line L column C` (ours name the place themselves), but with
/// it where it is all there is to go by (a type error of serde's own).
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((head, _)) if head.contains(": ") || head.starts_with("limit") => head.to_owned(),
        _ => text,
    }
}

/// Interns `s`: the same `&'static str` for the same text, each kept once for good.
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = poison::lock(&NAMES);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(&known) = names.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

// ---- the reader's guard -------------------------------------------------------------------------------------

/// Longest string token, bytes as written (escapes included), let through to the parser: a string longer
/// than a name may be once decoded (`\u0001` takes six bytes for one) is refused before it is buffered.
const MAX_TOKEN_BYTES: usize = 6 * Report::MAX_JSON_NAME_BYTES + 2;

/// What the reader takes of a file: [`Report::MAX_JSON_BYTES`] in all, [`MAX_TOKEN_BYTES`] a string.
static LIMITS: Limits = Limits {
    bytes: Report::MAX_JSON_BYTES,
    token: MAX_TOKEN_BYTES,
    too_large: || {
        format!(
            "limit: larger than {} bytes (Report::MAX_JSON_BYTES)",
            Report::MAX_JSON_BYTES
        )
    },
    too_long: || {
        format!(
            "limit: a string longer than {} bytes (Report::MAX_JSON_NAME_BYTES)",
            Report::MAX_JSON_NAME_BYTES
        )
    },
};
