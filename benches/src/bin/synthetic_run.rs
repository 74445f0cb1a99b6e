//! A synthetic run JSON of N call paths, in the format and layout `PERFGRAPH_JSON` writes
//! (`docs/json-schema.md`: serde_json's pretty printer, keys in order), for measuring `perfgraph html` and
//! its page on runs far larger than the demo's (`record --html-only`, `docs/performance.md`):
//!
//! ```sh
//! cargo run --release -p perfgraph-benches --bin synthetic_run -- 1000000 /tmp/run.json
//! ```
//!
//! The tree: a program root and N call paths under it, filled level by level from the root with a skewed
//! fan-out (a third of the paths are leaves, a few have dozens of children), so 1,000,000 paths are 8 to 9
//! levels deep; [`NAMES`] distinct section names (`module::function`), the common ones far more often, and
//! no two siblings alike. Calls multiply down the tree (most paths called once per call of their parent, a
//! few hundreds of times); the time of one call is heavy-tailed, so a few paths hold most of the time and
//! most hold almost none; one path in ten changed the resident memory. The top-level paths are spread
//! over [`THREADS`] threads, each with its own tree as a real run has (so the file holds each path twice),
//! and, as perfgraph keeps them, only a thread's first [`HISTOGRAM_PATHS`] paths have latency histograms.
//! The same N always gives the same file. It prints one line: the paths, the depth, the bytes, the time.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

/// Distinct section names: every [`MODULES`] × [`FUNCTIONS`].
const NAMES: usize = MODULES.len() * FUNCTIONS.len();
const MODULES: [&str; 20] = [
    "app", "config", "io", "net", "parser", "lexer", "codec", "cache", "db", "query", "planner",
    "exec", "storage", "index", "render", "layout", "solver", "mesh", "sched", "rpc",
];
const FUNCTIONS: [&str; 16] = [
    "run", "init", "load", "read", "write", "flush", "parse", "encode", "decode", "lookup",
    "insert", "update", "merge", "sort", "compute", "wait",
];
/// Threads that recorded.
const THREADS: usize = 4;
/// The paths of a thread that have a latency histogram (the later ones count calls, not durations).
const HISTOGRAM_PATHS: usize = 1_023;
/// Sections directly under the program root.
const TOP_LEVEL: usize = 12;
/// Children one path has at most.
const MAX_FANOUT: f64 = 60.0;
/// Calls one path has at most.
const MAX_CALLS: u64 = 500_000_000;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Pareto: at least `min`, tail index `alpha` (heavier as it nears 1).
    fn pareto(&mut self, min: f64, alpha: f64) -> f64 {
        min * (1.0 - self.unit()).powf(-1.0 / alpha)
    }
}

/// One call path.
#[derive(Clone, Default)]
struct Node {
    parent: u32,
    first_child: u32,
    children: u32,
    depth: u32,
    name: u32,
    calls: u64,
    self_ns: u64,
    total_ns: u64,
    self_mem: i64,
    total_mem: i64,
}

/// The tree in breadth-first order (a path's children next to each other, after it), root first.
fn shape(paths: usize, r: &mut Rng) -> Vec<Node> {
    let mut t = vec![Node {
        calls: 1,
        ..Node::default()
    }];
    let mut next = 0;
    while t.len() <= paths {
        let wanted = if next == 0 {
            TOP_LEVEL
        } else if r.unit() < 0.35 {
            0
        } else {
            r.pareto(2.0, 1.3).min(MAX_FANOUT) as usize
        };
        // The last path left to expand always has a child, so the tree grows to N.
        let wanted = if next + 1 == t.len() {
            wanted.max(1)
        } else {
            wanted
        };
        let k = wanted.min(paths + 1 - t.len());
        // Siblings' names: a common one first (the low indices), then every 7th name after it.
        let start = (NAMES as f64 * r.unit().powf(2.5)) as usize;
        t[next].first_child = t.len() as u32;
        t[next].children = k as u32;
        let (depth, parent_calls) = (t[next].depth + 1, t[next].calls);
        for j in 0..k {
            let per_parent_call = if next == 0 {
                1 + r.next() % 4
            } else if r.unit() < 0.55 {
                1
            } else {
                r.pareto(2.0, 1.1).min(1_000.0) as u64
            };
            let calls = if next == 0 {
                per_parent_call
            } else {
                (parent_calls * per_parent_call).min(MAX_CALLS)
            };
            // ns per call outside the children: heavy-tailed, at most 200 ms.
            let per_call = r.pareto(150.0, 1.15).min(2e8);
            let self_mem = if r.unit() < 0.1 {
                let kib = r.pareto(4.0, 1.2).min(1_048_576.0) as i64 * 1024;
                if r.unit() < 0.85 { kib } else { -kib }
            } else {
                0
            };
            t.push(Node {
                parent: next as u32,
                depth,
                name: ((start + 7 * j) % NAMES) as u32,
                calls,
                self_ns: (calls as f64 * per_call) as u64,
                self_mem,
                ..Node::default()
            });
        }
        next += 1;
    }
    t[0].self_ns = 2_000_000;
    t[0].self_mem = 8 << 20;
    // Totals, children first: in breadth-first order every child comes after its parent.
    for i in (0..t.len()).rev() {
        let (ns, mem) = (t[i].total_ns + t[i].self_ns, t[i].total_mem + t[i].self_mem);
        t[i].total_ns = ns;
        t[i].total_mem = mem;
        if i > 0 {
            let p = t[i].parent as usize;
            t[p].total_ns += ns;
            t[p].total_mem += mem;
        }
    }
    t
}

