//! `perfgraph diff`: two runs side by side, a row per section (or per call path), marked where the
//! change passes the threshold; exit code 1 when something got slower past it.

use std::collections::HashMap;
use std::path::Path;

use perfgraph_core::{Latency, Report};

use crate::{Failure, load};

/// What `diff` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Time in the section, its children included (a recursion counted once, at its outermost call).
    Total,
    /// Time in the section, its children excluded.
    #[value(name = "self")]
    SelfTime,
    /// The 99th percentile of one call's duration.
    P99,
}

/// The diff's settings.
pub struct Options {
    /// Percent past which a change is marked.
    pub threshold: f64,
    /// Noise floor, ms: rows below it in both runs are never marked.
    pub min_ms: f64,
    /// What is compared.
    pub metric: Metric,
    /// A row per call path rather than per section.
    pub paths: bool,
}

/// Runs the diff; the exit code is 1 when a row regressed, 0 otherwise.
pub fn run(base: &Path, head: &Path, o: &Options) -> Result<u8, Failure> {
    let (b, h) = (load::run(base)?, load::run(head)?);
    if b.program != h.program {
        eprintln!(
            "perfgraph: warning: {} is a run of `{}`, {} of `{}`",
            base.display(),
            b.program,
            head.display(),
            h.program
        );
    }
    let (rows, regressed) = compare(&figures(&b, o), &figures(&h, o), o);
    let mut out = render(&rows, o);
    out.push_str(&match regressed {
        0 => format!("No regression past {}%.\n", o.threshold),
        n => format!(
            "{n} {} regressed past {}%.\n",
            if n == 1 { "row" } else { "rows" },
            o.threshold
        ),
    });
    load::print(&out)?;
    Ok(u8::from(regressed > 0))
}

/// A row's key and its figure (ns), in the order first seen.
type Figures = Vec<(String, u64)>;

/// The metric per section (or per call path) of a run.
fn figures(r: &Report, o: &Options) -> Figures {
    let nodes = &r.tree.nodes;
    let mut keys: Vec<String> = Vec::with_capacity(nodes.len());
    let mut order: Vec<String> = Vec::new();
    let mut sums: HashMap<String, (u64, Latency)> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let Some(p) = n.parent else {
            keys.push(String::new());
            continue;
        };
        let key = if o.paths {
            match keys[p].as_str() {
                "" => n.name.to_owned(),
                parent => format!("{parent};{}", n.name),
            }
        } else {
            n.name.to_owned()
        };
        keys.push(if o.paths { key.clone() } else { String::new() });
        // A recursion's inner calls are inside its outer ones: their total counts once.
        let nested = !o.paths && o.metric == Metric::Total && has_ancestor_named(r, i, n.name);
        let entry = sums.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (0, Latency::default())
        });
        match o.metric {
            Metric::Total if !nested => entry.0 += n.total_ns,
            Metric::Total => {}
            Metric::SelfTime => entry.0 += n.self_ns,
            Metric::P99 => entry.1.add(&n.latency),
        }
    }
    order
        .into_iter()
        .map(|k| {
            let (ns, l) = &sums[&k];
            let v = if o.metric == Metric::P99 {
                l.percentile(99.0)
            } else {
                *ns
            };
            (k, v)
        })
        .collect()
}

fn has_ancestor_named(r: &Report, mut i: usize, name: &str) -> bool {
    while let Some(p) = r.tree.nodes[i].parent {
        if p != 0 && r.tree.nodes[p].name == name {
            return true;
        }
        i = p;
    }
    false
}

/// One row of the diff.
struct Row {
    key: String,
    base: Option<u64>,
    head: Option<u64>,
    mark: &'static str,
}

/// The rows (the base's order, then what only the head has) and how many regressed.
fn compare(base: &Figures, head: &Figures, o: &Options) -> (Vec<Row>, usize) {
    let in_head: HashMap<&str, u64> = head.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let in_base: HashMap<&str, u64> = base.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let floor = (o.min_ms * 1e6) as u64;
    let mut regressed = 0;
    let mut rows: Vec<Row> = Vec::new();
    for (k, b) in base {
        let h = in_head.get(k.as_str()).copied();
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
            key: k.clone(),
            base: Some(*b),
            head: h,
            mark,
        });
    }
    for (k, h) in head {
        if !in_base.contains_key(k.as_str()) {
            rows.push(Row {
                key: k.clone(),
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

fn render(rows: &[Row], o: &Options) -> String {
    let what = match o.metric {
        Metric::Total => "total",
        Metric::SelfTime => "self",
        Metric::P99 => "p99",
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
            [r.key.clone(), ms(r.base), ms(r.head), c, r.mark.to_owned()]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String; 5]| {
        let mut s = format!("{:<w$}", row[0], w = widths[0]);
        for (c, w) in row[1..4].iter().zip(&widths[1..4]) {
            s.push_str(&format!("  {c:>w$}"));
        }
        if !row[4].is_empty() {
            s.push_str(&format!("  {}", row[4]));
        }
        s.push('\n');
        s
    };
    let mut out = line(&header);
    for row in &cells {
        out.push_str(&line(row));
    }
    out
}
