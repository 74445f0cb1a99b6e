//! `perfgraph diff`: two runs side by side, a row per section (or per call path), marked where the
//! change passes the threshold; exit code 1 when something got slower past it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use perfgraph_core::data::{Latency, Report};

use clap::Args;

use crate::failure::Failure;
use crate::{bundle, gate, load};

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
}

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
    /// Wall time in the section, its children included: `total`'s figure, by the name `record` uses.
    Wall,
    /// CPU time in the section, its children included (sections that measured it).
    Cpu,
    /// Instructions in the section, its children included, as Callgrind counted them (bundles
    /// recorded with `--metric instructions`).
    Instructions,
}

/// The diff's settings.
pub struct Options {
    /// Percent past which a change is marked.
    pub threshold: f64,
    /// Noise floor, ms: rows below it in both runs are never marked.
    pub min_ms: f64,
    /// What is compared.
    pub metric: Metric,
    /// Whether `--metric` chose it (a bundle is compared by what it was recorded with, unless chosen).
    pub metric_given: bool,
    /// A row per call path rather than per section.
    pub paths: bool,
    /// A section (or path) of the base missing from the head fails the diff (exit 1), as a regression.
    pub fail_on_removed: bool,
    /// Bundles: the change (a fraction) an interval must lie wholly beyond to fail.
    pub noise: f64,
}

