//! The history as a picture: one small SVG chart per section, its time per commit with the change
//! points found in it. A self-contained document (no script, no external style or font), for a browser,
//! a CI artifact or a pull-request comment.

use std::fmt::Write;

use crate::xml::escape;

/// One section's series to draw.
pub struct Series<'a> {
    /// The section's name: the panel's title.
    pub name: &'a str,
    /// One per point: short commit ids, shown under the x axis (thinned to stay readable).
    pub labels: &'a [String],
    /// Time per commit in nanoseconds, oldest first; non-finite values are not drawn.
    pub values: &'a [f64],
    /// Change points, as [`Change::index`](super::changepoint::Change::index) values: each the index of
    /// the first value after the change.
    pub changes: &'a [usize],
    /// The y axis's unit, the values divided by a million: `ms` for nanoseconds, `Ir(M)` for
    /// instructions.
    pub unit: &'a str,
}

/// Width of the document.
const WIDTH: f64 = 760.0;
/// Height of one panel, title and x labels included.
const PANEL: f64 = 230.0;
/// Left of the plot area (room for the y labels).
const LEFT: f64 = 64.0;
/// Right margin.
const RIGHT: f64 = 20.0;
/// Top of the plot area within its panel (room for the title).
const TOP: f64 = 30.0;
/// Height of the plot area.
const HEIGHT: f64 = 140.0;
/// Width of the plot area.
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
/// The most x labels a panel shows.
const X_LABELS: usize = 16;
/// The longest x label, in characters; longer ones are cut with `…`.
const LABEL_CHARS: usize = 12;

const POINT: &str = "#3366aa";
const MEDIAN: &str = "#ee7733";
const CHANGE: &str = "#cc3311";
const GRID: &str = "#dddddd";

/// A self-contained SVG document: one small panel per series stacked vertically (title = section name,
/// y axis in ms with 3–5 ticks, points and a polyline, a dashed vertical line and a label at each change
/// point, the segment medians drawn as horizontal lines, x labels = a few commit labels, rotated and
/// thinned to stay readable). With no series, a small document saying there is nothing to draw.
pub fn svg(series: &[Series]) -> String {
    let mut out = String::new();
    if series.is_empty() {
        out.push_str(&open(400.0, 60.0));
        out.push_str(
            r##"<text x="16" y="35" fill="#555555">Nothing to draw: no sections.</text>"##,
        );
        out.push_str("\n</svg>\n");
        return out;
    }
    let height = PANEL * series.len() as f64;
    out.push_str(&open(WIDTH, height));
    for (i, s) in series.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<g transform="translate(0,{:.0})">"#,
            PANEL * i as f64
        );
        panel(&mut out, s);
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

/// The `<svg>` start tag and a white background.
fn open(width: f64, height: f64) -> String {
    format!(
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}""#,
            r#" font-family="sans-serif" font-size="11">"#,
            "\n",
            r#"<rect width="{w:.0}" height="{h:.0}" fill="white"/>"#,
            "\n"
        ),
        w = width,
        h = height
    )
}

/// One series' panel, in its own coordinates (0, 0 at its top left).
fn panel(out: &mut String, s: &Series) {
    let n = s.values.len();
    let _ = writeln!(
        out,
        r#"<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{}</text>"#,
        escape(s.name)
    );
    let _ = writeln!(
        out,
        r#"<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{HEIGHT}" fill="none" stroke="{GRID}"/>"#
    );
    let ms: Vec<Option<f64>> = s
        .values
        .iter()
        .map(|&v| (v.is_finite()).then_some(v / 1e6))
        .collect();
    let finite: Vec<f64> = ms.iter().flatten().copied().collect();
    if finite.is_empty() {
        let _ = writeln!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555555">No finite values.</text>"##,
            LEFT + PLOT_W / 2.0,
            TOP + HEIGHT / 2.0
        );
        let _ = writeln!(out, r#"<polyline points="" fill="none" stroke="{POINT}"/>"#);
        return;
    }
    let scale = y_axis(out, s.unit, &finite, n);
    let (changes, medians) = segments(out, s.changes, &ms, &scale);
    points(out, &ms, &scale);
    change_lines(out, s.labels, &changes, &medians, &scale);
    x_labels(out, s.labels, n, &scale);
}

