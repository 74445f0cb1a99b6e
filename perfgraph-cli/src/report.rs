//! `perfgraph report`: the tables a run printed at exit, from its JSON or from a running process.

use std::path::PathBuf;

use clap::Args;
use perfgraph_core::config::ReportSelection;

use crate::failure::Failure;
use crate::{attach, critical, load};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The call-tree JSON (PERFGRAPH_JSON, or the output of `perfgraph merge`), or the pid of a running
    /// process (its tables now); with --critical-path, a Chrome JSON trace.
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
    /// The `Critical Path:` table, from a Chrome JSON trace (PERFGRAPH_TRACE=run.json, or `perfgraph
    /// trace PID`) instead of a call-tree JSON: the path through the threads that decided when the run
    /// ended, each section's time on it and its slack, and the wait chains that cost the most.
    #[arg(long = "critical-path")]
    critical_path: bool,
    /// With --critical-path: the path through each call of section NAME instead of the whole run.
    #[arg(long, value_name = "NAME", requires = "critical_path")]
    section: Option<String>,
    /// With --critical-path: the run's time predicted were section NAME PCT% faster (an estimate on the
    /// recorded order of hand-overs).
    #[arg(long = "what-if", value_name = "NAME=PCT", requires = "critical_path", value_parser = critical::what_if)]
    what_if: Option<(String, f64)>,
}

/// Prints the tables `a` asks for (every one without a table flag).
pub fn run(a: &ReportArgs) -> Result<u8, Failure> {
    if a.critical_path {
        load::print(&critical::table(
            &a.file,
            a.section.as_deref(),
            a.what_if.clone(),
        )?)?;
        return Ok(0);
    }
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