/// The paths in depth-first order (a parent before its children, siblings in order), root first.
fn depth_first(t: &[Node]) -> Vec<u32> {
    let mut order = Vec::with_capacity(t.len());
    let mut stack = vec![0u32];
    while let Some(i) = stack.pop() {
        order.push(i);
        let n = &t[i as usize];
        stack.extend((n.first_child..n.first_child + n.children).rev());
    }
    order
}

/// The histogram bucket of `v` (docs/json-schema.md, "Histogram").
fn bucket(v: u64) -> u64 {
    let shift = 57 - (v | 64).leading_zeros();
    ((shift as u64) << 6) + (v >> shift)
}

/// Writes the document, two-space indents as serde_json's pretty printer.
struct Out<W: Write> {
    w: W,
}

/// A histogram's extremes and percentiles, ns: `(min, max, p50, p90, p99)`.
type Latency = (u64, u64, u64, u64, u64);

impl<W: Write> Out<W> {
    /// One node at indentation `ind`; `id`, `parent` and `hist` as in the tree it belongs to.
    fn node(
        &mut self,
        ind: &str,
        n: &Node,
        id: usize,
        parent: Option<usize>,
        hist: bool,
    ) -> io::Result<()> {
        let root = parent.is_none();
        let name = node_name(n, id, root);
        writeln!(
            self.w,
            "{ind}{{\n{ind}  \"calls\": {},\n{ind}  \"depth\": {},",
            n.calls, n.depth
        )?;
        let latency = if hist && !root && n.calls > 0 {
            Some(self.histogram(ind, n)?)
        } else {
            writeln!(self.w, "{ind}  \"histogram\": null,")?;
            None
        };
        let w = &mut self.w;
        let level = u32::from(!root);
        writeln!(w, "{ind}  \"id\": {id},\n{ind}  \"level\": {level},")?;
        match latency {
            Some((min, max, p50, p90, p99)) => writeln!(
                w,
                "{ind}  \"max_ns\": {max},\n{ind}  \"min_ns\": {min},\n{ind}  \"name\": \"{name}\",\n\
                 {ind}  \"p50_ns\": {p50},\n{ind}  \"p90_ns\": {p90},\n{ind}  \"p99_ns\": {p99},"
            )?,
            None => writeln!(
                w,
                "{ind}  \"max_ns\": null,\n{ind}  \"min_ns\": null,\n{ind}  \"name\": \"{name}\",\n\
                 {ind}  \"p50_ns\": null,\n{ind}  \"p90_ns\": null,\n{ind}  \"p99_ns\": null,"
            )?,
        }
        match parent {
            Some(p) => writeln!(w, "{ind}  \"parent\": {p},")?,
            None => writeln!(w, "{ind}  \"parent\": null,")?,
        }
        let section = if root { 0 } else { n.name + 1 };
        writeln!(
            w,
            "{ind}  \"running\": 0,\n{ind}  \"section\": {section},\n{ind}  \"self_mem_bytes\": {},\n{ind}  \"self_ns\": {},",
            n.self_mem, n.self_ns
        )?;
        if !root {
            let module = MODULES[n.name as usize / FUNCTIONS.len()];
            writeln!(w, "{ind}  \"target\": \"synthetic::{module}\",")?;
        }
        write!(
            w,
            "{ind}  \"total_mem_bytes\": {},\n{ind}  \"total_ns\": {}\n{ind}}}",
            n.total_mem, n.total_ns
        )
    }