/// Where a panel's commits and values fall in its plot area.
struct Scale {
    /// The commits, each a slot of the x axis.
    slots: usize,
    /// The lowest and the highest tick of the y axis, in ms.
    bottom: f64,
    top: f64,
}

impl Scale {
    /// The x of `edge` slots from the left: the slot of commit i spans [i, i + 1) of them, its point is
    /// in the middle and a change at its left edge.
    fn x(&self, edge: f64) -> f64 {
        LEFT + PLOT_W * edge / self.slots.max(1) as f64
    }

    /// The y of `ms`.
    fn y(&self, ms: f64) -> f64 {
        TOP + HEIGHT * (self.top - ms) / (self.top - self.bottom)
    }
}

/// Draws the y axis for the `finite` values of `slots` commits: its unit and its ticks, with room above
/// the points for the change labels and a little below. The panel's scale, from those ticks.
fn y_axis(out: &mut String, unit: &str, finite: &[f64], slots: usize) -> Scale {
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = hi - lo;
    let (ticks, decimals) = ticks(lo - 0.05 * span, hi + 0.15 * span);
    let scale = Scale {
        slots,
        bottom: ticks[0],
        top: ticks[ticks.len() - 1],
    };
    let _ = writeln!(
        out,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#555555">{}</text>"##,
        LEFT - 6.0,
        TOP - 8.0,
        escape(unit)
    );
    for &t in &ticks {
        let y = scale.y(t);
        let _ = writeln!(
            out,
            r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{GRID}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{t:.decimals$}</text>"#,
            LEFT + PLOT_W,
            LEFT - 6.0,
            y + 4.0
        );
    }
    scale
}

/// Draws the median of each segment between change points as a horizontal line. The change points
/// within the series (sorted, each once), and the segments' medians, one more than them.
fn segments(
    out: &mut String,
    changes: &[usize],
    ms: &[Option<f64>],
    scale: &Scale,
) -> (Vec<usize>, Vec<f64>) {
    let n = ms.len();
    let mut bounds: Vec<usize> = changes
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < n)
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let changes = bounds.clone();
    bounds.insert(0, 0);
    bounds.push(n);
    let medians: Vec<f64> = bounds
        .windows(2)
        .map(|w| median(ms[w[0]..w[1]].iter().flatten().copied()))
        .collect();
    for (w, &m) in bounds.windows(2).zip(&medians) {
        if m.is_finite() {
            let _ = writeln!(
                out,
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{MEDIAN}" stroke-width="2"/>"#,
                scale.x(w[0] as f64),
                scale.x(w[1] as f64),
                y = scale.y(m)
            );
        }
    }
    (changes, medians)
}

/// Draws the finite values as points, joined by a polyline.
fn points(out: &mut String, ms: &[Option<f64>], scale: &Scale) {
    let mut points = String::new();
    for (i, v) in ms.iter().enumerate() {
        if let Some(v) = v {
            let _ = write!(
                points,
                "{}{:.1},{:.1}",
                if points.is_empty() { "" } else { " " },
                scale.x(i as f64 + 0.5),
                scale.y(*v)
            );
        }
    }
    let _ = writeln!(
        out,
        r#"<polyline points="{points}" fill="none" stroke="{POINT}" stroke-width="1.2"/>"#
    );
    for (i, v) in ms.iter().enumerate() {
        if let Some(v) = v {
            let _ = writeln!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.2" fill="{POINT}"/>"#,
                scale.x(i as f64 + 0.5),
                scale.y(*v)
            );
        }
    }
}

