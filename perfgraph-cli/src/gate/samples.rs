//! One side of a gated diff: each run's figure per section (or call path), read one report at a time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::bundle::{self, Manifest, Side};
use crate::compare::{self, Metric, Paths};
use crate::failure::Failure;
use crate::gate::callgrind;
use crate::load;

/// What one side holds: per row key, one value per run, and the exact figures (calls, allocations) per
/// run.
pub struct Samples {
    /// How many runs.
    pub runs: usize,
    /// The keys in the order first seen.
    pub order: Vec<u32>,
    /// Per key, its figure in each run (0 in a run that did not reach it).
    pub values: HashMap<u32, Vec<f64>>,
    /// Per key, its calls and allocations in each run.
    pub exact: HashMap<u32, Vec<(u64, u64)>>,
    /// Runs whose program exited with a status other than 0.
    pub failed: usize,
    /// Sections Callgrind's output has no function for (inlined away, or an `async fn`'s body), in the
    /// order met.
    pub missing: Vec<u32>,
}

/// Where a side's runs come from.
pub enum Source<'a> {
    /// A run's call-tree JSON: one run.
    File(&'a Path),
    /// A bundle's runs of one side.
    Bundle(&'a Path, &'a Manifest, Side),
}

/// One run's reports (a launcher's ranks: several) and its Callgrind output.
struct RunFiles {
    reports: Vec<PathBuf>,
    callgrind: Option<PathBuf>,
    exit: i32,
}

/// Reads the side's runs, one report at a time: each run's `metric` per section (or, `by_path`, per call
/// path), and its calls and allocations.
pub fn load(
    source: &Source<'_>,
    metric: Metric,
    by_path: bool,
    paths: &mut Paths,
) -> Result<Samples, Failure> {
    let runs: Vec<RunFiles> = match source {
        Source::File(p) => vec![RunFiles {
            reports: vec![p.to_path_buf()],
            callgrind: None,
            exit: 0,
        }],
        Source::Bundle(dir, m, side) => m
            .side(*side)
            .into_iter()
            .map(|r| RunFiles {
                reports: r.files.iter().map(|f| dir.join(&f.path)).collect(),
                callgrind: r.callgrind.as_ref().map(|c| dir.join(c)),
                exit: r.exit,
            })
            .collect(),
    };
    let mut s = Samples {
        runs: runs.len(),
        order: Vec::new(),
        values: HashMap::new(),
        exact: HashMap::new(),
        failed: runs.iter().filter(|r| r.exit != 0).count(),
        missing: Vec::new(),
    };
    for (i, run) in runs.iter().enumerate() {
        let profile = match (&run.callgrind, metric) {
            (Some(c), Metric::Instructions) => Some(read_callgrind(c)?),
            (None, Metric::Instructions) => {
                return Err(Failure(format!(
                    "{}: --metric instructions needs runs recorded under Callgrind (`perfgraph record \
                     --metric instructions`)",
                    run.reports
                        .first()
                        .map_or("?".into(), |p| p.display().to_string())
                )));
            }
            _ => None,
        };
        for path in &run.reports {
            let report = load::run(path)?;
            let keys = compare::keys(&report, by_path, paths);
            for (key, v) in compare::figures(&report, &keys, metric, by_path) {
                let v = match &profile {
                    Some(p) => match callgrind::section(p, paths.name(key)) {
                        Some(ir) => ir as f64,
                        None => {
                            if !s.missing.contains(&key) {
                                s.missing.push(key);
                            }
                            continue;
                        }
                    },
                    None => v as f64,
                };
                slot(&mut s.values, &mut s.order, key, s.runs)[i] += v;
            }
            for (n, &key) in report.tree.nodes.iter().zip(&keys).skip(1) {
                let e = s.exact.entry(key).or_insert_with(|| vec![(0, 0); s.runs]);
                e[i].0 = e[i].0.saturating_add(n.calls);
                e[i].1 = e[i].1.saturating_add(n.allocs);
            }
        }
    }
    Ok(s)
}

fn slot<'a>(
    values: &'a mut HashMap<u32, Vec<f64>>,
    order: &mut Vec<u32>,
    key: u32,
    runs: usize,
) -> &'a mut Vec<f64> {
    values.entry(key).or_insert_with(|| {
        order.push(key);
        vec![0.0; runs]
    })
}

fn read_callgrind(path: &Path) -> Result<callgrind::Profile, Failure> {
    let file =
        std::fs::File::open(path).map_err(|e| Failure(format!("{}: {e}", path.display())))?;
    callgrind::read(std::io::BufReader::with_capacity(1 << 16, file))
        .map_err(|e| Failure(format!("{}: {e}", path.display())))
}

/// The two sides `base` and `head` name, and each side's label: a bundle alone is its baseline's runs
/// against its command's; a bundle beside another input is its command's runs.
pub fn sources<'a>(
    base: &'a Path,
    head: Option<&'a Path>,
    manifests: &'a [(PathBuf, Manifest)],
) -> Result<[(Source<'a>, String); 2], Failure> {
    let find = |p: &Path| manifests.iter().find(|(d, _)| d == p).map(|(_, m)| m);
    let side = |p: &'a Path| -> (Source<'a>, String) {
        match find(p) {
            Some(m) => (
                Source::Bundle(p, m, Side::Head),
                format!("{} (its command's runs)", p.display()),
            ),
            None => (Source::File(p), p.display().to_string()),
        }
    };
    match head {
        Some(h) => Ok([side(base), side(h)]),
        None => {
            let m = find(base).expect("a bundle");
            if m.baseline.is_none() {
                return Err(Failure(format!(
                    "{}: a bundle with no baseline: give a second bundle (or run's file) to compare it \
                     with, or record with --baseline",
                    base.display()
                )));
            }
            Ok([
                (
                    Source::Bundle(base, m, Side::Base),
                    format!("{} (baseline)", base.display()),
                ),
                (
                    Source::Bundle(base, m, Side::Head),
                    format!("{} (command)", base.display()),
                ),
            ])
        }
    }
}

/// The manifests of the inputs that are bundles.
pub fn manifests(inputs: &[&Path]) -> Result<Vec<(PathBuf, Manifest)>, Failure> {
    let mut out = Vec::new();
    for p in inputs {
        if bundle::is_bundle(p) {
            out.push((p.to_path_buf(), bundle::read(p)?));
        }
    }
    Ok(out)
}
