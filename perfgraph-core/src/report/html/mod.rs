//! The run as one self-contained HTML page (`PERFGRAPH_HTML`, `perfgraph html`): a flame graph of the
//! call tree (drawn by the page's own script, [`flame`]), the tables of the text report made of the same
//! cells ([`Grid`]), latency histograms and series over time as inline SVG ([`plots`]), the critical path,
//! and what the run was. No network request, no external script, style or font: the page's
//! Content-Security-Policy allows none, and it works from `file://`.
//!
//! The page's size is bounded whatever the run: the flame graph keeps at most [`MAX_FRAMES`] call paths
//! and the `Performance Graph` table [`MAX_TABLE_ROWS`], the heaviest, and the page says what it left
//! out.

mod flame;
mod plots;
#[cfg(test)]
mod tests;

use std::io::{self, Write};

use super::shown;
use super::table::{Cell, Grid};
use crate::base::config::{ReportSelection, Verbosity};
use crate::base::process;
use crate::base::text;
use crate::data::report::Report;

pub use flame::{MAX_FRAMES, MAX_TABLE_ROWS};

const CSS: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// What the page shows besides the report's own figures.
///
/// ```
/// let mut page = perfgraph_core::html::Page::default();
/// let mut rss = perfgraph_core::html::Series::new("Resident memory", "MB");
/// rss.push(0, 12.0);
/// rss.push(1_000_000_000, 48.5);
/// page.series.push(rss);
/// page.sources.push("run.json".to_owned());
/// let mut html = Vec::new();
/// perfgraph_core::report().write_html(&mut html, &page).unwrap();
/// assert!(String::from_utf8(html).unwrap().contains("Resident memory"));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Page {
    /// Series over the run's time (resident memory, counters, CPU per thread): a plot each.
    pub series: Vec<Series>,
    /// The `Critical Path:` table and its wait chains, as `perfgraph report --critical-path` prints them.
    pub critical_path: Option<String>,
    /// Where the page's figures came from (file names), shown under its title.
    pub sources: Vec<String>,
    /// Lines on what the page leaves out (series not plotted, no critical path and why).
    pub notes: Vec<String>,
}

/// One series over the run's time, plotted as a line.
///
/// ```
/// let mut s = perfgraph_core::html::Series::new("Heap", "MB");
/// s.push(500_000_000, 3.25);
/// assert_eq!(s.points, [(500_000_000, 3.25)]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Series {
    /// What it measures (`Resident memory`, a counter's name).
    pub name: String,
    /// The unit of its values (`MB`, `%`, or empty).
    pub unit: String,
    /// (ns since the run's start, value), in time order.
    pub points: Vec<(u64, f64)>,
}

impl Series {
    /// An empty series.
    pub fn new(name: &str, unit: &str) -> Series {
        Series {
            name: name.to_owned(),
            unit: unit.to_owned(),
            points: Vec::new(),
        }
    }

    /// Most points a series keeps as it is filled ([`push`](Series::push)): a trace of hours holds
    /// millions of samples of a counter.
    pub const MAX_POINTS: usize = 100_000;

    /// Adds the value at `at_ns` (ns since the run's start). At [`MAX_POINTS`](Series::MAX_POINTS),
    /// every four points become their lowest and highest, so the line keeps its envelope in half the
    /// points.
    pub fn push(&mut self, at_ns: u64, value: f64) {
        self.points.push((at_ns, value));
        if self.points.len() >= Series::MAX_POINTS {
            self.points = plots::envelope(&self.points, 4);
        }
    }
}

impl Report {
    /// The page (module documentation) to `out`: every table `perfgraph report` prints for this run, from
    /// the same cells, and the flame graph, plots and metadata.
    pub fn write_html(&self, out: &mut dyn Write, page: &Page) -> io::Result<()> {
        let mut w = io::BufWriter::new(out);
        let title = format!("perfgraph: {}", self.run.program);
        write!(
            w,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src \
             'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"perfgraph {}\">\n<title>{}</title><style>\n{CSS}</style></head>\n<body>\n",
            env!("CARGO_PKG_VERSION"),
            esc(&title)
        )?;
        self.header(&mut w, &title, page)?;
        let cut = flame::Cut::of(self, MAX_FRAMES);
        let tables = self.page_tables(&flame::Cut::of(self, MAX_TABLE_ROWS));
        write!(w, "<nav><a href=\"#flame-section\">Flame graph</a>")?;
        for t in &tables {
            write!(w, " <a href=\"#{}\">{}</a>", t.id, esc(t.title))?;
        }
        if page.critical_path.is_some() {
            write!(w, " <a href=\"#critical\">Critical path</a>")?;
        }
        if !page.series.is_empty() {
            write!(w, " <a href=\"#series\">Over time</a>")?;
        }
        writeln!(w, "</nav>\n<main>")?;
        self.flame_section(&mut w, &cut)?;
        for t in &tables {
            process::progress();
            writeln!(w, "<section id=\"{}\"><h2>{}</h2>", t.id, esc(t.title))?;
            if let Some(note) = &t.note {
                writeln!(w, "<p class=\"note\">{}</p>", esc(note))?;
            }
            write_table(&mut w, &t.grid, &[])?;
            if t.id == "t-latency" {
                plots::latency(&mut w, self)?;
            }
            writeln!(w, "</section>")?;
        }
        if let Some(text) = &page.critical_path {
            writeln!(
                w,
                "<section id=\"critical\"><h2>Critical path</h2>\n<pre class=\"text\">{}</pre></section>",
                esc(text)
            )?;
        }
        if !page.series.is_empty() {
            writeln!(
                w,
                "<section id=\"series\"><h2>Over time</h2><div class=\"plots\">"
            )?;
            for s in &page.series {
                plots::series(&mut w, s, self.run.wall_ns)?;
            }
            writeln!(w, "</div></section>")?;
        }
        writeln!(w, "</main>")?;
        write!(
            w,
            "<script type=\"application/json\" id=\"perfgraph-data\">"
        )?;
        flame::write_data(&mut w, self, &cut)?;
        writeln!(w, "</script>\n<script>\n{SCRIPT}</script>\n</body></html>")?;
        w.flush()
    }

