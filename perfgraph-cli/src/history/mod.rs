//! `perfgraph history`: a store of bundles keyed by commit ([`store`]), and per section the change
//! points of its series of medians, commit after commit ([`changepoint`], E-Divisive means), listed or
//! drawn ([`plot`]).

pub mod changepoint;
pub mod plot;
pub mod store;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::bundle::{self, Side};
use crate::compare::Paths;
use crate::failure::Failure;
use crate::gate::{samples, stats};
use crate::load;

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(subcommand)]
    action: Option<Action>,
    /// The store's directory.
    #[arg(
        long,
        value_name = "DIR",
        default_value = ".perfgraph/history",
        global = true
    )]
    store: PathBuf,
    /// Also draws each section that changed, its series and its change points, into this SVG file.
    #[arg(long, value_name = "SVG")]
    plot: Option<PathBuf>,
    /// Only these sections (repeat the flag for more).
    #[arg(long, value_name = "NAME")]
    section: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Adds a bundle's figures (its command's runs) under its commit.
    Add {
        /// The bundle (`perfgraph record`'s directory).
        bundle: PathBuf,
        /// The commit to file it under (default: the commit the manifest names).
        #[arg(long)]
        commit: Option<String>,
    },
    /// Lists the change points (the default).
    List,
}

/// Runs `history`.
pub fn run(a: &HistoryArgs) -> Result<u8, Failure> {
    match &a.action {
        Some(Action::Add { bundle, commit }) => add(&a.store, bundle, commit.as_deref()),
        Some(Action::List) | None => list(a),
    }
}

fn add(store_dir: &Path, dir: &Path, commit: Option<&str>) -> Result<u8, Failure> {
    let m = bundle::read(dir)?;
    let run = m.side(Side::Head).first().copied().ok_or_else(|| {
        Failure(format!(
            "{}: no run of the command wrote a report",
            dir.display()
        ))
    })?;
    let (commit, dirty) = match commit {
        Some(c) if !c.is_empty() && c.len() <= 4096 => (c.to_owned(), false),
        Some(_) => return Err(Failure("--commit: empty or too long".into())),
        None => match &run.git_commit {
            Some(c) => (c.clone(), run.git_dirty),
            None => {
                return Err(Failure(format!(
                    "{}: the runs name no commit (the program is in no git repository): give one with \
                     --commit",
                    dir.display()
                )));
            }
        },
    };
    let mut paths = Paths::new();
    let s = samples::load(
        &samples::Source::Bundle(dir, &m, Side::Head),
        m.metric.metric(),
        false,
        &mut paths,
    )?;
    let entry = store::Entry {
        commit: commit.clone(),
        dirty,
        added_unix_ns: bundle::meta::now_unix_ns(),
        metric: m.metric.name().to_owned(),
        sections: s
            .order
            .iter()
            .map(|k| (paths.display(*k), s.values[k].clone()))
            .collect(),
    };
    store::add(store_dir, &entry)?;
    eprintln!(
        "perfgraph: {} runs of {} sections added to {} as {}{}",
        s.runs,
        entry.sections.len(),
        store_dir.display(),
        short(&commit),
        if dirty {
            " (with uncommitted changes)"
        } else {
            ""
        }
    );
    Ok(0)
}

/// A commit's first 12 characters.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// One section's series: per commit (oldest first) where it ran, the median of its runs.
struct Series<'a> {
    name: &'a str,
    commits: Vec<&'a str>,
    values: Vec<f64>,
    changes: Vec<changepoint::Change>,
}

/// Lists each section's change points, and with `--plot` draws the sections that changed.
fn list(a: &HistoryArgs) -> Result<u8, Failure> {
    let entries = store::read(&a.store)?;
    if entries.is_empty() {
        load::print(&format!(
            "No history in {}: add bundles with `perfgraph history add BUNDLE`.\n",
            a.store.display()
        ))?;
        return Ok(0);
    }
    let metric = &entries.last().expect("not empty").metric;
    let settings = changepoint::Settings::default();
    let all = series(&entries, metric, &a.section, &settings);
    // Both nanoseconds and instructions are shown in millions.
    let unit = if metric == "instructions" {
        "Ir(M)"
    } else {
        "ms"
    };
    let commits = entries.iter().filter(|e| &e.metric == metric).count();
    let out = table(&all, commits, metric, unit, &settings);
    if let Some(svg) = &a.plot {
        draw(svg, &all, unit)?;
    }
    load::print(&out)?;
    Ok(0)
}

