//! A deterministic fake recording for the report and export goldens: thread snapshots built by hand, with
//! round times, as the runtime would have produced them for a small solver run on two threads.
#![allow(dead_code)] // reason: each test binary uses a different subset.

use perfgraph_core::Verbosity;
use perfgraph_core::data::{
    CallNode, CallTree, CpuFigures, Latency, Report, RunInfo, ThreadSnapshot,
};

/// One call path: depth (1 = top level), name, calls, self time (ms), self memory (MB, decimal).
pub type Path = (u32, &'static str, u64, u64, i64);

/// Builds a thread's call tree from paths in depth-first order; totals are summed bottom-up.
pub fn tree(paths: &[Path]) -> CallTree {
    let mut nodes = vec![node(0, "(root)", 0, 0, 0, None, 0)];
    let mut open: Vec<usize> = vec![0];
    for &(depth, name, calls, self_ms, self_mb) in paths {
        open.truncate(depth as usize);
        let parent = *open.last().expect("a path deeper than its parent + 1");
        let section = section_id(name);
        let i = nodes.len();
        nodes.push(node(
            section,
            name,
            depth,
            calls,
            self_ms,
            Some(parent),
            self_mb,
        ));
        nodes[parent].children.push(i);
        open.push(i);
    }
    for i in (0..nodes.len()).rev() {
        let (t, m) = nodes[i].children.iter().fold((0, 0), |(t, m), &c| {
            (t + nodes[c].total_ns, m + nodes[c].total_mem_bytes)
        });
        nodes[i].total_ns = nodes[i].self_ns + t;
        nodes[i].total_mem_bytes = nodes[i].self_mem_bytes + m;
        let (a, b) = nodes[i].children.iter().fold((0, 0), |(a, b), &c| {
            (a + nodes[c].allocs, b + nodes[c].alloc_bytes)
        });
        nodes[i].allocs = nodes[i].self_allocs + a;
        nodes[i].alloc_bytes = nodes[i].self_alloc_bytes + b;
        // CPU time, for the sections that measured it: a share of the self time, plus the measured
        // children's CPU time.
        if let Some(per_mille) = cpu_per_mille(nodes[i].name) {
            let children: u64 = nodes[i]
                .children
                .iter()
                .filter_map(|&c| nodes[c].cpu.map(|cpu| cpu.cpu_ns))
                .sum();
            let self_cpu_ns = nodes[i].self_ns / 1000 * per_mille;
            let mut cpu = CpuFigures::default();
            cpu.cpu_ns = self_cpu_ns + children;
            cpu.self_cpu_ns = self_cpu_ns;
            nodes[i].cpu = Some(cpu);
        }
    }
    CallTree::new(nodes)
}

/// The sections that measured their CPU time (the `cpu` option), with the share of their self time spent
/// on the CPU, per mille: the kernels compute, the output step mostly waits for the disk.
fn cpu_per_mille(name: &str) -> Option<u64> {
    match name {
        "Simulation::solve" => Some(500),
        "jacobian" => Some(950),
        "residual" => Some(900),
        "output_step" => Some(200),
        "checkpoint::compress" => Some(800),
        _ => None,
    }
}

/// A section name far wider than a table's name column.
pub const LONG_NAME: &str = "assemble_the_global_stiffness_matrix_for_every_element_block_of_the_mesh_and_then_some_more_words_to_go_past_the_limit";

/// Section ids as a registry would hand them out: one per name, for the whole process.
const SECTIONS: [&str; 15] = [
    "Simulation::setup",
    "mesh::refine",
    "time_steps",
    "Simulation::time_step",
    "Simulation::solve",
    "jacobian",
    "residual",
    "output_step",
    "write_checkpoint",
    "checkpoint::compress",
    "recurse",
    "mesh\nrefine\x1b[31m",
    "網格::細化",
    "🚀 launch",
    LONG_NAME,
];

/// The id of section `name` (ids start at 1).
pub fn section_id(name: &str) -> u32 {
    SECTIONS
        .iter()
        .position(|n| *n == name)
        .unwrap_or_else(|| panic!("add {name:?} to SECTIONS")) as u32
        + 1
}

fn node(
    section: u32,
    name: &'static str,
    depth: u32,
    calls: u64,
    self_ms: u64,
    parent: Option<usize>,
    self_mb: i64,
) -> CallNode {
    let level = if depth <= 1 { 0 } else { 1 };
    let mut n = CallNode::new(section, name, level, depth, parent);
    n.calls = calls;
    n.self_ns = self_ms * 1_000_000;
    n.self_mem_bytes = self_mb * 1_000_000;
    n.latency = latency(calls, self_ms * 1_000_000);
    n.self_allocs = calls * 4;
    n.self_alloc_bytes = self_mb.unsigned_abs() * 1_500_000;
    n.heap_growth_bytes = self_mb * 1_000_000;
    n.heap_peak_bytes = self_mb.unsigned_abs() * 2_000_000;
    n
}

/// A made-up spread of `calls` calls around `ns / calls`: a fifth at a third of it, a tenth at three
/// times, the rest at it.
fn latency(calls: u64, ns: u64) -> Latency {
    let mut l = Latency::default();
    let Some(avg) = ns.checked_div(calls) else {
        return l;
    };
    let (short, long) = (calls / 5, calls / 10);
    l.record(avg / 3, short);
    l.record(avg * 3, long);
    l.record(avg, calls - short - long);
    l
}

/// A thread snapshot with `tree`, alive from `started_ms` to `exited_ms` (None: still running), on CPU for
/// nine tenths of its time in sections.
pub fn thread(
    index: u32,
    name: &str,
    started_ms: u64,
    exited_ms: Option<u64>,
    dropped: u64,
    tree: CallTree,
) -> ThreadSnapshot {
    let recorded = tree.nodes.iter().map(|n| n.calls).sum();
    let cpu_ns = tree.nodes.iter().map(|n| n.self_ns).sum::<u64>() / 10 * 9;
    let mut t = ThreadSnapshot::new(index, name, tree);
    t.is_main = index == 0;
    t.started_ns = started_ms * 1_000_000;
    t.exited_ns = exited_ms.map(|ms| ms * 1_000_000);
    t.recorded = recorded;
    t.dropped = dropped;
    t.cpu_ns = cpu_ns;
    t
}

/// The solver run: the main thread sets up, refines a mesh (+160 MB) and takes three time steps whose solves
/// call two small kernels thousands of times; a checkpoint thread compresses in twelve pieces. 10.35 s wall.
pub fn solver_threads(worker_dropped: u64) -> Vec<ThreadSnapshot> {
    let main = tree(&[
        (1, "Simulation::setup", 1, 120, 2),
        (2, "mesh::refine", 1, 130, 160),
        (1, "time_steps", 1, 10, 0),
        (2, "Simulation::time_step", 3, 12, 0),
        (3, "Simulation::solve", 3, 90, 0),
        (4, "jacobian", 2970, 3950, 1),
        (4, "residual", 2970, 5450, 0),
        (3, "output_step", 2, 500, 0),
    ]);
    let worker = tree(&[
        (1, "write_checkpoint", 1, 4, 3),
        (2, "checkpoint::compress", 12, 1203, 0),
        // The same section under another parent is another call path.
        (1, "residual", 1, 40, 0),
    ]);
    vec![
        thread(0, "main", 0, None, 0, main),
        thread(1, "checkpointer", 1500, Some(2800), worker_dropped, worker),
    ]
}

/// The report of [`solver_threads`] at 10.35 s, with memory up 166 MB since the start. Below verbosity 3,
/// the run also reached two level-2 sections it did not record.
pub fn solver_report(verbosity: Verbosity, worker_dropped: u64) -> Report {
    let skipped = if verbosity != Verbosity::Level(3) {
        vec!["mesh::smooth", "Solver::line_search"]
    } else {
        Vec::new()
    };
    let mut run = RunInfo::new("demo", "tsc", 10_350_000_000);
    run.rss_change_bytes = 166_000_000;
    run.verbosity = verbosity;
    run.skipped = skipped;
    run.needs_every_record = true;
    run.process.pid = 4242;
    run.process.host = "node1".to_owned();
    run.process.start_unix_ns = 1_700_000_000_000_000_000;
    run.overhead_ns_per_section = Some(24.5);
    Report::build(run, &solver_threads(worker_dropped))
}