    /// The `histogram` field of a called path at indentation `ind`, and the latency it shows.
    fn histogram(&mut self, ind: &str, n: &Node) -> io::Result<Latency> {
        let w = &mut self.w;
        let (buckets, latency) = latency(n);
        write!(w, "{ind}  \"histogram\": {{\n{ind}    \"buckets\": [")?;
        for (i, (b, c)) in buckets.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(
                w,
                "{sep}\n{ind}      [\n{ind}        {b},\n{ind}        {c}\n{ind}      ]"
            )?;
        }
        writeln!(w, "\n{ind}    ],\n{ind}    \"sub_buckets\": 64\n{ind}  }},")?;
        Ok(latency)
    }

    /// The `th`-th entry of `threads`, with the tree of the thread's `run` of the depth-first order;
    /// `ids` as [`threads`] makes them.
    fn thread(&mut self, th: usize, run: &[(usize, usize)], ids: &Ids) -> io::Result<()> {
        let (t, order) = (ids.t, &ids.order);
        let busy: u64 = run
            .iter()
            .map(|&(from, _)| t[order[from] as usize].total_ns)
            .sum();
        let calls: u64 = run
            .iter()
            .flat_map(|&(a, b)| a..b)
            .map(|k| t[order[k] as usize].calls)
            .sum();
        let name = match th {
            0 => "main".to_owned(),
            1 => "worker".to_owned(),
            _ => format!("worker#{th}"),
        };
        let sep = if th == 0 { "" } else { "," };
        writeln!(
            self.w,
            "{sep}\n    {{\n      \"alive_ns\": {},\n      \"busy_ns\": {busy},\n      \"calls\": {calls},\n      \
             \"cpu_ns\": {},\n      \"dropped\": 0,\n      \"exited\": true,\n      \"index\": {th},\n      \
             \"main\": {},\n      \"name\": \"{name}\",\n      \"tree\": [",
            busy + busy / 50,
            busy / 10 * 9,
            th == 0
        )?;
        let root = Node {
            total_ns: busy,
            ..Node::default()
        };
        self.node("        ", &root, 0, None, false)?;
        for &(from, to) in run {
            for k in from..to {
                let n = &t[order[k] as usize];
                let parent = if n.depth == 1 {
                    0
                } else {
                    ids.local[ids.pos[n.parent as usize] as usize] as usize
                };
                self.w.write_all(b",\n")?;
                self.node(
                    "        ",
                    n,
                    ids.local[k] as usize,
                    Some(parent),
                    ids.local[k] as usize <= HISTOGRAM_PATHS,
                )?;
            }
        }
        write!(self.w, "\n      ]\n    }}")
    }
}

/// A node's section name: `(root)` for a thread's root, `synthetic` for the program's.
fn node_name(n: &Node, id: usize, root: bool) -> String {
    if root {
        if id == 0 && n.calls == 0 {
            "(root)".to_owned()
        } else {
            "synthetic".to_owned()
        }
    } else {
        format!(
            "{}::{}",
            MODULES[n.name as usize / FUNCTIONS.len()],
            FUNCTIONS[n.name as usize % FUNCTIONS.len()]
        )
    }
}

/// A called path's histogram buckets, `(bucket, count)`, and the latency they show: its calls spread
/// around their mean, one at each extreme.
fn latency(n: &Node) -> (Vec<(u64, u64)>, Latency) {
    let mean = (n.total_ns / n.calls).max(1);
    let f = |x: f64| ((mean as f64 * x) as u64).max(1);
    let (min, p50, p90, p99, max) = if n.calls == 1 {
        (mean, mean, mean, mean, mean)
    } else {
        (f(0.4), f(0.85), f(1.6), f(3.0), f(5.0))
    };
    let rest = n.calls.saturating_sub(2);
    let counts = [
        (min, 1),
        (p50, rest * 6 / 10),
        (p90, rest * 3 / 10),
        (p99, rest - rest * 6 / 10 - rest * 3 / 10),
        (max, 1),
    ];
    let mut buckets: Vec<(u64, u64)> = Vec::new();
    for (v, c) in counts {
        match buckets.last_mut() {
            _ if c == 0 => {}
            Some(last) if last.0 == bucket(v) => last.1 += c,
            _ => buckets.push((bucket(v), c)),
        }
    }
    if n.calls == 1 {
        buckets = vec![(bucket(mean), 1)];
    }
    (buckets, (min, max, p50, p90, p99))
}

