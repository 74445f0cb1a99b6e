//! The page's plots, as inline SVG drawn here (no script needed to read them): a latency histogram per
//! section of the `Latency` table, on a log axis of durations, and a line per series over the run's time.

use std::io::{self, Write};

use super::{Series, esc, name};
use crate::base::{buckets, process, text};
use crate::data::report::Report;
use crate::report::NAME_WIDTH;

const W: f64 = 420.0;
const H: f64 = 150.0;
/// Left, right, top and bottom margins inside the SVG.
const L: f64 = 56.0;
const R: f64 = 12.0;
const T: f64 = 10.0;
const B: f64 = 30.0;
/// Bars of a histogram, over the decades from its fastest call to its slowest.
const BINS: usize = 48;
/// Points of a series drawn: beyond, each of as many stretches of time keeps its lowest and highest.
const MAX_POINTS: usize = 2_000;

/// A histogram per section of the `Latency` table (the heaviest sections that have durations).
pub(super) fn latency(w: &mut dyn Write, r: &Report) -> io::Result<()> {
    let n = crate::base::config::ReportSelection::all()
        .sections
        .unwrap_or(10);
    let sections = r.heaviest_sections(n);
    // One call has no spread to draw: its row of the table says it all.
    let drawn: Vec<_> = sections.iter().filter(|s| s.latency.count > 1).collect();
    if drawn.is_empty() {
        return Ok(());
    }
    writeln!(w, "<div class=\"plots\">")?;
    for s in drawn {
        process::progress();
        let l = &s.latency;
        let (lo, hi) = (l.min_ns.max(1) as f64, l.max_ns.max(1) as f64);
        let (llo, lhi) = (lo.log10(), (hi.log10()).max(lo.log10() + 1e-9));
        let mut bins = [0u64; BINS];
        for &(b, count) in &l.buckets {
            let v = (buckets::middle(b as usize) as f64).clamp(lo, hi);
            let at = ((v.log10() - llo) / (lhi - llo) * BINS as f64) as usize;
            bins[at.min(BINS - 1)] += count;
        }
        let top = bins.iter().copied().max().unwrap_or(1).max(1) as f64;
        let plot_w = W - L - R;
        let bar = plot_w / BINS as f64;
        let mut svg = svg_open(&format!("Latency of {}", name(s.name)));
        svg += &axes(&[
            (0.0, duration(lo)),
            (0.5, duration(10f64.powf((llo + lhi) / 2.0))),
            (1.0, duration(hi)),
        ]);
        svg += &format!(
            "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            L - 4.0,
            T + 10.0,
            top as u64
        );
        for (i, &c) in bins.iter().enumerate().filter(|(_, c)| **c > 0) {
            let h = (H - T - B) * c as f64 / top;
            svg += &format!(
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{} \
                 calls</title></rect>",
                L + i as f64 * bar,
                H - B - h,
                (bar - 1.0).max(0.5),
                h,
                c
            );
        }
        svg += "</svg>";
        writeln!(
            w,
            "<figure class=\"plot\">{svg}<figcaption>{}: {} calls, from {} to {} (log axis); p50 {}, p99 \
             {}</figcaption></figure>",
            esc(&name(s.name)),
            l.count,
            duration(l.min_ns as f64),
            duration(l.max_ns as f64),
            duration(l.percentile(50.0) as f64),
            duration(l.percentile(99.0) as f64),
        )?;
    }
    writeln!(w, "</div>")
}

/// `s` as a line over the run's time (`wall_ns`, or its last point's if later).
pub(super) fn series(w: &mut dyn Write, s: &Series, wall_ns: u64) -> io::Result<()> {
    let points = thin(&s.points);
    if points.is_empty() {
        return Ok(());
    }
    let end = points
        .iter()
        .map(|p| p.0)
        .max()
        .unwrap_or(0)
        .max(wall_ns)
        .max(1) as f64;
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let (min, max) = (lo, hi);
    // A flat line is drawn across the middle.
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    let x = |t: u64| L + (W - L - R) * t as f64 / end;
    let y = |v: f64| H - B - (H - T - B) * (v - lo) / (hi - lo);
    let title = text::fit(&s.name, NAME_WIDTH);
    let mut svg = svg_open(&title);
    svg += &axes(&[
        (0.0, "0 s".to_owned()),
        (0.5, format!("{:.3} s", end / 2e9)),
        (1.0, format!("{:.3} s", end / 1e9)),
    ]);
    for (v, at) in [(hi, T + 10.0), (lo, H - B)] {
        svg += &format!(
            "<text class=\"label\" x=\"{}\" y=\"{at}\" text-anchor=\"end\">{}</text>",
            L - 4.0,
            number(v)
        );
    }
    let line: Vec<String> = points
        .iter()
        .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
        .collect();
    svg += &format!(
        "<polyline class=\"line\" fill=\"none\" points=\"{}\"/></svg>",
        line.join(" ")
    );
    let unit = if s.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", esc(&s.unit))
    };
    writeln!(
        w,
        "<figure class=\"plot\">{svg}<figcaption>{}{unit}: {} points, from {} to {}</figcaption></figure>",
        esc(&title),
        s.points.len(),
        number(min),
        number(max)
    )
}

/// At most [`MAX_POINTS`]: the lowest and highest point of each of `MAX_POINTS / 2` equal stretches.
fn thin(points: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let finite: Vec<(u64, f64)> = points.iter().copied().filter(|p| p.1.is_finite()).collect();
    if finite.len() <= MAX_POINTS {
        return finite;
    }
    envelope(&finite, finite.len().div_ceil(MAX_POINTS / 2))
}

/// Each `chunk` points in a row become their lowest and highest, in time order: the line's envelope
/// stays, peaks included.
pub(super) fn envelope(points: &[(u64, f64)], chunk: usize) -> Vec<(u64, f64)> {
    let mut out = Vec::with_capacity(2 * points.len().div_ceil(chunk.max(1)));
    for c in points.chunks(chunk.max(1)) {
        let lo = c.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied();
        let hi = c.iter().max_by(|a, b| a.1.total_cmp(&b.1)).copied();
        let (Some(lo), Some(hi)) = (lo, hi) else {
            continue;
        };
        if lo.0 <= hi.0 {
            out.extend([lo, hi]);
        } else {
            out.extend([hi, lo]);
        }
    }
    out
}

fn svg_open(label: &str) -> String {
    format!(
        "<svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        esc(label)
    )
}

/// The two axes, with labels along the x axis at the given fractions of its length.
fn axes(ticks: &[(f64, String)]) -> String {
    let mut out = format!(
        "<path class=\"axis\" d=\"M{L} {T} V{} H{}\" fill=\"none\"/>",
        H - B,
        W - R
    );
    for (at, label) in ticks {
        let anchor = match *at {
            a if a <= 0.0 => "start",
            a if a >= 1.0 => "end",
            _ => "middle",
        };
        out += &format!(
            "<text class=\"label\" x=\"{:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            L + (W - L - R) * at,
            H - B + 16.0,
            esc(label)
        );
    }
    out
}

/// A duration in ns, in the unit that reads best.
fn duration(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.3} s", n / 1e9),
        n if n >= 1e6 => format!("{:.3} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.3} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}