/// Draws a dashed line at each change, labelled with the commit and the change of the median from the
/// segment before it to the one after; labels of neighbouring changes alternate between two rows.
fn change_lines(
    out: &mut String,
    labels: &[String],
    changes: &[usize],
    medians: &[f64],
    scale: &Scale,
) {
    for (j, &c) in changes.iter().enumerate() {
        let x = scale.x(c as f64);
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{CHANGE}" stroke-dasharray="4 3"/>"#,
            TOP + HEIGHT
        );
        let (before, after) = (medians[j], medians[j + 1]);
        let delta = after / before - 1.0;
        let mut text = label(labels, c);
        if delta.is_finite() {
            let _ = write!(text, " {:+.1}%", delta * 100.0);
        }
        let right_half = x > LEFT + PLOT_W / 2.0;
        let (tx, anchor) = if right_half {
            (x - 3.0, "end")
        } else {
            (x + 3.0, "start")
        };
        let _ = writeln!(
            out,
            r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="10" fill="{CHANGE}">{}</text>"#,
            TOP + 11.0 + 12.0 * (j % 2) as f64,
            escape(&text)
        );
    }
}

/// Draws a few of the `n` commits' labels under the axis, rotated, thinned to at most [`X_LABELS`].
fn x_labels(out: &mut String, labels: &[String], n: usize, scale: &Scale) {
    let every = n.div_ceil(X_LABELS).max(1);
    for i in (0..n).step_by(every) {
        let x = scale.x(i as f64 + 0.5);
        let y = TOP + HEIGHT;
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999999"/><text transform="translate({x:.1},{:.1}) rotate(-40)" text-anchor="end" font-size="10">{}</text>"##,
            y + 4.0,
            y + 14.0,
            escape(&label(labels, i))
        );
    }
}

/// Commit `i`'s label, cut to [`LABEL_CHARS`]; its index when there is none.
fn label(labels: &[String], i: usize) -> String {
    match labels.get(i) {
        Some(l) if l.chars().count() > LABEL_CHARS => {
            let mut cut: String = l.chars().take(LABEL_CHARS - 1).collect();
            cut.push('…');
            cut
        }
        Some(l) => l.clone(),
        None => i.to_string(),
    }
}

/// The y axis' ticks for values from `lo` to `hi`: 3 to 5 round values (steps of 1, 2, 2.5 or 5 times a
/// power of ten) from one at or below `lo` to one at or above `hi`, and the decimals they need.
fn ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let (mut lo, mut hi) = (lo, hi);
    let size = lo.abs().max(hi.abs());
    if hi - lo <= (size * 1e-9).max(1e-12) {
        // A flat series: a band of ±1% around it (±1 µs around 0).
        let mid = lo.midpoint(hi);
        let half = if size > 1e-9 { mid.abs() * 0.01 } else { 0.001 };
        (lo, hi) = (mid - half, mid + half);
    }
    let raw = (hi - lo) / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    for (m, extra) in [(1.0, 0), (2.0, 0), (2.5, 1), (5.0, 0), (10.0, 0), (20.0, 0)] {
        let step = m * magnitude;
        let (first, last) = ((lo / step).floor(), (hi / step).ceil());
        let count = (last - first) as usize + 1;
        if count <= 5 {
            let decimals = (extra - step.log10().floor() as i64).max(0) as usize;
            let ticks = (0..count)
                .map(|i| {
                    let t = (first + i as f64) * step;
                    // No "-0.00".
                    if t.abs() < step / 2.0 { 0.0 } else { t }
                })
                .collect();
            return (ticks, decimals);
        }
    }
    (vec![lo, hi], 3)
}