/// Where each path goes: the tree, its paths in depth-first order, and their ids in the merged tree and
/// in their thread's.
struct Ids<'a> {
    t: &'a [Node],
    /// The breadth-first indices of the paths, in depth-first order.
    order: Vec<u32>,
    /// `pos[i]`: where breadth-first path i is in depth-first order (its id in the merged tree).
    pos: Vec<u32>,
    /// `local[k]`: the id of depth-first path k in its thread's tree.
    local: Vec<u32>,
}

/// The threads' runs of the depth-first order, `(from, to)`, and every path's ids. Each top-level
/// path's subtree is one run of the depth-first order; thread j % THREADS takes the j-th.
fn threads(t: &[Node]) -> (Vec<Vec<(usize, usize)>>, Ids<'_>) {
    let order = depth_first(t);
    let mut pos = vec![0u32; t.len()];
    for (k, &i) in order.iter().enumerate() {
        pos[i as usize] = k as u32;
    }
    let tops: Vec<usize> = (t[0].first_child..t[0].first_child + t[0].children)
        .map(|i| i as usize)
        .collect();
    let threads = THREADS.min(tops.len());
    let mut runs: Vec<Vec<(usize, usize)>> = vec![Vec::new(); threads];
    for (j, &top) in tops.iter().enumerate() {
        let from = pos[top] as usize;
        let to = tops.get(j + 1).map_or(order.len(), |&n| pos[n] as usize);
        runs[j % threads].push((from, to));
    }
    let mut local = vec![0u32; order.len()];
    for run in &runs {
        let mut id = 1;
        for &(from, to) in run {
            for slot in &mut local[from..to] {
                *slot = id;
                id += 1;
            }
        }
    }
    let ids = Ids {
        t,
        order,
        pos,
        local,
    };
    (runs, ids)
}

/// Writes the document to `file`: the run's fields, its threads each with its own tree, and the merged
/// tree. The file's size in bytes.
fn write_run(file: &str, runs: &[Vec<(usize, usize)>], ids: &Ids) -> io::Result<u64> {
    let (t, order, pos) = (ids.t, &ids.order, &ids.pos);
    let mut o = Out {
        w: BufWriter::with_capacity(1 << 20, File::create(file)?),
    };
    let wall = t[0].total_ns;
    write!(
        o.w,
        "{{\n  \"clock\": \"tsc\",\n  \"dropped\": 0,\n  \"format\": \"perfgraph-call-tree\",\n  \"host\": \"synthetic\",\n  \
         \"needs_every_record\": false,\n  \"overhead_ns_per_section\": 20.0,\n  \"pid\": 4242,\n  \
         \"program\": \"synthetic\",\n  \"rank\": 0,\n  \"skipped_sections\": [],\n  \
         \"start_unix_ns\": 1795449299977655542,\n  \"threads\": ["
    )?;
    for (th, run) in runs.iter().enumerate() {
        o.thread(th, run, ids)?;
    }
    write!(o.w, "\n  ],\n  \"tree\": [\n")?;
    o.node("    ", &t[0], 0, None, false)?;
    for (k, &i) in order.iter().enumerate().skip(1) {
        let n = &t[i as usize];
        o.w.write_all(b",\n")?;
        let hist = ids.local[k] as usize <= HISTOGRAM_PATHS;
        o.node("    ", n, k, Some(pos[n.parent as usize] as usize), hist)?;
    }
    writeln!(
        o.w,
        "\n  ],\n  \"verbosity\": 1,\n  \"version\": 1,\n  \"wall_ns\": {wall}\n}}"
    )?;
    o.w.flush()?;
    Ok(std::fs::metadata(file)?.len())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(paths), Some(file)) = (
        args.next().and_then(|n| n.parse::<usize>().ok()),
        args.next(),
    ) else {
        eprintln!("usage: synthetic_run N FILE   (N call paths, at least 1)");
        std::process::exit(2);
    };
    let paths = paths.max(1);
    let started = Instant::now();
    let mut r = Rng(0x5eed_0000 ^ paths as u64);
    let t = shape(paths, &mut r);
    let (runs, ids) = threads(&t);
    match write_run(&file, &runs, &ids) {
        Ok(bytes) => println!(
            "{paths} call paths, {} levels deep, {} threads, {bytes} bytes, in {:.2} s",
            t.iter().map(|n| n.depth).max().unwrap_or(0),
            runs.len(),
            started.elapsed().as_secs_f64()
        ),
        Err(e) => {
            eprintln!("synthetic_run: {file}: {e}");
            std::process::exit(1);
        }
    }
}
