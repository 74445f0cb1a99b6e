//! The gated diff's text: the table, what it rests on, the exact figures that changed, and the verdict.

use crate::compare::{Metric, Options, Paths};
use crate::gate::samples::Samples;
use crate::gate::{LEVEL, Row, Verdict, stats};
use crate::table::{self, list};

/// The whole text `diff` prints for bundles: the table, then [`lines`] (as `gate::run` puts them
/// together; the unit tests read it whole).
#[cfg(test)]
pub fn text(
    rows: &[Row],
    b: &Samples,
    h: &Samples,
    labels: [&str; 2],
    o: &Options,
    paths: &Paths,
) -> String {
    let (header, cells) = grid(rows, o, paths);
    table::render(&header, &cells, 1, true) + &lines(rows, b, h, labels, o, paths)
}

/// The lines under the table: what it rests on, the exact figures that changed, and the verdict.
pub fn lines(
    rows: &[Row],
    b: &Samples,
    h: &Samples,
    labels: [&str; 2],
    o: &Options,
    paths: &Paths,
) -> String {
    let mut out = String::new();
    let tested = rows.iter().filter(|r| r.holm.is_some()).count();
    out.push_str(&format!(
        "Runs: {} base, {} head (base: {}; head: {}). Each side's median; the change is head/base",
        b.runs, h.runs, labels[0], labels[1],
    ));
    if tested > 0 {
        out.push_str(&format!(
            " with a {:.0}% run-level bootstrap interval; p is corrected by Holm's method over the \
             {tested} {} compared. A row fails when its interval lies wholly beyond ±{}% (--noise) and \
             its corrected p is below {:.2}",
            LEVEL * 100.0,
            if tested == 1 { "row" } else { "rows" },
            o.noise * 100.0,
            1.0 - LEVEL,
        ));
    }
    out.push_str(".\n");
    if rows.iter().any(|r| r.counted) {
        out.push_str(&format!(
            "Rows whose p reads counted were decided by their counts, which vary between runs by {} of \
             their median or less: the interval holds every head run over every base run, and the row \
             fails when it lies wholly beyond the noise.\n",
            if o.metric == Metric::Instructions {
                format!("{}%", o.noise * 10.0)
            } else {
                "nothing".to_owned()
            }
        ));
    }
    for (s, side) in [(b, "base"), (h, "head")] {
        if s.failed > 0 {
            out.push_str(&format!(
                "Note: {} {side} {} exited with a status other than 0; {} reports are compared as they \
                 are.\n",
                s.failed,
                if s.failed == 1 { "run" } else { "runs" },
                if s.failed == 1 { "its" } else { "their" },
            ));
        }
    }
    let mut missing: Vec<String> = Vec::new();
    for k in b.missing.iter().chain(&h.missing) {
        let name = paths.display(*k);
        if !missing.contains(&name) {
            missing.push(name);
        }
    }
    if !missing.is_empty() {
        out.push_str(&format!(
            "Not compared: {} {} no function in Callgrind's output (inlined away, or an async fn's \
             body; #[inline(never)] keeps one): {}.\n",
            missing.len(),
            if missing.len() == 1 {
                "section has"
            } else {
                "sections have"
            },
            list(&missing)
        ));
    }
    out.push_str(&exact(rows, b, h, paths));
    let names = |v: Verdict| -> Vec<String> {
        rows.iter()
            .filter(|r| r.verdict == v)
            .map(|r| paths.display(r.key))
            .collect()
    };
    out.push_str(&table::removed(
        &names(Verdict::Removed),
        o.paths,
        o.fail_on_removed,
    ));
    let regressed = names(Verdict::Regressed);
    if regressed.is_empty() {
        out.push_str(&format!(
            "No regression beyond the noise ({}%).\n",
            o.noise * 100.0
        ));
    } else {
        out.push_str(&format!(
            "{} regressed beyond the noise ({}%): {}.\n",
            regressed.len(),
            o.noise * 100.0,
            list(&regressed)
        ));
    }
    let needed = |r: &Row| match r.needed {
        Some(n) => format!("not enough runs: about {n} per side"),
        None => "more runs would tell".to_owned(),
    };
    for r in rows.iter().filter(|r| r.verdict == Verdict::Undecided) {
        out.push_str(&format!(
            "Undecided: {} is {:+.1}% slower, but whether by more than the noise the runs cannot tell: \
             {}.\n",
            paths.display(r.key),
            (r.effect.expect("compared").ratio - 1.0) * 100.0,
            needed(r)
        ));
    }
    for r in rows.iter().filter(|r| r.verdict == Verdict::Unshown) {
        out.push_str(&format!(
            "Not shown: {} looks {:+.1}% slower, but the runs show no change (p {}); it passes; to tell: \
             {}.\n",
            paths.display(r.key),
            (r.effect.expect("compared").ratio - 1.0) * 100.0,
            r.holm.map_or("-".to_owned(), |p| format!("{p:.3}")),
            needed(r)
        ));
    }
    out
}

