//! The predictions as a table for people, and as JSON for scripts.

use std::fmt::Write;

use super::estimate::{Baseline, Cell, Measure};
use super::profile::Profile;

/// What the table is about: the progress point, what is predicted there, and how many runs made the
/// profile (when this invocation made it).
pub struct Shown<'a> {
    pub point: &'a str,
    pub measure: Measure,
    pub runs: Option<u32>,
}

/// Sections in order of the largest predicted gain at any speed-up (coz's "max speedup" order), then
/// their speed-ups in order.
fn ordered(cells: &[Cell]) -> Vec<&Cell> {
    let best = |section: &str| {
        cells
            .iter()
            .filter(|c| c.section == section)
            .map(|c| c.estimate)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let mut out: Vec<&Cell> = cells.iter().collect();
    out.sort_by(|a, b| {
        best(&b.section)
            .total_cmp(&best(&a.section))
            .then_with(|| a.section.cmp(&b.section))
            .then_with(|| a.speedup.cmp(&b.speedup))
    });
    out
}

/// The sections, in the table's order.
pub fn sections(cells: &[Cell]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in ordered(cells) {
        if !out.contains(&c.section.as_str()) {
            out.push(&c.section);
        }
    }
    out
}

fn pct(f: f64) -> String {
    if f.is_finite() {
        format!("{:+.1}%", f * 100.0)
    } else {
        "?".to_owned()
    }
}

/// The table: a heading line, the baseline, then one row per section and speed-up.
pub fn render(shown: &Shown, base: &Baseline, cells: &[Cell], p: &Profile) -> String {
    let mut s = String::new();
    let runs = shown.runs.map_or(String::new(), |n| {
        format!("{n} run{}, ", if n == 1 { "" } else { "s" })
    });
    let (what, per) = match shown.measure {
        Measure::Throughput => ("completions", "per completion"),
        Measure::Latency => ("latency, by Little's law", "latency"),
    };
    let _ = writeln!(
        s,
        "Causal profile: {runs}{} experiments ({} not reported), progress point {:?} ({what})",
        p.experiments.len(),
        p.unreported,
        shown.point
    );
    let _ = writeln!(
        s,
        "Baseline: {} experiments at 0%, {:.3} ms {per}",
        base.experiments,
        base.period_ns / 1e6
    );
    let width = cells
        .iter()
        .map(|c| c.section.len())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = writeln!(
        s,
        "\n{:<width$}  {:>9}  {:>16}  {:>18}  {:>11}",
        "Section", "Speed-up", "Program speed-up", "95% interval", "Experiments"
    );
    for c in ordered(cells) {
        let interval = format!("{} .. {}", pct(c.low), pct(c.high));
        let _ = writeln!(
            s,
            "{:<width$}  {:>8}%  {:>16}  {:>18}  {:>11}",
            c.section,
            c.speedup,
            pct(c.estimate),
            interval,
            c.experiments
        );
    }
    s
}

/// The predictions as JSON: `{"progress": .., "baseline": {..}, "predictions": [..]}`.
pub fn json(shown: &Shown, base: &Baseline, cells: &[Cell]) -> String {
    let num = |f: f64| {
        if f.is_finite() {
            serde_json::json!(f)
        } else {
            serde_json::Value::Null
        }
    };
    let predictions: Vec<serde_json::Value> = ordered(cells)
        .into_iter()
        .map(|c| {
            serde_json::json!({
                "section": c.section,
                "speedup": c.speedup,
                "program_speedup": num(c.estimate),
                "low": num(c.low),
                "high": num(c.high),
                "experiments": c.experiments,
            })
        })
        .collect();
    let measure = match shown.measure {
        Measure::Throughput => "throughput",
        Measure::Latency => "latency",
    };
    let doc = serde_json::json!({
        "progress": shown.point,
        "measure": measure,
        "baseline": {"experiments": base.experiments, "period_ns": base.period_ns},
        "predictions": predictions,
    });
    format!("{doc:#}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causal::estimate::test_cell as cell;

    #[test]
    fn sections_by_their_best_gain() {
        let cells = [cell("a", 0, 0.0), cell("a", 50, 0.05), cell("b", 50, 0.3)];
        let base = Baseline {
            experiments: 4,
            period_ns: 1e7,
        };
        let shown = Shown {
            point: "step",
            measure: Measure::Throughput,
            runs: Some(2),
        };
        let text = render(&shown, &base, &cells, &Profile::default());
        let rows: Vec<&str> = text.lines().skip(4).collect();
        assert!(rows[0].starts_with("b "), "{text}");
        assert!(
            rows[1].starts_with("a ") && rows[1].contains(" 0%"),
            "{text}"
        );
        assert!(
            text.starts_with("Causal profile: 2 runs, 0 experiments"),
            "{text}"
        );
        assert!(
            rows[0].contains("+30.0%") && rows[0].contains("+29.0% .. +31.0%"),
            "{text}"
        );
        let j: serde_json::Value = serde_json::from_str(&json(&shown, &base, &cells)).unwrap();
        assert_eq!(j["predictions"][0]["section"], "b");
    }
}
