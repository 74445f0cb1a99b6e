//! The HTML page's section: the size of the run, of the page, and the time to write and to load it, for
//! synthetic runs of 1,000 to 1,000,000 call paths. `record --html-only` measures it alone and puts it in
//! place of the one in the file ([`replace`]); every other section is left as it was.

use std::fmt::Write as _;

use perfgraph_core::html::{MAX_FRAMES, MAX_TABLE_ROWS};

use crate::measure::html::{BUDGET_MS, HtmlFigures, PATHS, RUNS};

/// The section's heading, which [`replace`] finds.
pub const HEADING: &str = "## HTML page (`perfgraph html`, `PERFGRAPH_HTML`)";

/// `doc` with its HTML page section replaced by one for `h` (appended if it has none).
pub fn replace(doc: &str, h: &HtmlFigures) -> String {
    let mut section = String::new();
    write(&mut section, h);
    super::fmt::replace_section(doc, HEADING, &section)
}

/// A count with a comma every three digits (`1,000,000`).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A list as prose: `a, b and c`.
fn prose(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Bytes, as MB and exactly.
fn bytes(b: u64) -> String {
    format!("{:.2} MB ({b} B)", b as f64 / 1e6)
}

/// Writes the section.
pub fn write(doc: &mut String, h: &HtmlFigures) {
    let m = &h.machine;
    let sizes = prose(&PATHS.map(thousands));
    let _ = writeln!(
        doc,
        "{HEADING}\n\n\
         `benches/run.sh html` measures this section alone (the whole `benches/run.sh` measures it last). For \
         runs of {sizes} call paths, `synthetic_run N` (`benches/src/bin/synthetic_run.rs`) writes a run JSON \
         as `PERFGRAPH_JSON` lays it out: a tree 9 levels deep at most under the program root, 320 section \
         names, calls multiplying down the tree, heavy-tailed times (a few paths hold most of the time), \
         resident-memory changes on one path in ten, 4 threads each with its own tree, latency histograms \
         on each thread's first 1,023 paths. The release `perfgraph html RUN -o page.html` writes the page \
         ({RUNS} runs, wall time from spawn to exit, the median). Headless Chromium then loads it {RUNS} \
         times, each with a fresh profile directory: `{unshare}chromium --headless=new --no-sandbox \
         --disable-gpu --user-data-dir=DIR --virtual-time-budget={BUDGET_MS} --dump-dom \
         'file:///…/page.html#selftest'`; with that hash the page's script reports `frames` (the flame \
         graph's frames in the page's data), `render_ms` (`performance.now()` at the end of the first \
         render: from navigation start, so parsing the page is in it) and its `errors`, which must be none. \
         Medians of the {RUNS} loads.\n\n\
         Measured {date} UTC, commit {commit}{dirty}, on {cpu}, {cores} cores available (a VM), load \
         average {load} at the start; {chromium}.\n",
        unshare = if h.unshared { "unshare -rn " } else { "" },
        date = m.date,
        commit = m.commit,
        dirty = if m.dirty {
            " (with uncommitted changes)"
        } else {
            ""
        },
        cpu = m.cpu,
        cores = m.cores,
        load = m.load,
        chromium = match &h.chromium {
            Ok(version) => format!(
                "{version}{}",
                if h.unshared {
                    ", without a network (`unshare -rn`)"
                } else {
                    ""
                }
            ),
            Err(why) => format!("Chromium not measured: {why}"),
        },
    );
    if h.chromium.is_err() {
        let _ = writeln!(
            doc,
            "Chromium was not found, so the page's load is not measured: its columns say so.\n"
        );
    }
    let _ = writeln!(
        doc,
        "| Call paths | run JSON size | page size | frames drawn in the data (`frames`) | \
         `perfgraph html` time | Chromium `render_ms` (median of {RUNS}) | Chromium command wall time \
         (median of {RUNS}) |\n|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in &h.rows {
        let (frames, render, wall) = match &r.load {
            Some(l) => (
                thousands(l.frames as usize),
                format!("{:.0} ms", l.render_ms),
                format!("{:.2} s", l.wall_s),
            ),
            None => (
                "not measured".into(),
                "not measured".into(),
                "not measured".into(),
            ),
        };
        let _ = writeln!(
            doc,
            "| {} | {} | {} | {frames} | {:.2} s | {render} | {wall} |",
            thousands(r.paths),
            bytes(r.json_bytes),
            bytes(r.page_bytes),
            r.html_s,
        );
    }
    let made = h
        .rows
        .iter()
        .map(|r| format!("{:.2} s", r.generate_s))
        .collect::<Vec<_>>();
    let made = prose(&made);
    let (frames, rows) = (thousands(MAX_FRAMES), thousands(MAX_TABLE_ROWS));
    let _ = writeln!(
        doc,
        "\nThe page stays small whatever the run: its flame graph keeps the heaviest {frames} call \
         paths (`perfgraph_core::html::MAX_FRAMES`) and its Performance Graph table the heaviest \
         {rows} (`MAX_TABLE_ROWS`), and the page states what it left out; `perfgraph html`'s \
         time grows with the run JSON, which it reads whole; the page does not. `synthetic_run` \
         wrote the runs in {made}."
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::html::{HtmlRow, Load};
    use crate::measure::machine::Machine;

    fn figures(chromium: bool) -> HtmlFigures {
        HtmlFigures {
            machine: Machine {
                command: "benches/run.sh html".into(),
                date: "2026-11-28 21:30".into(),
                commit: "8cb7191abcde".into(),
                dirty: false,
                cpu: "AMD EPYC".into(),
                cores: 2,
                clock_source: "tsc".into(),
                kernel_clocksource: "tsc".into(),
                kernel: "Linux".into(),
                toolchain: "rustc".into(),
                load: "1.00 0.50 0.25".into(),
            },
            rows: vec![HtmlRow {
                paths: 1000,
                json_bytes: 1_723_165,
                generate_s: 0.01,
                page_bytes: 250_000,
                html_s: 0.031,
                load: chromium.then_some(Load {
                    frames: 1001,
                    drawn: 900,
                    render_ms: 120.4,
                    wall_s: 1.234,
                }),
            }],
            chromium: if chromium {
                Ok("Chromium 140".into())
            } else {
                Err("`chromium` could not be run".into())
            },
            unshared: true,
        }
    }

    #[test]
    fn a_row_gives_the_sizes_and_the_medians() {
        let mut doc = String::new();
        write(&mut doc, &figures(true));
        assert!(doc.starts_with(HEADING));
        assert!(doc.contains(
            "| 1,000 | 1.72 MB (1723165 B) | 0.25 MB (250000 B) | 1,001 | 0.03 s | 120 ms | 1.23 s |"
        ));
    }

    #[test]
    fn counts_and_lists_read_as_prose() {
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(100_000), "100,000");
        assert_eq!(thousands(999), "999");
        let sizes = prose(&PATHS.map(thousands));
        assert_eq!(sizes, "1,000, 100,000 and 1,000,000");
    }

    #[test]
    fn without_chromium_the_section_says_so() {
        let mut doc = String::new();
        write(&mut doc, &figures(false));
        assert!(doc.contains("Chromium not measured: `chromium` could not be run"));
        assert!(doc.contains("| not measured | 0.03 s | not measured | not measured |"));
    }

    #[test]
    fn replacing_leaves_every_other_section_as_it_was() {
        let before = "# Record\n\n## A\n\ntext a\n\n";
        let after = "## Z\n\ntext z\n";
        let mut old = String::new();
        write(&mut old, &figures(false));
        let doc = format!("{before}{old}{after}");
        let new = replace(&doc, &figures(true));
        assert!(new.starts_with(before) && new.ends_with(after));
        assert!(new.contains("| 1,001 |"));
        // Appended where there is none, then replaced in place.
        let appended = replace(before, &figures(true));
        assert_eq!(replace(&appended, &figures(true)), appended);
    }
}
