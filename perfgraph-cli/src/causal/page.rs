//! `perfgraph causal --html FILE`: the predictions as one self-contained page (no network request, opens
//! from `file://`): for each section its curve, the program's predicted speed-up against the section's,
//! each point with its 95% interval, the diagonal (as fast as the section itself) dashed for scale; then
//! the table as the command prints it.

use std::fmt::Write as _;

use super::estimate::Cell;
use crate::xml::escape;

/// The plot's size and margins, px.
const W: f64 = 300.0;
const H: f64 = 200.0;
const LEFT: f64 = 48.0;
const BOTTOM: f64 = 28.0;
const TOP: f64 = 12.0;
const RIGHT: f64 = 12.0;

/// The y range every plot shares, in fractions: the intervals' and the diagonal's, with a margin.
fn y_range(cells: &[Cell]) -> (f64, f64) {
    let finite = |v: f64| v.is_finite().then_some(v);
    let lows = cells
        .iter()
        .filter_map(|c| finite(c.low).or(finite(c.estimate)));
    let highs = cells
        .iter()
        .filter_map(|c| finite(c.high).or(finite(c.estimate)));
    let top_speedup = cells.iter().map(|c| c.speedup).max().unwrap_or(100) as f64 / 100.0;
    let low = lows.fold(-0.05, f64::min);
    let high = highs.fold(top_speedup.max(0.05), f64::max);
    (low - 0.02, high + 0.02)
}

/// One section's curve as an inline SVG.
fn curve(section: &str, points: &[&Cell], (y0, y1): (f64, f64)) -> String {
    let x = |pct: f64| LEFT + pct / 100.0 * (W - LEFT - RIGHT);
    let y = |f: f64| TOP + (y1 - f) / (y1 - y0) * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = write!(
        s,
        "<figure><svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" \
         aria-label=\"{}\">",
        escape(section)
    );
    // Axes, the zero line and the diagonal.
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/>\
         <line class=\"axis\" x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/>\
         <line class=\"zero\" x1=\"{l}\" y1=\"{z:.1}\" x2=\"{r}\" y2=\"{z:.1}\"/>\
         <line class=\"diag\" x1=\"{l}\" y1=\"{z:.1}\" x2=\"{dx:.1}\" y2=\"{dy:.1}\"/>",
        l = LEFT,
        r = W - RIGHT,
        t = TOP,
        b = H - BOTTOM,
        z = y(0.0),
        // y = x, up to the plot's top or right edge.
        dx = x(y1.min(1.0) * 100.0),
        dy = y(y1.min(1.0)),
    );
    for pct in [0, 25, 50, 75, 100] {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" class=\"tick\">{pct}%</text>",
            x(pct as f64),
            H - 8.0
        );
    }
    for f in [y0, 0.0, y1] {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" class=\"tick y\">{:+.0}%</text>",
            LEFT - 4.0,
            y(f) + 4.0,
            f * 100.0
        );
    }
    let line: Vec<String> = points
        .iter()
        .filter(|c| c.estimate.is_finite())
        .map(|c| format!("{:.1},{:.1}", x(c.speedup as f64), y(c.estimate)))
        .collect();
    let _ = write!(
        s,
        "<polyline class=\"curve\" points=\"{}\"/>",
        line.join(" ")
    );
    for c in points.iter().filter(|c| c.estimate.is_finite()) {
        let cx = x(c.speedup as f64);
        if c.low.is_finite() && c.high.is_finite() {
            let _ = write!(
                s,
                "<line class=\"interval\" x1=\"{cx:.1}\" y1=\"{:.1}\" x2=\"{cx:.1}\" y2=\"{:.1}\"/>",
                y(c.low),
                y(c.high)
            );
        }
        let _ = write!(
            s,
            "<circle cx=\"{cx:.1}\" cy=\"{:.1}\" r=\"3\"><title>{}% faster: {:+.1}% ({:+.1}% .. {:+.1}%), {} \
             experiments</title></circle>",
            y(c.estimate),
            c.speedup,
            c.estimate * 100.0,
            c.low * 100.0,
            c.high * 100.0,
            c.experiments
        );
    }
    let _ = write!(
        s,
        "</svg><figcaption>{}</figcaption></figure>",
        escape(section)
    );
    s
}

const CSS: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
figure{display:inline-block;margin:0 1em 1em 0}figcaption{text-align:center;font-weight:600}\
.axis{stroke:#444}.zero{stroke:#bbb}.diag{stroke:#bbb;stroke-dasharray:4 4}\
.curve{fill:none;stroke:#1f6fb2;stroke-width:2}.interval{stroke:#1f6fb2;stroke-opacity:.45;stroke-width:6}\
circle{fill:#1f6fb2}.tick{font-size:10px;fill:#555;text-anchor:middle}.tick.y{text-anchor:end}\
pre{background:#f6f6f6;padding:1em;overflow-x:auto}";

/// The page: `title`, `sections` in the table's order, each its curve from `cells`, then `table` (the
/// text the command prints).
pub fn page(title: &str, sections: &[&str], cells: &[Cell], table: &str) -> String {
    let range = y_range(cells);
    let mut s = String::new();
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src \
         'unsafe-inline'\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{0}</title><style>{CSS}</style></head>\n<body>\n<h1>{0}</h1>\n\
         <p>Each curve: the program's predicted speed-up (up) if the section were made faster (across), \
         each point with its 95% interval; dashed, as fast as the section itself.</p>\n",
        escape(title)
    );
    for section in sections {
        let mut points: Vec<&Cell> = cells.iter().filter(|c| c.section == *section).collect();
        points.sort_by_key(|c| c.speedup);
        s.push_str(&curve(section, &points, range));
        s.push('\n');
    }
    let _ = write!(s, "<pre>{}</pre>\n</body></html>\n", escape(table));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causal::estimate::test_cell as cell;

    #[test]
    fn a_curve_per_section_names_escaped() {
        let cells = [
            cell("a<b", 0, 0.0),
            cell("a<b", 50, 0.2),
            cell("c", 50, f64::NAN),
        ];
        let html = page("t & u", &["a<b", "c"], &cells, "table <x>");
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("<figcaption>a&lt;b</figcaption>"));
        assert!(html.contains("<title>t &amp; u</title>"));
        assert!(html.contains("<pre>table &lt;x&gt;</pre>"));
        assert_eq!(html.matches("<circle").count(), 2, "no point for a NaN");
        assert!(!html.contains("NaN"));
    }
}
