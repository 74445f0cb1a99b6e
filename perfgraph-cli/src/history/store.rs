//! The history's store: one file of JSON lines (`history.jsonl`) in the store's directory, appended to and
//! never rewritten. A line is one bundle's figures: its commit, the metric, and per section one value per
//! run. Read back, a commit added again replaces its figures and keeps its place in the series.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::failure::Failure;
use crate::members::{boolean, string, unsigned};

/// The file in the store's directory.
pub const FILE: &str = "history.jsonl";
/// The longest line read, bytes.
const MAX_LINE: u64 = 16 << 20;
/// The most entries read.
const MAX_ENTRIES: usize = 1_000_000;
/// The most sections one entry may hold.
const MAX_SECTIONS: usize = 100_000;
/// The most values one section may hold (runs).
const MAX_VALUES: usize = 100_000;

/// One bundle's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The commit the runs ran.
    pub commit: String,
    /// The tree had uncommitted changes.
    pub dirty: bool,
    /// When it was added, ns since the Unix epoch.
    pub added_unix_ns: u64,
    /// `wall`, `cpu` or `instructions`.
    pub metric: String,
    /// Per section, one value per run (ns, or instructions), in the order first seen.
    pub sections: Vec<(String, Vec<f64>)>,
}

impl Entry {
    fn to_line(&self) -> String {
        let mut sections = Map::new();
        for (name, values) in &self.sections {
            sections.insert(name.clone(), json!(values));
        }
        let mut line = json!({
            "commit": self.commit,
            "dirty": self.dirty,
            "added_unix_ns": self.added_unix_ns,
            "metric": self.metric,
            "sections": sections,
        })
        .to_string();
        line.push('\n');
        line
    }
}

/// Appends `e` to the store in `dir` (made if missing): one write of one line, through no link.
pub fn add(dir: &Path, e: &Entry) -> Result<(), Failure> {
    let path = dir.join(FILE);
    let fail = |e: std::io::Error| Failure(format!("{}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| Failure(format!("{}: {e}", dir.display())))?;
    let mut f = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(fail)?;
    f.write_all(e.to_line().as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)
}

/// The store's entries, one per commit (the last added of a commit, at the place of its first), oldest
/// first; none for a store not made yet.
pub fn read(dir: &Path) -> Result<Vec<Entry>, Failure> {
    let path = dir.join(FILE);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Failure(format!("{}: {e}", path.display()))),
    };
    let mut reader = BufReader::new(file);
    let mut entries: Vec<Entry> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut line = String::new();
    for number in 1.. {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_line(&mut line)
            .map_err(|e| Failure(format!("{}: line {number}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        let fail = |what: String| Failure(format!("{}: line {number}: {what}", path.display()));
        if n as u64 > MAX_LINE {
            return Err(fail(format!("longer than {} MiB", MAX_LINE >> 20)));
        }
        if !line.ends_with('\n') {
            // A line cut short (an add that did not finish): the entries before it stand.
            eprintln!(
                "perfgraph: warning: {}: line {number} is cut short (an add that did not finish); it is \
                 left out",
                path.display()
            );
            break;
        }
        let e = parse(&line).map_err(fail)?;
        match at.get(&e.commit) {
            Some(&i) => entries[i] = e,
            None => {
                if entries.len() == MAX_ENTRIES {
                    return Err(fail(format!("more than {MAX_ENTRIES} commits")));
                }
                at.insert(e.commit.clone(), entries.len());
                entries.push(e);
            }
        }
    }
    Ok(entries)
}

fn parse(line: &str) -> Result<Entry, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let o = v.as_object().ok_or("not a JSON object")?;
    let text = |k: &str| -> Result<String, String> {
        string(o, k, "").and_then(|s| {
            if s.is_empty() {
                Err(format!("{k}: missing or not a string"))
            } else {
                Ok(s)
            }
        })
    };
    let commit = text("commit")?;
    let sections = o
        .get("sections")
        .and_then(Value::as_object)
        .ok_or("sections: missing or not an object")?;
    if sections.len() > MAX_SECTIONS {
        return Err(format!("sections: more than {MAX_SECTIONS}"));
    }
    let mut out = Vec::with_capacity(sections.len());
    for (name, values) in sections {
        let values = values
            .as_array()
            .filter(|a| a.len() <= MAX_VALUES)
            .ok_or(format!("sections.{name}: not a list of numbers"))?;
        let values = values
            .iter()
            .map(|x| x.as_f64().filter(|x| x.is_finite() && *x >= 0.0))
            .collect::<Option<Vec<f64>>>()
            .ok_or(format!("sections.{name}: not a list of numbers"))?;
        out.push((name.clone(), values));
    }
    Ok(Entry {
        commit,
        dirty: boolean(o, "dirty", "")?,
        added_unix_ns: unsigned(o, "added_unix_ns", "")?,
        metric: text("metric")?,
        sections: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_a_commit_added_again_replaces_in_place_and_bad_lines_are_one_line() {
        let dir = std::env::temp_dir().join(format!("perfgraph-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let e = |commit: &str, v: f64| Entry {
            commit: commit.into(),
            dirty: false,
            added_unix_ns: 1,
            metric: "wall".into(),
            sections: vec![("main".into(), vec![v, v + 1.0])],
        };
        for x in [e("a", 1.0), e("b", 2.0), e("a", 3.0)] {
            add(&dir, &x).unwrap();
        }
        assert_eq!(read(&dir).unwrap(), [e("a", 3.0), e("b", 2.0)]);
        std::fs::write(dir.join(FILE), "{\"commit\": 3}\n").unwrap();
        let Failure(line) = read(&dir).unwrap_err();
        assert!(
            line.contains("line 1: commit") && !line.contains('\n'),
            "{line}"
        );
        std::fs::write(dir.join(FILE), e("a", 1.0).to_line() + "{\"commit\"").unwrap();
        assert_eq!(read(&dir).unwrap(), [e("a", 1.0)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
