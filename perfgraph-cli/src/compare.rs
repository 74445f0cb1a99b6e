//! What a diff compares, for both diffs (`diff`'s of two runs' files, and the gate's of bundles, `gate`):
//! the metric, the settings, and a run's figure per section or per call path, keyed in a table of paths
//! both sides share.

use std::collections::HashMap;

use perfgraph_core::data::{Latency, Report};

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

    /// The last name of path `id`: a section's name, for a key made with parent 0.
    pub fn name(&self, id: u32) -> &'static str {
        self.entries[id as usize].1
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

/// Each node's key in `paths` (0 for the root): its section's name, or with `by_path` its call path.
/// The tree's nodes come parents first, as every reader of a call tree gives them.
pub fn keys(r: &Report, by_path: bool, paths: &mut Paths) -> Vec<u32> {
    let mut keys: Vec<u32> = Vec::with_capacity(r.tree.nodes.len());
    for n in &r.tree.nodes {
        let key = match n.parent {
            None => 0,
            Some(p) if by_path => paths.id(keys[p], n.name),
            Some(_) => paths.id(0, n.name),
        };
        keys.push(key);
    }
    keys
}

/// The `metric` per section (or, with `by_path`, per call path) of a run whose nodes have `keys`
/// ([`keys`]).
pub fn figures(r: &Report, keys: &[u32], metric: Metric, by_path: bool) -> Figures {
    let nodes = &r.tree.nodes;
    let mut order: Vec<u32> = Vec::new();
    let mut sums: HashMap<u32, (u64, Latency)> = HashMap::new();
    let inclusive = matches!(metric, Metric::Total | Metric::Wall | Metric::Cpu);
    let nested_at = if !by_path && inclusive {
        nested_flags(r)
    } else {
        Vec::new()
    };
    for (i, n) in nodes.iter().enumerate() {
        if n.parent.is_none() {
            continue;
        }
        let key = keys[i];
        // A recursion's inner calls are inside its outer ones: their total counts once.
        let nested = nested_at.get(i).copied().unwrap_or(false);
        let entry = sums.entry(key).or_insert_with(|| {
            order.push(key);
            (0, Latency::default())
        });
        match metric {
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
            let v = if metric == Metric::P99 {
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
