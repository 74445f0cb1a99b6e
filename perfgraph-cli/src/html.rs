//! `perfgraph html RUN.json [TRACE] -o report.html`: the run as one self-contained page
//! (`perfgraph_core::html`); with a Chrome JSON trace, also its series over time (resident memory, heap,
//! counters, CPU per thread: the trace's counter tracks) and its critical path. And `diff --html`'s page
//! of both diffs' table ([`show_diff`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::Args;
use perfgraph_core::html::{Page, Series};
use perfgraph_core::trace;

use crate::failure::Failure;
use crate::{critical, load};

#[derive(Args, Debug)]
pub struct HtmlArgs {
    /// The call-tree JSON (PERFGRAPH_JSON, `perfgraph merge`'s or `dump`'s output).
    run: PathBuf,
    /// The run's Chrome JSON trace (PERFGRAPH_TRACE=run.json), for the plots over time and the critical
    /// path.
    trace: Option<PathBuf>,
    /// The page to write (`-` for standard output).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// Series a page plots at most: a trace of thousands of threads has a CPU track each.
pub const MAX_SERIES: usize = 48;

pub fn run(a: &HtmlArgs) -> Result<u8, Failure> {
    let report = load::run(&a.run)?;
    let mut page = Page::default();
    page.sources.push(a.run.display().to_string());
    if let Some(path) = &a.trace {
        page.sources.push(path.display().to_string());
        let (series, left_out) = series(path)?;
        page.series = series;
        if left_out > 0 {
            page.notes.push(format!(
                "{left_out} more series of the trace are not plotted (the first {MAX_SERIES} are)."
            ));
        }
        match critical::table(path, None, None) {
            Ok(text) => page.critical_path = Some(text),
            Err(Failure(why)) => page.notes.push(format!("No critical path: {why}")),
        }
    }
    load::write(Some(&a.output), |w| report.write_html(w, &page))?;
    Ok(0)
}

/// The trace's counter tracks (`"ph": "C"` events), a series per track and value name, in the order they
/// first appear, their times as ns from the run's start; and how many series beyond [`MAX_SERIES`] were
/// left out.
fn series(path: &Path) -> Result<(Vec<Series>, usize), Failure> {
    let mut out: Vec<Series> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut left_out = 0usize;
    trace::read_events(load::chrome_trace(path, "html")?, |e| {
        if e["ph"] != "C" {
            return Ok(true);
        }
        let (Some(track), Some(ts), Some(args)) =
            (e["name"].as_str(), e["ts"].as_f64(), e["args"].as_object())
        else {
            return Ok(true);
        };
        let at_ns = (ts.max(0.0) * 1e3) as u64;
        for (key, value) in args {
            let Some(v) = value.as_f64() else { continue };
            let id = (track.to_owned(), key.clone());
            let i = match index.get(&id) {
                Some(&i) => i,
                None if out.len() < MAX_SERIES => {
                    let (name, unit) = if key == track {
                        (track.to_owned(), "")
                    } else if args.len() == 1 {
                        (track.to_owned(), key.as_str())
                    } else {
                        (format!("{track}: {key}"), "")
                    };
                    out.push(Series::new(&name, unit));
                    index.insert(id, out.len() - 1);
                    out.len() - 1
                }
                None => {
                    index.insert(id, usize::MAX);
                    left_out += 1;
                    continue;
                }
            };
            if i == usize::MAX {
                continue;
            }
            // Bounded as it is filled (`Series::MAX_POINTS`).
            out[i].push(at_ns, v);
        }
        Ok(true)
    })
    .map_err(|e| Failure(format!("{}: {e}", path.display())))?;
    Ok((out, left_out))
}

/// Both diffs' output: the table (`header`, `cells`) with `lines` under it, printed; and with `--html`
/// (`page`), the same as a page, each row's class its mark.
pub fn show_diff<const N: usize>(
    page: Option<&Path>,
    title: &str,
    (header, cells): (&[String; N], &[[String; N]]),
    marks: &[&str],
    lines: &str,
) -> Result<(), Failure> {
    if let Some(page) = page {
        write_page(page, title, (header, cells), marks, lines)?;
    }
    load::print(&(crate::table::render(header, cells, 1, true) + lines))
}

/// `--html`: the table (`header`, `cells`) as a page, each row's class its mark, `lines` under it.
fn write_page<const N: usize>(
    page: &Path,
    title: &str,
    (header, cells): (&[String; N], &[[String; N]]),
    marks: &[&str],
    lines: &str,
) -> Result<(), Failure> {
    let rows: Vec<Vec<String>> = cells.iter().map(|r| r.to_vec()).collect();
    let classes: Vec<&str> = marks
        .iter()
        .map(|m| match *m {
            "REGRESSED" => "regressed",
            "improved" => "improved",
            "undecided" => "undecided",
            "added" => "added",
            "removed" => "removed",
            _ => "",
        })
        .collect();
    let lines: Vec<String> = lines.lines().map(str::to_owned).collect();
    load::write(Some(page), |w| {
        perfgraph_core::html::write_table_page(w, title, header, &rows, &classes, &lines)
    })
}
