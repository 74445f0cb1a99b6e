//! A bundle: the runs `perfgraph record` made, in a directory with a manifest (`manifest.json`) that says
//! what ran, in which order, and on what. `perfgraph diff` reads a bundle's runs as samples and `perfgraph
//! history add` stores its figures; both read the manifest through [`read`], which holds it to be untrusted
//! input (bounded, every field checked, files only inside the bundle).
//!
//! The format is in docs/json-schema.md, "Bundles".

pub mod meta;
pub mod record;

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::members::{boolean, optional, string, strings, unsigned};

use crate::compare::Metric;
use crate::failure::Failure;

/// The manifest's name inside a bundle.
pub const MANIFEST: &str = "manifest.json";
/// The format's version, the manifest's `perfgraph_bundle` member.
pub const VERSION: u64 = 1;
/// The largest manifest read, bytes.
const MAX_MANIFEST_BYTES: u64 = 16 << 20;
/// The most runs a manifest may list.
pub const MAX_RUNS: usize = 100_000;
/// The most files (ranks) one run may list.
const MAX_FILES: usize = 100_000;

/// Which command a run ran: `record --baseline`'s or the one after `--`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The baseline command's runs.
    Base,
    /// The command's runs.
    Head,
}

impl Side {
    /// The manifest's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

/// What `record` measured with, which sets how a bundle's runs are compared by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Recorded {
    /// Wall time (the sections' total time).
    Wall,
    /// Each section's CPU time (`PERFGRAPH_CPU=all`).
    Cpu,
    /// Instructions, under Callgrind.
    Instructions,
}

impl Recorded {
    /// What `diff` compares of runs recorded so.
    pub fn metric(self) -> Metric {
        match self {
            Recorded::Wall => Metric::Total,
            Recorded::Cpu => Metric::Cpu,
            Recorded::Instructions => Metric::Instructions,
        }
    }

    /// The manifest's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Recorded::Wall => "wall",
            Recorded::Cpu => "cpu",
            Recorded::Instructions => "instructions",
        }
    }
}

/// One JSON report a run wrote (one per process: a launcher's ranks write one each).
#[derive(Debug, Clone, PartialEq)]
pub struct RunFile {
    /// Inside the bundle, relative.
    pub path: PathBuf,
    /// The process's rank (0 outside a launcher).
    pub rank: u32,
}

/// One run, as the manifest lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Which command.
    pub side: Side,
    /// Its number on its side, from 1.
    pub index: u32,
    /// Its place in the order the runs ran, from 1.
    pub order: u32,
    /// The reports it wrote; none when the program wrote none (it failed early, or is not instrumented).
    pub files: Vec<RunFile>,
    /// Callgrind's output, inside the bundle (`--metric instructions`).
    pub callgrind: Option<PathBuf>,
    /// Its exit status as a shell gives it (128 + N for a signal N).
    pub exit: i32,
    /// When it started, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// How long it ran, ns.
    pub wall_ns: u64,
    /// The 1-, 5- and 15-minute load averages when it started.
    pub load_average: [f64; 3],
    /// The commit of the repository the program is in (else the working directory's), if any.
    pub git_commit: Option<String>,
    /// Whether that repository had changes not committed.
    pub git_dirty: bool,
    /// The compiler that built the program (its `.comment` section), if it says.
    pub rustc: Option<String>,
    /// The CPU's model name.
    pub cpu_model: Option<String>,
}

impl Run {
    /// The name of run `index` of `side` in the bundle's `runs/` (`head-003`): its files' stem.
    pub fn name_of(side: Side, index: u32) -> String {
        format!("{}-{index:03}", side.name())
    }
}

/// A bundle's manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// What the runs measured with.
    pub metric: Recorded,
    /// The seed of the run order.
    pub seed: u64,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// The baseline command, if any.
    pub baseline: Option<Vec<String>>,
    /// The runs in the order they ran.
    pub runs: Vec<Run>,
}

impl Manifest {
    /// The manifest as JSON text.
    pub fn to_json(&self) -> String {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| {
                json!({
                    "side": r.side.name(),
                    "index": r.index,
                    "order": r.order,
                    "files": r.files.iter().map(|f| json!({
                        "path": f.path.to_string_lossy(),
                        "rank": f.rank,
                    })).collect::<Vec<_>>(),
                    "callgrind": r.callgrind.as_ref().map(|p| p.to_string_lossy().into_owned()),
                    "exit": r.exit,
                    "start_unix_ns": r.start_unix_ns,
                    "wall_ns": r.wall_ns,
                    "load_average": r.load_average,
                    "git_commit": r.git_commit,
                    "git_dirty": r.git_dirty,
                    "rustc": r.rustc,
                    "cpu_model": r.cpu_model,
                })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&json!({
            "perfgraph_bundle": VERSION,
            "metric": self.metric.name(),
            "seed": self.seed,
            "command": self.command,
            "baseline": self.baseline,
            "runs": runs,
        }))
        .expect("plain values");
        text.push('\n');
        text
    }

    /// The runs of `side` that wrote a report, in their side's order.
    pub fn side(&self, side: Side) -> Vec<&Run> {
        let mut runs: Vec<&Run> = self
            .runs
            .iter()
            .filter(|r| r.side == side && !r.files.is_empty())
            .collect();
        runs.sort_by_key(|r| r.index);
        runs
    }
}

/// Whether `path` is a bundle (a directory: a run's file is not).
pub fn is_bundle(path: &Path) -> bool {
    path.is_dir()
}