/// The word a verdict puts in its row's last column.
pub fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Regressed => "REGRESSED",
        Verdict::Improved => "improved",
        Verdict::Undecided => "undecided",
        Verdict::Removed => "removed",
        Verdict::Added => "added",
        Verdict::Unshown => "not shown",
        Verdict::Same | Verdict::Untested => "",
    }
}

/// The table's header and cells.
pub fn grid(rows: &[Row], o: &Options, paths: &Paths) -> ([String; 7], Vec<[String; 7]>) {
    let (what, scale) = match o.metric {
        Metric::Instructions => ("Ir(M)", 1e6),
        Metric::Total => ("total(ms)", 1e6),
        Metric::Wall => ("wall(ms)", 1e6),
        Metric::SelfTime => ("self(ms)", 1e6),
        Metric::P99 => ("p99(ms)", 1e6),
        Metric::Cpu => ("cpu(ms)", 1e6),
    };
    let median = |v: &Option<Vec<f64>>| {
        v.as_ref().map_or("-".to_owned(), |v| {
            format!("{:.3}", stats::median(v) / scale)
        })
    };
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    let header = [
        if o.paths { "Call path" } else { "Section" }.to_owned(),
        format!("Base {what}"),
        format!("Head {what}"),
        "Change".to_owned(),
        format!("{:.0}% interval", LEVEL * 100.0),
        "p (Holm)".to_owned(),
        String::new(),
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let (change, interval) = match r.effect {
                Some(e) => (pct(e.ratio), format!("{} to {}", pct(e.low), pct(e.high))),
                None => ("-".to_owned(), "-".to_owned()),
            };
            let p = match r.holm {
                _ if r.counted => "counted".to_owned(),
                Some(p) if p < 0.001 => "<0.001".to_owned(),
                Some(p) => format!("{p:.3}"),
                None => "-".to_owned(),
            };
            let mark = mark(r.verdict);
            [
                paths.display(r.key),
                median(&r.base),
                median(&r.head),
                change,
                interval,
                p,
                mark.to_owned(),
            ]
        })
        .collect();
    (header, cells)
}

/// The calls and allocations that are the same in every run of each side and differ between the sides.
fn exact(rows: &[Row], b: &Samples, h: &Samples, paths: &Paths) -> String {
    let mut out = String::new();
    for r in rows {
        let (Some(eb), Some(eh)) = (b.exact.get(&r.key), h.exact.get(&r.key)) else {
            continue;
        };
        let constant = |v: &[(u64, u64)]| v.iter().all(|x| *x == v[0]).then(|| v[0]);
        let (Some(cb), Some(ch)) = (constant(eb), constant(eh)) else {
            continue;
        };
        let mut what = Vec::new();
        if cb.0 != ch.0 {
            what.push(format!("calls {} → {}", cb.0, ch.0));
        }
        if cb.1 != ch.1 {
            what.push(format!("allocations {} → {}", cb.1, ch.1));
        }
        if !what.is_empty() {
            out.push_str(&format!(
                "  {}: {}\n",
                paths.display(r.key),
                what.join(", ")
            ));
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("Exact figures that changed (the same in every run of each side):\n{out}")
}
