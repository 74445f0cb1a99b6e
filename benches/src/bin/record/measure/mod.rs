//! Measuring: everything the record prints, gathered into plain data before a line of it is written. The
//! Criterion results are read from disk; the rest is measured here, on the demo binaries, the peers bench
//! and child processes of `record` itself.

pub mod alloc_peers;
pub mod capture;
pub mod cpu;
pub mod demo;
pub mod heap;
pub mod html;
pub mod layer;
pub mod layouts;
pub mod lifecycle;
pub mod listen;
pub mod machine;
pub mod merge;
pub mod results;
pub mod rss;
pub mod trace;

use std::path::PathBuf;
use std::process::Command;

use alloc_peers::AllocPeers;
use capture::Capture;
use cpu::CpuClock;
use demo::{Demo, DemoFigures};
use heap::Heap;
use layer::LayerRounds;
use layouts::Layouts;
use lifecycle::Lifecycle;
use listen::Listen;
use machine::Machine;
use merge::Merge;
use results::Results;
use rss::Rss;
use trace::TraceFigures;

/// What `record` is given on its command line.
pub struct Inputs {
    /// The Criterion home of the run, with one directory per bench process.
    pub criterion: PathBuf,
    /// The demo built with perfgraph instrumented.
    pub demo_on: PathBuf,
    /// The demo built with perfgraph compiled out.
    pub demo_off: PathBuf,
    /// The peers bench binary, for the short processes of [`Layouts`] and for [`LayerRounds`].
    pub peers_bench: PathBuf,
    /// The file the record goes to (its own changes do not make the tree dirty).
    pub out: PathBuf,
    /// The command that made the record, as the header shows it.
    pub command: String,
    /// The saved output of the full-size lifecycle tests ([`Lifecycle`]), if `run.sh` ran them.
    pub lifecycle: Option<PathBuf>,
    /// The `perfgraph` command (release build), for [`Merge`].
    pub perfgraph: Option<PathBuf>,
    /// The `benches/alloc-peers` binary (release build), for [`AllocPeers`].
    pub alloc_peers: Option<PathBuf>,
}

/// Every figure of one record.
pub struct Record {
    /// The machine and the run.
    pub machine: Machine,
    /// The Criterion medians of the three bench processes.
    pub results: Results,
    /// The off-by-verbosity cost in many short processes.
    pub layouts: Layouts,
    /// `TracingLayer` against tracing + `Registry`, side by side in rounds; `None` if the peers bench did
    /// not give them.
    pub layer: Option<LayerRounds>,
    /// Resident memory per recording thread.
    pub rss: Rss,
    /// The demo's figures; `None` if its binaries do not support `--fine-iters`.
    pub demo: Option<DemoFigures>,
    /// The cost of capturing the program's output.
    pub capture: Capture,
    /// Thread churn, the address-space limit and fork, at full size.
    pub lifecycle: Lifecycle,
    /// The streamed trace.
    pub trace: TraceFigures,
    /// `perfgraph merge` of many files; `None` without the command.
    pub merge: Option<Merge>,
    /// The counting allocator's cost per allocation and one exact memory read's.
    pub heap: Heap,
    /// The counting allocator against hotpath's, in their own process; `None` without the binary.
    pub alloc_peers: Option<AllocPeers>,
    /// One thread-CPU-clock read's cost (the `cpu` option).
    pub cpu: CpuClock,
    /// The control socket's cost: idle, and while a client refreshes.
    pub listen: Listen,
}

/// Measures everything, in the order the record has always measured it: the machine, the Criterion
/// results, the short processes, the `TracingLayer` rounds, the demo's whole-process time, the memory,
/// then the demo's loops; then the capture's floods; then the lifecycle tests' figures are read, and
/// `perfgraph merge` is timed; last, the heap accounting's costs and the thread-CPU-clock read's.
pub fn record(inputs: &Inputs) -> Record {
    let machine = Machine::read(&inputs.command, &inputs.out);
    let results = Results::load(&inputs.criterion);
    let layouts = Layouts::measure(&inputs.peers_bench);
    let layer = LayerRounds::measure(&inputs.peers_bench);
    let demo = Demo::probe(&inputs.demo_on, &inputs.demo_off);
    let process_time = demo.as_ref().map(Demo::process_time);
    let rss = Rss::measure();
    let demo = demo
        .zip(process_time)
        .map(|(demo, process_time)| demo.figures(process_time));
    let capture = Capture::measure(&inputs.demo_on);
    let lifecycle = Lifecycle::read(inputs.lifecycle.as_deref());
    let scratch = inputs.criterion.parent().unwrap_or(&inputs.criterion);
    let trace = trace::measure(scratch);
    let merge = Merge::measure(inputs.perfgraph.as_deref());
    let heap = Heap::measure();
    let alloc_peers = inputs.alloc_peers.as_deref().and_then(AllocPeers::measure);
    let cpu = CpuClock::measure();
    let listen = Listen::measure();
    Record {
        machine,
        results,
        layouts,
        layer,
        rss,
        demo,
        capture,
        lifecycle,
        trace,
        merge,
        heap,
        alloc_peers,
        cpu,
        listen,
    }
}

/// Runs `cmd` and reads its standard output with `parse`; `None`, and a line on stderr saying it `gave no`
/// `what`, if it fails to run, exits unsuccessfully, or prints nothing `parse` takes.
pub fn run_and_parse<T>(
    cmd: &mut Command,
    what: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let out = cmd.output();
    let parsed = out
        .as_ref()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| parse(&String::from_utf8_lossy(&o.stdout)));
    if parsed.is_none() {
        eprintln!(
            "record: {} gave no {what}: {out:?}",
            cmd.get_program().to_string_lossy()
        );
    }
    parsed
}