/// Per section (only the `wanted` ones, if any), in the order they first appear, its series over the
/// entries of `metric`, and its change points.
fn series<'a>(
    entries: &'a [store::Entry],
    metric: &str,
    wanted: &[String],
    settings: &changepoint::Settings,
) -> Vec<Series<'a>> {
    let mut names: Vec<&str> = Vec::new();
    for e in entries {
        for (n, _) in &e.sections {
            if !names.contains(&n.as_str()) && (wanted.is_empty() || wanted.contains(n)) {
                names.push(n);
            }
        }
    }
    let mut all: Vec<Series> = Vec::new();
    for name in names {
        let mut s = Series {
            name,
            commits: Vec::new(),
            values: Vec::new(),
            changes: Vec::new(),
        };
        for e in entries.iter().filter(|e| e.metric == metric) {
            if let Some((_, v)) = e.sections.iter().find(|(n, _)| n == name) {
                s.commits.push(&e.commit);
                s.values.push(stats::median(v));
            }
        }
        s.changes = changepoint::change_points(&s.values, settings);
        all.push(s);
    }
    all
}

/// The change points of every series as a table, one row each, under a line saying what they are
/// over; a line saying there are none when there are none.
fn table(
    all: &[Series],
    commits: usize,
    metric: &str,
    unit: &str,
    settings: &changepoint::Settings,
) -> String {
    let mut out = String::new();
    let mut rows: Vec<[String; 6]> = Vec::new();
    for s in all {
        for c in &s.changes {
            rows.push([
                short(s.commits[c.index]).to_owned(),
                s.name.to_owned(),
                format!("{:.3}", c.before / 1e6),
                format!("{:.3}", c.after / 1e6),
                format!("{:+.1}%", (c.after / c.before - 1.0) * 100.0),
                format!("{:.1}%", (1.0 - c.p) * 100.0),
            ]);
        }
    }
    if rows.is_empty() {
        out.push_str(&format!(
            "No change point in {} sections over {commits} commits ({metric}; E-Divisive means, p < \
             {}).\n",
            all.len(),
            settings.alpha
        ));
    } else {
        let header = [
            "Commit".to_owned(),
            "Section".to_owned(),
            format!("Before({unit})"),
            format!("After({unit})"),
            "Change".to_owned(),
            "Confidence".to_owned(),
        ];
        out.push_str(&format!(
            "Change points over {commits} commits ({metric}; per commit the median of its runs; \
             E-Divisive means, p < {}):\n",
            settings.alpha
        ));
        out.push_str(&crate::table::render(&header, &rows, 2, false));
    }
    out
}

/// Draws into the SVG file `svg` each series that changed, or every series when none did.
fn draw(svg: &Path, all: &[Series], unit: &str) -> Result<(), Failure> {
    let changed: Vec<&Series> = all.iter().filter(|s| !s.changes.is_empty()).collect();
    let drawn: Vec<&Series> = if changed.is_empty() {
        all.iter().collect()
    } else {
        changed
    };
    let indices: Vec<Vec<usize>> = drawn
        .iter()
        .map(|s| s.changes.iter().map(|c| c.index).collect())
        .collect();
    let labels: Vec<Vec<String>> = drawn
        .iter()
        .map(|s| {
            s.commits
                .iter()
                .map(|c| c.chars().take(7).collect())
                .collect()
        })
        .collect();
    let series: Vec<plot::Series<'_>> = drawn
        .iter()
        .zip(indices.iter().zip(&labels))
        .map(|(s, (i, l))| plot::Series {
            name: s.name,
            labels: l,
            values: &s.values,
            changes: i,
            unit,
        })
        .collect();
    let text = plot::svg(&series);
    load::write(Some(svg), |w| w.write_all(text.as_bytes()))
}