/// The manifest of bundle `dir`: one line naming the bundle and what is wrong when it will not read.
pub fn read(dir: &Path) -> Result<Manifest, Failure> {
    let path = dir.join(MANIFEST);
    let fail = |what: String| Failure(format!("{}: {what}", path.display()));
    let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => fail(format!(
            "no such file: {} is not a bundle of `perfgraph record`",
            dir.display()
        )),
        _ => fail(e.to_string()),
    })?;
    let mut text = String::new();
    file.take(MAX_MANIFEST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(e.to_string()))?;
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(fail(format!(
            "larger than {} MiB: not a manifest perfgraph wrote",
            MAX_MANIFEST_BYTES >> 20
        )));
    }
    parse(&text).map_err(fail)
}

/// The manifest in `text`, every field checked.
pub fn parse(text: &str) -> Result<Manifest, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let top = v.as_object().ok_or("not a JSON object")?;
    match top.get("perfgraph_bundle").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(n) => {
            return Err(format!(
                "a bundle of format {n}; this perfgraph reads format {VERSION}"
            ));
        }
        None => return Err("no `perfgraph_bundle` version: not a manifest perfgraph wrote".into()),
    }
    let metric = match string(top, "metric", "")?.as_str() {
        "wall" => Recorded::Wall,
        "cpu" => Recorded::Cpu,
        "instructions" => Recorded::Instructions,
        other => {
            return Err(format!(
                "metric: `{other}` is not wall, cpu or instructions"
            ));
        }
    };
    let seed = unsigned(top, "seed", "")?;
    let command = strings(top.get("command"), "command")?;
    if command.is_empty() {
        return Err("command: empty".into());
    }
    let baseline = match top.get("baseline") {
        None | Some(Value::Null) => None,
        v => Some(strings(v, "baseline")?),
    };
    let list = top
        .get("runs")
        .and_then(Value::as_array)
        .ok_or("runs: missing or not a list")?;
    if list.len() > MAX_RUNS {
        return Err(format!("runs: more than {MAX_RUNS}"));
    }
    let mut runs = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        runs.push(run(r, &format!("runs[{i}]."))?);
    }
    let mut seen = std::collections::HashSet::new();
    for r in &runs {
        if !seen.insert((r.side, r.index)) {
            return Err(format!(
                "runs: {} run {} is listed twice",
                r.side.name(),
                r.index
            ));
        }
    }
    Ok(Manifest {
        metric,
        seed,
        command,
        baseline,
        runs,
    })
}

fn run(v: &Value, at: &str) -> Result<Run, String> {
    let o = v.as_object().ok_or(format!("{at}: not an object"))?;
    let side = match string(o, "side", at)?.as_str() {
        "base" => Side::Base,
        "head" => Side::Head,
        other => return Err(format!("{at}side: `{other}` is not base or head")),
    };
    let small = |key: &str| -> Result<u32, String> {
        u32::try_from(unsigned(o, key, at)?).map_err(|_| format!("{at}{key}: too large"))
    };
    let (index, order) = (small("index")?, small("order")?);
    let files = o
        .get("files")
        .and_then(Value::as_array)
        .ok_or(format!("{at}files: missing or not a list"))?;
    if files.len() > MAX_FILES {
        return Err(format!("{at}files: more than {MAX_FILES}"));
    }
    let mut out = Vec::with_capacity(files.len());
    for (j, f) in files.iter().enumerate() {
        let fat = format!("{at}files[{j}].");
        let fo = f.as_object().ok_or(format!("{fat}: not an object"))?;
        let rank = u32::try_from(unsigned(fo, "rank", &fat)?)
            .map_err(|_| format!("{fat}rank: too large"))?;
        out.push(RunFile {
            path: inside(&string(fo, "path", &fat)?, &format!("{fat}path"))?,
            rank,
        });
    }
    let callgrind = match o.get("callgrind") {
        None | Some(Value::Null) => None,
        Some(_) => Some(inside(
            &string(o, "callgrind", at)?,
            &format!("{at}callgrind"),
        )?),
    };
    let exit = o
        .get("exit")
        .and_then(Value::as_i64)
        .and_then(|e| i32::try_from(e).ok())
        .ok_or(format!("{at}exit: missing or not an exit status"))?;
    let load = o
        .get("load_average")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 3)
        .ok_or(format!("{at}load_average: not a list of three numbers"))?;
    let mut load_average = [0.0; 3];
    for (k, l) in load.iter().enumerate() {
        load_average[k] = l
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or(format!("{at}load_average: not a list of three numbers"))?;
    }
    Ok(Run {
        side,
        index,
        order,
        files: out,
        callgrind,
        exit,
        start_unix_ns: unsigned(o, "start_unix_ns", at)?,
        wall_ns: unsigned(o, "wall_ns", at)?,
        load_average,
        git_commit: optional(o, "git_commit", at)?,
        git_dirty: boolean(o, "git_dirty", at)?,
        rustc: optional(o, "rustc", at)?,
        cpu_model: optional(o, "cpu_model", at)?,
    })
}

/// A path inside the bundle: relative, with no `..` (a manifest never sends the reader elsewhere).
fn inside(path: &str, at: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(path);
    let ok = !path.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if ok {
        Ok(p)
    } else {
        Err(format!(
            "{at}: `{path}` is not a path inside the bundle (relative, without `..`)"
        ))
    }
}

#[cfg(test)]
mod tests;