/// Median of the values; NaN for none.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => v[n / 2 - 1].midpoint(v[n / 2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `doc` is well-formed as far as this module's output goes: every tag closed in order, one
    /// root, attribute values quoted, `<` only in tags and `&` only in entities. The error otherwise.
    fn well_formed(doc: &str) -> Result<(), String> {
        let mut open: Vec<&str> = Vec::new();
        let mut roots = 0;
        let mut rest = doc;
        while let Some(at) = rest.find('<') {
            check_text(&rest[..at])?;
            if open.is_empty() && !rest[..at].trim().is_empty() {
                return Err(format!("text outside the root: {:?}", &rest[..at]));
            }
            let end = rest[at..].find('>').ok_or("a tag is not closed")? + at;
            let tag = &rest[at + 1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                match open.pop() {
                    Some(top) if top == name.trim() => {}
                    top => return Err(format!("</{name}> closes {top:?}")),
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let body = tag.trim_end_matches('/');
            let name = body.split_whitespace().next().ok_or("an empty tag")?;
            check_attributes(&body[name.len()..])?;
            if open.is_empty() {
                roots += 1;
            }
            if !self_closing {
                open.push(name);
            }
        }
        check_text(rest)?;
        match (open.as_slice(), roots, rest.trim()) {
            ([], 1, "") => Ok(()),
            (open, roots, rest) => Err(format!("open {open:?}, {roots} roots, trailing {rest:?}")),
        }
    }

    /// `name="value"` pairs, the values without `<` or `"`, entities well formed.
    fn check_attributes(mut s: &str) -> Result<(), String> {
        loop {
            s = s.trim_start();
            if s.is_empty() {
                return Ok(());
            }
            let eq = s
                .find("=\"")
                .ok_or(format!("an attribute without a quoted value: {s:?}"))?;
            if s[..eq].contains(char::is_whitespace) {
                return Err(format!("a malformed attribute: {s:?}"));
            }
            let value_end = s[eq + 2..].find('"').ok_or("an unterminated value")? + eq + 2;
            let value = &s[eq + 2..value_end];
            if value.contains('<') {
                return Err(format!("`<` in a value: {value:?}"));
            }
            check_text(value)?;
            s = &s[value_end + 1..];
        }
    }

    /// Text: no `>` on its own, and every `&` starting one of XML's entities.
    fn check_text(s: &str) -> Result<(), String> {
        if s.contains('>') {
            return Err(format!("a bare `>` in {s:?}"));
        }
        for (i, _) in s.match_indices('&') {
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| s[i..].starts_with(e))
            {
                return Err(format!("a bare `&` in {s:?}"));
            }
        }
        Ok(())
    }

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c{i:06x}")).collect()
    }

    #[test]
    fn one_panel_per_series() {
        let l = labels(60);
        let step: Vec<f64> = (0..60)
            .map(|i| if i < 37 { 1.5e6 } else { 1.56e6 } + (i % 7) as f64 * 1e4)
            .collect();
        let flat: Vec<f64> = (0..60).map(|i| 2.5e5 + (i % 5) as f64 * 1e3).collect();
        let doc = svg(&[
            Series {
                name: "parse",
                labels: &l,
                values: &step,
                changes: &[37],
                unit: "ms",
            },
            Series {
                name: "solve",
                labels: &l,
                values: &flat,
                changes: &[],
                unit: "ms",
            },
        ]);
        assert!(doc.starts_with("<svg"), "{doc}");
        assert!(doc.ends_with("</svg>\n"));
        assert_eq!(doc.matches("<polyline").count(), 2);
        assert_eq!(doc.matches("<circle").count(), 120);
        assert_eq!(doc.matches("stroke-dasharray").count(), 1);
        // The change's label: its commit and the change of the median (1.53 → 1.59 ms).
        assert!(doc.contains(">c000025 +3.9%</text>"), "{doc}");
        // Two medians in the first panel, one in the second.
        assert_eq!(doc.matches(&format!("stroke=\"{MEDIAN}\"")).count(), 3);
        // At most X_LABELS commit labels per panel.
        assert_eq!(doc.matches("rotate(-40)").count(), 2 * 15);
        well_formed(&doc).unwrap();
    }

    #[test]
    fn names_and_labels_are_escaped() {
        let l = vec![
            "it's".to_string(),
            "a&b".to_string(),
            "<c>".to_string(),
            "d".to_string(),
        ];
        let doc = svg(&[Series {
            name: "a<b>&\"c\"",
            labels: &l,
            values: &[1e6, 1e6, 2e6, 2e6],
            changes: &[2],
            unit: "ms",
        }]);
        assert!(doc.contains("a&lt;b&gt;&amp;&quot;c&quot;"), "{doc}");
        assert!(!doc.contains("a<b>"));
        assert!(
            doc.contains("it&apos;s")
                && doc.contains("a&amp;b")
                && doc.contains("&lt;c&gt; +100.0%")
        );
        well_formed(&doc).unwrap();
    }

    #[test]
    fn nothing_to_draw() {
        let doc = svg(&[]);
        assert!(doc.starts_with("<svg") && doc.ends_with("</svg>\n"));
        assert!(doc.contains("Nothing to draw"));
        well_formed(&doc).unwrap();
    }

    #[test]
    fn odd_series() {
        let l = labels(3);
        let cases: [(&[f64], &[usize]); 8] = [
            (&[], &[]),
            (&[f64::NAN, f64::INFINITY], &[1]),
            (&[1e6], &[0, 1, 5]),
            (&[1e6, 1e6, 1e6], &[]),
            (&[0.0, 0.0], &[1]),
            (&[1e6, f64::NAN, 3e6, f64::NEG_INFINITY], &[2, 2, 9]),
            (&[1e-314, 2e-314, 1e-314], &[1]),
            (&[-1e300, 1e300, 0.0], &[1, 2]),
        ];
        for (values, changes) in cases {
            let doc = svg(&[Series {
                name: "odd",
                labels: &l,
                values,
                changes,
                unit: "ms",
            }]);
            well_formed(&doc).unwrap_or_else(|e| panic!("{values:?}: {e}\n{doc}"));
            assert_eq!(doc.matches("<polyline").count(), 1);
            assert_eq!(
                doc.matches("<circle").count(),
                values.iter().filter(|v| v.is_finite()).count()
            );
            assert!(!doc.contains("NaN") && !doc.contains("inf"), "{doc}");
        }
    }

    #[test]
    fn three_to_five_round_ticks() {
        let ranges = [
            (1.5, 1.56),
            (0.001, 1000.0),
            (5.0, 5.0),
            (0.0, 0.0),
            (-1.0, 1.0),
            (0.2501, 0.2549),
            (7.0, 93.0),
        ];
        for (lo, hi) in ranges {
            let (t, decimals) = ticks(lo, hi);
            assert!((3..=5).contains(&t.len()), "{lo}..{hi}: {t:?}");
            assert!(t[0] <= lo && t[t.len() - 1] >= hi, "{lo}..{hi}: {t:?}");
            let shown: Vec<String> = t.iter().map(|t| format!("{t:.decimals$}")).collect();
            let mut unique = shown.clone();
            unique.dedup();
            assert_eq!(unique, shown, "{lo}..{hi}: {t:?}");
        }
        assert_eq!(ticks(1.5, 1.56), (vec![1.5, 1.52, 1.54, 1.56], 2));
        assert_eq!(
            ticks(30.0, 110.0),
            (vec![25.0, 50.0, 75.0, 100.0, 125.0], 0)
        );
        assert_eq!(ticks(0.3, 1.1), (vec![0.25, 0.5, 0.75, 1.0, 1.25], 2));
    }

    #[test]
    fn long_labels_are_cut() {
        assert_eq!(label(&["0123456789abcdef".to_string()], 0), "0123456789a…");
        assert_eq!(label(&[], 7), "7");
    }
}
