//! `perfgraph report`: the tables a run printed at exit, from its JSON or from a running process.

use std::path::PathBuf;

use clap::Args;
use perfgraph_core::config::ReportSelection;

use crate::failure::Failure;
use crate::{attach, load};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The call-tree JSON (PERFGRAPH_JSON, or the output of `perfgraph merge`), or the pid of a running
    /// process (its tables now).
    file: PathBuf,
    /// The `Performance Graph:` table.
    #[arg(long)]
    graph: bool,
    /// The `Heaviest Branch:` table.
    #[arg(long)]
    branch: bool,
    /// The `Heaviest Sections:` table, with the N heaviest (10 without N).
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "10")]
    sections: Option<usize>,
    /// The `Threads:` table.
    #[arg(long)]
    threads: bool,
    /// The `Latency:` table (as many sections as --sections shows).
    #[arg(long)]
    latency: bool,
    /// The `Async Sections:` table (printed when the run had timed futures).
    #[arg(long = "async")]
    asyncs: bool,
    /// The `Allocations:` table (printed when the run counted allocations: the program installed
    /// perfgraph's CountingAllocator).
    #[arg(long)]
    alloc: bool,
    /// The `CPU:` table (printed when some section measured its CPU time: the `cpu` option,
    /// PERFGRAPH_CPU=all).
    #[arg(long)]
    cpu: bool,
    /// The `Counters:` table (printed when the program set some `counter!`).
    #[arg(long)]
    counters: bool,
    /// The `Locks:` table (printed when the program used a lock of `perfgraph_core::sync`).
    #[arg(long)]
    locks: bool,
    /// Every table (the default).
    #[arg(long)]
    all: bool,
}

/// Prints the tables `a` asks for (every one without a table flag).
pub fn run(a: &ReportArgs) -> Result<u8, Failure> {
    let r = match attach::pid_argument(&a.file) {
        Some(pid) => attach::report(pid)?,
        None => load::run(&a.file)?,
    };
    let none = !(a.graph
        || a.branch
        || a.sections.is_some()
        || a.threads
        || a.latency
        || a.asyncs
        || a.alloc
        || a.cpu
        || a.counters
        || a.locks);
    let selection = if a.all || none {
        // `Allocations:`, `CPU:`, `Counters:` and `Locks:` show only for a run that has their figures.
        ReportSelection::all().sections(Some(a.sections.unwrap_or(10)))
    } else {
        ReportSelection::default()
            .graph(a.graph)
            .branch(a.branch)
            .sections(a.sections)
            .threads(a.threads)
            .latency(a.latency)
            .asyncs(a.asyncs)
            .alloc(a.alloc)
            .cpu(a.cpu)
            .counters(a.counters)
            .locks(a.locks)
    };
    load::print(&r.render(&selection))?;
    Ok(0)
}
