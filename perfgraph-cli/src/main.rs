//! `perfgraph`: reports from a run's call-tree JSON, a diff of two runs for CI, and merges of many
//! processes' runs and traces; and a look into running programs (`ps`, `dump`, `trace`, `top`).
//!
//! Every error on the input is one line naming the file and what is wrong, and exit code 2; `diff` exits
//! 1 when a section regressed past the threshold, 0 otherwise.

mod attach;
mod diff;
mod load;
mod top;
mod trace;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use perfgraph_core::config::ReportSelection;
use perfgraph_core::data::Report;

/// Reports, diffs and merges of perfgraph's call-tree JSON files (`PERFGRAPH_JSON`).
#[derive(Parser, Debug)]
#[command(name = "perfgraph", version, about, after_help = LIMITS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Prints the tables a run printed at exit (PERFGRAPH_REPORT), from its JSON. Without a table flag,
    /// all of them.
    #[command(after_help = LIMITS)]
    Report(ReportArgs),
    /// Compares two runs section by section; exits 1 when a section got slower past the threshold (or,
    /// with --fail-on-removed, is missing from the head), 0 when none did, 2 on bad input (two runs with
    /// no section in common included).
    #[command(after_help = LIMITS)]
    Diff(DiffArgs),
    /// Merges many processes' runs into one JSON (calls and times summed per call path, the spread over
    /// processes kept), or with --trace their traces into one timeline.
    #[command(after_help = LIMITS)]
    Merge(MergeArgs),
    /// Lists this user's running instrumented processes (pid, program, started, threads, sections): those
    /// that answer on their control socket (PERFGRAPH_LISTEN, on by default).
    Ps,
    /// Writes a running process's call-tree JSON now (PERFGRAPH_JSON's schema, running sections marked by
    /// each node's `running`), which `report`, `diff` and `merge` read like any run's file.
    Dump(DumpArgs),
    /// Has a running process record a trace of the next N seconds, whether or not PERFGRAPH_TRACE was
    /// set, and writes it to the file (Perfetto for .pftrace / .perfetto-trace, Chrome JSON otherwise).
    Trace(TraceArgs),
    /// A live terminal UI on a running process: what each thread runs now, the call graph, the heaviest
    /// sections with their latency percentiles, the threads, memory. Keys: q quit, tab or 1-4 pane, s
    /// sort, n top 10, / filter by name.
    Top(TopArgs),
}

#[derive(Args, Debug)]
struct TopArgs {
    /// The process id.
    pid: u32,
    /// Seconds between refreshes (at least 0.1).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    interval: f64,
}

#[derive(Args, Debug)]
struct DumpArgs {
    /// The process id.
    pid: u32,
    /// Where to write the JSON ("-" or none: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct TraceArgs {
    /// The process id.
    pid: u32,
    /// How long to trace, seconds.
    #[arg(long, value_name = "N", default_value_t = 5.0)]
    seconds: f64,
    /// The trace file: .pftrace or .perfetto-trace for Perfetto's format, anything else Chrome JSON.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

#[derive(Args, Debug)]
struct ReportArgs {
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

#[derive(Args, Debug)]
struct DiffArgs {
    /// The run to compare against.
    base: PathBuf,
    /// The run to check.
    head: PathBuf,
    /// Change (percent) past which a section is marked; a slower one fails the diff.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    threshold: f64,
    /// Noise floor: sections below this many milliseconds in both runs are never marked.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    min_ms: f64,
    /// What is compared: total time, self time, or the 99th percentile of a call's duration.
    #[arg(long, value_enum, default_value_t = diff::Metric::Total)]
    metric: diff::Metric,
    /// One row per call path instead of per section.
    #[arg(long)]
    paths: bool,
    /// A section of the base that the head lacks fails the diff (exit 1). Off by default: removed
    /// sections are listed in a `Removed:` line, and the diff passes.
    #[arg(long)]
    fail_on_removed: bool,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// The runs' call-tree JSON files (with --trace: their traces, PERFGRAPH_TRACE).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Where to write the merge ("-" or none: standard output).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Merge traces (PERFGRAPH_TRACE files) into one timeline: a process per input, named by rank and
    /// host, aligned on their wall-clock anchors.
    #[arg(long)]
    trace: bool,
    /// Merge a process that is already in (the same host, pid, rank and start time: the same file twice,
    /// or a merge together with its own inputs) anyway, counting it twice. Without it, that is an error.
    #[arg(long)]
    allow_duplicates: bool,
}

/// What every subcommand's `--help` says about its input.
const LIMITS: &str = "Input limits: a call-tree file is read as a stream, and refused (one line naming the file, \
exit 2) past 8 GiB, 10,000,000 nodes (all its trees and processes together), a string (a name) of 4096 \
bytes, a tree whose depths do not follow its parents, or a count that overflows. Memory holds the runs \
read, not their text. A trace (merge --trace) is streamed one event at a time, up to 64 GiB and 1 MiB a \
string.";

/// A failure: what to print (one line, naming the file) and the exit code.
pub struct Failure(pub String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report(a) => report(&a),
        Command::Diff(a) => diff::run(
            &a.base,
            &a.head,
            &diff::Options {
                threshold: a.threshold,
                min_ms: a.min_ms,
                metric: a.metric,
                paths: a.paths,
                fail_on_removed: a.fail_on_removed,
            },
        ),
        Command::Merge(a) if a.trace => trace::merge(&a.files, a.output.as_deref()).map(|_| 0),
        Command::Merge(a) => merge(&a.files, a.output.as_deref(), a.allow_duplicates).map(|_| 0),
        Command::Ps => attach::ps().map(|_| 0),
        Command::Dump(a) => attach::dump(a.pid, a.output.as_deref()).map(|_| 0),
        Command::Trace(a) => attach::trace(a.pid, a.seconds, &a.output).map(|_| 0),
        Command::Top(a) => top::run(a.pid, a.interval),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure(line)) => {
            eprintln!("perfgraph: {line}");
            ExitCode::from(2)
        }
    }
}

fn report(a: &ReportArgs) -> Result<u8, Failure> {
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

fn merge(
    files: &[PathBuf],
    output: Option<&std::path::Path>,
    allow_duplicates: bool,
) -> Result<(), Failure> {
    let mut runs: Vec<Report> = Vec::with_capacity(files.len());
    // Each process merged so far, by identity, and the file it came from.
    let mut seen: HashMap<(String, u32, u32, u64), usize> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        let r = load::run(f)?;
        if let Some(first) = runs.first()
            && first.run.program != r.run.program
        {
            eprintln!(
                "perfgraph: warning: {} is a run of `{}`, {} of `{}`; merging anyway",
                f.display(),
                r.run.program,
                files[0].display(),
                first.run.program
            );
        }
        let processes = match &r.merged {
            Some(m) => m.processes.clone(),
            None => vec![r.run.process.clone()],
        };
        for p in processes {
            let key = (p.host.clone(), p.pid, p.rank, p.start_unix_ns);
            if let Some(&before) = seen.get(&key)
                && !allow_duplicates
            {
                return Err(Failure(format!(
                    "{}: process {} (rank {}, host {:?}, started at {} ns) is in {} already: merged twice \
                     it would count twice (--allow-duplicates merges it anyway)",
                    f.display(),
                    p.pid,
                    p.rank,
                    p.host,
                    p.start_unix_ns,
                    files[before].display()
                )));
            }
            seen.insert(key, i);
        }
        runs.push(r);
    }
    let merged = Report::merge_runs(&runs)
        .map_err(|e| Failure(format!("{}: {e}", files[e.run].display())))?;
    load::write(output, |out| merged.write_json(out))
}