/// Runs the diff: of two bundles (or a bundle and a run's file, or one bundle's two commands) through
/// the gate ([`crate::gate`]), of two runs' files row by row. The exit code is 1 when a row regressed,
/// 3 when the gate could not decide, 0 otherwise.
pub fn run(base: &Path, head: Option<&Path>, o: &Options) -> Result<u8, Failure> {
    let Some(head) = head.filter(|h| !bundle::is_bundle(base) && !bundle::is_bundle(h)) else {
        return gate::run(base, head, o);
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
    let (base_figures, head_figures) = (figures(&b, o, &mut paths), figures(&h, o, &mut paths));
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
    let mut out = render(&rows, o, &paths);
    let removed: Vec<String> = rows
        .iter()
        .filter(|r| r.head.is_none())
        .map(|r| paths.display(r.key))
        .collect();
    if !removed.is_empty() {
        const SHOWN: usize = 10;
        let mut names = removed[..removed.len().min(SHOWN)].join(", ");
        if removed.len() > SHOWN {
            names.push_str(&format!(", and {} more", removed.len() - SHOWN));
        }
        out.push_str(&format!(
            "Removed: {} {} of the base {} not in the head: {names}{}.\n",
            removed.len(),
            match (o.paths, removed.len()) {
                (true, 1) => "call path",
                (true, _) => "call paths",
                (false, 1) => "section",
                (false, _) => "sections",
            },
            if removed.len() == 1 { "is" } else { "are" },
            if o.fail_on_removed {
                " (--fail-on-removed: this fails the diff)"
            } else {
                ""
            }
        ));
    }
    out.push_str(&match regressed {
        0 => format!("No regression past {}%.\n", o.threshold),
        n => format!(
            "{n} {} regressed past {}%.\n",
            if n == 1 { "row" } else { "rows" },
            o.threshold
        ),
    });
    load::print(&out)?;
    Ok(u8::from(
        regressed > 0 || (o.fail_on_removed && !removed.is_empty()),
    ))
}

/// The rows' keys: a section name, or a call path, each an id in a table both runs share, so that a path is
/// never spelled out whole (a recursion 100,000 deep has paths of 100,000 names) and compares in O(1).
#[derive(Default)]
pub struct Paths {
    /// Id to its parent path's id (0: none), its last name, and its first name's id; id 0 is the empty
    /// path.
    entries: Vec<(u32, &'static str, u32)>,
    ids: HashMap<(u32, &'static str), u32>,
}

impl Paths {
    /// No path yet.
    pub fn new() -> Paths {
        Paths {
            entries: vec![(0, "", 0)],
            ids: HashMap::new(),
        }
    }

    /// The id of `parent`'s path followed by `name`.
    pub fn id(&mut self, parent: u32, name: &'static str) -> u32 {
        if let Some(&id) = self.ids.get(&(parent, name)) {
            return id;
        }
        let id = self.entries.len() as u32;
        let first = if parent == 0 {
            id
        } else {
            self.entries[parent as usize].2
        };
        self.entries.push((parent, name, first));
        self.ids.insert((parent, name), id);
        id
    }

    /// The path `id` as `a;b;c`, at most [`MAX_KEY_CHARS`] characters: a longer one keeps its first name
    /// and as many of its last as fit, with `…` between.
    pub fn display(&self, id: u32) -> String {
        let mut names: Vec<&str> = Vec::new();
        let mut chars = 0;
        let mut at = id;
        let mut cut = false;
        while at != 0 {
            let (parent, name, first) = self.entries[at as usize];
            if parent == 0 {
                break;
            }
            let width = name.chars().count() + 1;
            if chars + width > MAX_KEY_CHARS / 2 && !names.is_empty() {
                cut = true;
                at = first;
                break;
            }
            chars += width;
            names.push(name);
            at = parent;
        }
        let first = self.entries[at as usize].1;
        let mut out = first.to_owned();
        if cut {
            out.push_str(";…");
        }
        for name in names.iter().rev() {
            out.push(';');
            out.push_str(name);
        }
        if out.chars().count() > MAX_KEY_CHARS {
            let keep: String = out.chars().take(MAX_KEY_CHARS - 1).collect();
            out = keep + "…";
        }
        out
    }
}

/// Widest key shown in a row, characters.
const MAX_KEY_CHARS: usize = 120;

/// A row's key (an id in [`Paths`]) and its figure (ns), in the order first seen.
pub type Figures = Vec<(u32, u64)>;

/// The metric per section (or per call path) of a run.
pub fn figures(r: &Report, o: &Options, paths: &mut Paths) -> Figures {
    let nodes = &r.tree.nodes;
    let mut keys: Vec<u32> = Vec::with_capacity(nodes.len());
    let mut order: Vec<u32> = Vec::new();
    let mut sums: HashMap<u32, (u64, Latency)> = HashMap::new();
    let inclusive = matches!(o.metric, Metric::Total | Metric::Wall | Metric::Cpu);
    let nested_at = if !o.paths && inclusive {
        nested_flags(r)
    } else {
        Vec::new()
    };
    for (i, n) in nodes.iter().enumerate() {
        let Some(p) = n.parent else {
            keys.push(0);
            continue;
        };
        let key = if o.paths {
            paths.id(keys[p], n.name)
        } else {
            paths.id(0, n.name)
        };
        keys.push(key);
        // A recursion's inner calls are inside its outer ones: their total counts once.
        let nested = nested_at.get(i).copied().unwrap_or(false);
        let entry = sums.entry(key).or_insert_with(|| {
            order.push(key);
            (0, Latency::default())
        });
        match o.metric {
            _ if nested && inclusive => {}
            Metric::Total | Metric::Wall | Metric::Instructions => {
                entry.0 = entry.0.saturating_add(n.total_ns)
            }
            Metric::Cpu => entry.0 = entry.0.saturating_add(n.cpu.map_or(0, |c| c.cpu_ns)),
            Metric::SelfTime => entry.0 = entry.0.saturating_add(n.self_ns),
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

/// For each node of `r`'s tree, whether an ancestor of it has its name (a recursion's inner call): one
/// walk down the tree from the root with a count per name on the path, O(1) a node however deep the tree
/// and whatever the order of its nodes in the file.
fn nested_flags(r: &Report) -> Vec<bool> {
    let nodes = &r.tree.nodes;
    let mut nested = vec![false; nodes.len()];
    let mut on_path: HashMap<&'static str, u32> = HashMap::new();
    // (node, entered): a node is pushed once to enter it and once more to leave it.
    let mut stack: Vec<(usize, bool)> = Vec::new();
    if nodes.is_empty() {
        return nested;
    }
    for &c in nodes[0].children.iter().rev() {
        stack.push((c, false));
    }
    while let Some((i, entered)) = stack.pop() {
        let name = nodes[i].name;
        if entered {
            if let Some(n) = on_path.get_mut(name) {
                *n -= 1;
            }
            continue;
        }
        let count = on_path.entry(name).or_default();
        nested[i] = *count > 0;
        *count += 1;
        stack.push((i, true));
        for &c in nodes[i].children.iter().rev() {
            stack.push((c, false));
        }
    }
    nested
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

fn render(rows: &[Row], o: &Options, paths: &Paths) -> String {
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
    crate::table::render(&header, &cells, 1, true)
}