    fn header(&self, w: &mut dyn Write, title: &str, page: &Page) -> io::Result<()> {
        writeln!(w, "<header><h1>{}</h1>", esc(title))?;
        if !page.sources.is_empty() {
            writeln!(
                w,
                "<p class=\"note\">From {}.</p>",
                esc(&page.sources.join(", "))
            )?;
        }
        let p = &self.run.process;
        let mut meta: Vec<(&str, String)> = vec![
            ("Program", self.run.program.to_owned()),
            ("Host", p.host.clone()),
            ("Process", format!("pid {}, rank {}", p.pid, p.rank)),
            ("Started", utc(p.start_unix_ns)),
            (
                "Wall time",
                format!("{:.3} s", self.run.wall_ns as f64 / 1e9),
            ),
            ("Clock", self.run.clock.to_owned()),
            (
                "Verbosity",
                match self.run.verbosity {
                    Verbosity::Level(v) => v.to_string(),
                    Verbosity::Off => "off".to_owned(),
                },
            ),
            ("Threads", format!("{} that recorded", self.threads.len())),
            (
                "Call paths",
                self.tree.nodes.len().saturating_sub(1).to_string(),
            ),
            (
                "Heap",
                if self.run.heap_counted {
                    "counted (CountingAllocator)"
                } else {
                    "not counted"
                }
                .to_owned(),
            ),
            ("Records lost", self.dropped.to_string()),
        ];
        if let Some(m) = &self.merged {
            meta.push(("Processes merged", m.processes.len().to_string()));
        }
        write!(w, "<dl class=\"meta\">")?;
        for (k, v) in meta {
            write!(w, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(&v))?;
        }
        writeln!(w, "</dl>")?;
        let footer = self.footer();
        if !footer.is_empty() || !page.notes.is_empty() {
            write!(w, "<ul class=\"losses\">")?;
            for line in footer.lines().chain(page.notes.iter().map(String::as_str)) {
                write!(w, "<li>{}</li>", esc(line))?;
            }
            writeln!(w, "</ul>")?;
        }
        writeln!(w, "</header>")
    }

    fn flame_section(&self, w: &mut dyn Write, cut: &flame::Cut) -> io::Result<()> {
        let bytes = if self.run.heap_counted {
            "<option value=\"bytes\">Bytes allocated</option>"
        } else {
            ""
        };
        write!(
            w,
            "<section id=\"flame-section\"><h2>Flame graph</h2>\n<div class=\"controls\"><input \
             id=\"search\" type=\"search\" placeholder=\"Search sections\" aria-label=\"Search \
             sections\"> <select id=\"weight\" aria-label=\"Frame width\"><option value=\"time\">Time \
             (total)</option>{bytes}</select> <button id=\"reset\" type=\"button\">Reset zoom</button> \
             <span id=\"match\" aria-live=\"polite\"></span></div>\n<div id=\"flame\"><canvas \
             id=\"flame-canvas\"></canvas><div id=\"tip\" hidden></div></div>\n<p class=\"note\">One \
             frame per call path, as wide as its total time (children included); click to zoom, hover \
             for its figures.{}</p></section>\n",
            esc(&cut.note())
        )
    }

    /// The tables of `perfgraph report` (every one this run has figures for), as `PERFGRAPH_REPORT=all`
    /// selects them; the graph's rows those `cut` keeps.
    fn page_tables(&self, cut: &flame::Cut) -> Vec<Table> {
        let all = ReportSelection::all();
        let n = all.sections.unwrap_or(10);
        let mut out = vec![
            Table {
                id: "t-graph",
                title: "Performance Graph",
                grid: self.tree_grid(&cut.table_rows(self)),
                note: cut.table_note(),
            },
            Table::new("t-branch", "Heaviest Branch", self.branch_grid()),
            Table::new("t-sections", "Heaviest Sections", self.sections_grid(n)),
            Table::new("t-latency", "Latency", self.latency_grid(n)),
            Table::new("t-threads", "Threads", self.threads_grid()),
        ];
        if self.tree.nodes.iter().any(|n| n.is_async()) {
            out.push(Table::new("t-async", "Async Sections", self.async_grid()));
        }
        if self.run.heap_counted {
            out.push(Table::new("t-alloc", "Allocations", self.alloc_grid()));
        }
        if self.cpu_measured() {
            out.push(Table::new("t-cpu", "CPU", self.cpu_grid()));
        }
        if !self.run.counters.is_empty() {
            out.push(Table::new("t-counters", "Counters", self.counters_grid()));
        }
        if !self.run.locks.is_empty() {
            out.push(Table::new("t-locks", "Locks", self.locks_grid()));
        }
        if self.merged.is_some() {
            out.push(Table::new(
                "t-processes",
                "Processes",
                self.processes_grid(),
            ));
        }
        out
    }
}

