//! `perfgraph diff`: two runs side by side, a row per section (or per call path), marked where the
//! change passes the threshold; exit code 1 when something got slower past it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::compare::{Figures, Metric, Options, Paths, figures, keys};
use crate::failure::Failure;
use crate::{bundle, gate, html, load, table};

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The run to compare against: a run's call-tree JSON, or a bundle of runs (`perfgraph record`'s
    /// directory). Alone, a bundle recorded with --baseline: its baseline's runs against its command's.
    pub base: PathBuf,
    /// The run to check: a run's JSON, or a bundle (its command's runs).
    pub head: Option<PathBuf>,
    /// Change (percent) past which a section is marked; a slower one fails the diff.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub threshold: f64,
    /// Noise floor: sections below this many milliseconds in both runs are never marked.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub min_ms: f64,
    /// What is compared: total time (`wall` is the same), self time, the 99th percentile of a call's
    /// duration, CPU time (the sections measured it: PERFGRAPH_CPU=all, `record --metric cpu`), or
    /// instructions (bundles recorded with `--metric instructions`). Default: total, or what a bundle
    /// was recorded with.
    #[arg(long, value_enum)]
    pub metric: Option<Metric>,
    /// Bundles: the change (percent) a section's interval must lie wholly beyond to fail the gate.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub noise: f64,
    /// One row per call path instead of per section.
    #[arg(long)]
    pub paths: bool,
    /// A section of the base that the head lacks fails the diff (exit 1). Off by default: removed
    /// sections are listed in a `Removed:` line, and the diff passes.
    #[arg(long)]
    pub fail_on_removed: bool,
    /// Also write the comparison as a self-contained HTML page (sortable, the regressions highlighted;
    /// for bundles with the gate's intervals).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Runs the diff: of two bundles (or a bundle and a run's file, or one bundle's two commands) through
/// the gate ([`crate::gate`]), of two runs' files row by row. The exit code is 1 when a row regressed,
/// 3 when the gate could not decide, 0 otherwise.
pub fn run(
    base: &Path,
    head: Option<&Path>,
    o: &Options,
    html: Option<&Path>,
) -> Result<u8, Failure> {
    let Some(head) = head.filter(|h| !bundle::is_bundle(base) && !bundle::is_bundle(h)) else {
        return gate::run(base, head, o, html);
    };
    if o.metric == Metric::Instructions {
        return Err(Failure(
            "--metric instructions compares bundles recorded with `perfgraph record --metric \
             instructions`, not a run's file"
                .into(),
        ));
    }
    let (b, h) = (load::run(base)?, load::run(head)?);
    if b.run.program != h.run.program {
        eprintln!(
            "perfgraph: warning: {} is a run of `{}`, {} of `{}`",
            base.display(),
            b.run.program,
            head.display(),
            h.run.program
        );
    }
    let mut paths = Paths::new();
    let (base_keys, head_keys) = (keys(&b, o.paths, &mut paths), keys(&h, o.paths, &mut paths));
    let base_figures = figures(&b, &base_keys, o.metric, o.paths);
    let head_figures = figures(&h, &head_keys, o.metric, o.paths);
    let (rows, regressed) = compare(&base_figures, &head_figures, o);
    if !base_figures.is_empty()
        && !head_figures.is_empty()
        && rows.iter().all(|r| r.base.is_none() || r.head.is_none())
    {
        return Err(Failure(format!(
            "{} and {} have no {} in common: not two runs of one program (renamed sections, or the wrong \
             file?)",
            base.display(),
            head.display(),
            if o.paths { "call path" } else { "section" }
        )));
    }
    let (header, cells) = grid(&rows, o, &paths);
    // The lines under the table (the page's too).
    let mut lines = String::new();
    let removed: Vec<String> = rows
        .iter()
        .filter(|r| r.head.is_none())
        .map(|r| paths.display(r.key))
        .collect();
    lines.push_str(&table::removed(&removed, o.paths, o.fail_on_removed));
    lines.push_str(&match regressed {
        0 => format!("No regression past {}%.\n", o.threshold),
        n => format!(
            "{n} {} regressed past {}%.\n",
            if n == 1 { "row" } else { "rows" },
            o.threshold
        ),
    });
    let marks: Vec<&str> = rows.iter().map(|r| r.mark).collect();
    html::show_diff(
        html,
        &format!("perfgraph diff: {} → {}", base.display(), head.display()),
        (&header, &cells),
        &marks,
        &lines,
    )?;
    Ok(u8::from(
        regressed > 0 || (o.fail_on_removed && !removed.is_empty()),
    ))
}

/// One row of the diff.
struct Row {
    key: u32,
    base: Option<u64>,
    head: Option<u64>,
    mark: &'static str,
}

/// The rows (the base's order, then what only the head has) and how many regressed.
fn compare(base: &Figures, head: &Figures, o: &Options) -> (Vec<Row>, usize) {
    let in_head: HashMap<u32, u64> = head.iter().copied().collect();
    let in_base: HashMap<u32, u64> = base.iter().copied().collect();
    let floor = (o.min_ms * 1e6) as u64;
    let mut regressed = 0;
    let mut rows: Vec<Row> = Vec::new();
    for (k, b) in base {
        let h = in_head.get(k).copied();
        let mark = match h {
            None => "removed",
            Some(h) if *b < floor && h < floor => "",
            Some(h) => match change(*b, h) {
                Some(c) if c > o.threshold => {
                    regressed += 1;
                    "REGRESSED"
                }
                Some(c) if c < -o.threshold => "improved",
                None if h > 0 => {
                    regressed += 1;
                    "REGRESSED"
                }
                _ => "",
            },
        };
        rows.push(Row {
            key: *k,
            base: Some(*b),
            head: h,
            mark,
        });
    }
    for (k, h) in head {
        if !in_base.contains_key(k) {
            rows.push(Row {
                key: *k,
                base: None,
                head: Some(*h),
                mark: "added",
            });
        }
    }
    (rows, regressed)
}

/// The change from `base` to `head`, percent; `None` from 0.
fn change(base: u64, head: u64) -> Option<f64> {
    (base > 0).then(|| 100.0 * (head as f64 - base as f64) / base as f64)
}

/// The table's header and cells.
fn grid(rows: &[Row], o: &Options, paths: &Paths) -> ([String; 5], Vec<[String; 5]>) {
    let what = match o.metric {
        Metric::Total | Metric::Instructions => "total",
        Metric::Wall => "wall",
        Metric::SelfTime => "self",
        Metric::P99 => "p99",
        Metric::Cpu => "cpu",
    };
    let ms = |v: Option<u64>| v.map_or("-".to_owned(), |v| format!("{:.3}", v as f64 / 1e6));
    let header = [
        if o.paths { "Call path" } else { "Section" }.to_owned(),
        format!("Base {what}(ms)"),
        format!("Head {what}(ms)"),
        "Change".to_owned(),
        String::new(),
    ];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let c = match (r.base, r.head) {
                (Some(b), Some(h)) => change(b, h).map_or("-".to_owned(), |c| format!("{c:+.1}%")),
                _ => "-".to_owned(),
            };
            [
                paths.display(r.key),
                ms(r.base),
                ms(r.head),
                c,
                r.mark.to_owned(),
            ]
        })
        .collect();
    (header, cells)
}