/// A page of one table and the lines under it, styled and sortable as the run's page (what `perfgraph diff
/// --html` writes): a cell that reads as a number (`12.5`, `+3.1%`, `-`) is right-aligned and sorts as
/// one; a row's class (`regressed`, `improved`, `undecided`, `added`, `removed`) colours it.
///
/// ```
/// let mut html = Vec::new();
/// perfgraph_core::html::write_table_page(
///     &mut html,
///     "perfgraph diff: base.json → head.json",
///     &["Section".to_owned(), "Change".to_owned()],
///     &[vec!["solve".to_owned(), "+12.0%".to_owned()]],
///     &["regressed"],
///     &["1 row regressed past 10%.".to_owned()],
/// )
/// .unwrap();
/// let html = String::from_utf8(html).unwrap();
/// assert!(html.contains("<tr class=\"regressed\"><td class=\"name\">solve</td><td class=\"num\" data-v=\"12\">+12.0%</td>"));
/// ```
pub fn write_table_page(
    out: &mut dyn Write,
    title: &str,
    headers: &[String],
    rows: &[Vec<String>],
    classes: &[&str],
    lines: &[String],
) -> io::Result<()> {
    let mut w = io::BufWriter::new(out);
    write!(
        w,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src \
         'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{0}</title><style>\n{CSS}</style></head>\n<body>\n<header><h1>{0}</h1></header>\n<main>\
         <section id=\"t-diff\">\n",
        esc(title)
    )?;
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| {
                    let figure = c.trim_start_matches('+').trim_end_matches('%');
                    if c == "-" || figure.parse::<f64>().is_ok() {
                        Cell::Number(c.clone())
                    } else {
                        Cell::Text(c.clone())
                    }
                })
                .collect()
        })
        .collect();
    write_table(&mut w, &Grid::new(&headers, cells), classes)?;
    for line in lines {
        writeln!(w, "<p>{}</p>", esc(line))?;
    }
    writeln!(
        w,
        "</section></main>\n<script>\n{SCRIPT}</script>\n</body></html>"
    )?;
    w.flush()
}

/// One table of the page.
struct Table {
    id: &'static str,
    title: &'static str,
    grid: Grid,
    note: Option<String>,
}

impl Table {
    fn new(id: &'static str, title: &'static str, grid: Grid) -> Table {
        Table {
            id,
            title,
            grid,
            note: None,
        }
    }
}

/// `grid` as a sortable HTML table: a text cell as the text table shows it (the name column keeps its
/// indentation), a figure right-aligned with its value in `data-v` for sorting. `classes` gives rows a
/// class (`regressed`, …), by index, where it is not empty.
pub(crate) fn write_table(w: &mut dyn Write, grid: &Grid, classes: &[&str]) -> io::Result<()> {
    write!(w, "<table class=\"sortable\"><thead><tr>")?;
    for h in &grid.headers {
        write!(w, "<th scope=\"col\">{}</th>", esc(h))?;
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for (i, row) in grid.rows.iter().enumerate() {
        process::progress_at(i);
        match classes.get(i).filter(|c| !c.is_empty()) {
            Some(c) => write!(w, "<tr class=\"{c}\">")?,
            None => write!(w, "<tr>")?,
        }
        for cell in row {
            let text = esc(&cell.text());
            match (cell, cell.value()) {
                (Cell::Text(_), _) | (_, None) => write!(w, "<td class=\"name\">{text}</td>")?,
                (_, Some(v)) => write!(w, "<td class=\"num\" data-v=\"{v}\">{text}</td>")?,
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>")
}

/// `s` safe in HTML text and attribute values.
pub(crate) fn esc(s: &str) -> String {
    text::replace_chars(
        s,
        &[
            ('&', "&amp;"),
            ('<', "&lt;"),
            ('>', "&gt;"),
            ('"', "&quot;"),
            ('\'', "&#39;"),
        ],
    )
}

/// A section's name as the page shows it (as the tables do: control characters escaped, cut).
fn name(s: &str) -> String {
    shown(s)
}

/// Ns since the Unix epoch as `2026-11-28 21:05:54 UTC` (Hinnant's days-to-civil).
fn utc(unix_ns: u64) -> String {
    if unix_ns == 0 {
        return "unknown".to_owned();
    }
    let secs = unix_ns / 1_000_000_000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}
