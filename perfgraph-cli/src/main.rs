//! `perfgraph`: reports from a run's call-tree JSON, a diff of two runs for CI, and merges of many
//! processes' runs and traces; and a look into running programs (`ps`, `dump`, `trace`, `top`).
//!
//! Every error on the input is one line naming the file and what is wrong, and exit code 2; `diff` exits
//! 1 when a section regressed past the threshold, 0 otherwise.

mod attach;
mod bundle;
mod causal;
mod compare;
mod critical;
mod diff;
mod failure;
mod gate;
mod history;
mod html;
mod load;
mod members;
mod merge;
mod report;
mod rng;
mod stop;
mod table;
mod top;
mod xml;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use failure::Failure;

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
    Report(report::ReportArgs),
    /// Compares two runs section by section; exits 1 when a section got slower past the threshold (or,
    /// with --fail-on-removed, is missing from the head), 0 when none did, 2 on bad input (two runs with
    /// no section in common included). With bundles (`record`'s), each run is one sample: a section
    /// fails when its confidence interval lies wholly beyond --noise and the change is significant after
    /// Holm's correction; exit 3 when the runs cannot decide.
    #[command(after_help = LIMITS)]
    Diff(diff::DiffArgs),
    /// Writes the run as one self-contained HTML page (no network request, opens from file://): a flame
    /// graph of the call tree, every table, latency histograms; with the run's Chrome JSON trace, also
    /// its series over time (memory, counters, CPU) and its critical path.
    #[command(after_help = LIMITS)]
    Html(html::HtmlArgs),
    /// Runs a command N times (and a baseline command as often, interleaved in a random order), each run
    /// writing its call-tree JSON, into a bundle directory with a manifest, for `diff` and `history`.
    Record(bundle::record::RecordArgs),
    /// A store of bundles keyed by commit, and the change points in each section's series:
    /// `history add BUNDLE`, `history` (list), `history --plot out.svg`.
    History(history::HistoryArgs),
    /// Merges many processes' runs into one JSON (calls and times summed per call path, the spread over
    /// processes kept), or with --trace their traces into one timeline.
    #[command(after_help = LIMITS)]
    Merge(merge::MergeArgs),
    /// Lists this user's running instrumented processes (pid, program, started, threads, sections): those
    /// that answer on their control socket (PERFGRAPH_LISTEN, on by default).
    Ps,
    /// Writes a running process's call-tree JSON now (PERFGRAPH_JSON's schema, running sections marked by
    /// each node's `running`), which `report`, `diff` and `merge` read like any run's file.
    Dump(attach::DumpArgs),
    /// Has a running process record a trace of the next N seconds, whether or not PERFGRAPH_TRACE was
    /// set, and writes it to the file (Perfetto for .pftrace / .perfetto-trace, Chrome JSON otherwise).
    Trace(attach::TraceArgs),
    /// A live terminal UI on a running process: what each thread runs now, the call graph, the heaviest
    /// sections with their latency percentiles, the threads, memory. Keys: q quit, tab or 1-4 pane, s
    /// sort, n top 10, / filter by name.
    Top(top::TopArgs),
    /// Causal profiling: runs the command with sections virtually sped up, one at a time (PERFGRAPH_CAUSAL,
    /// after coz), and prints what speeding each section up would do to the program's rate of progress,
    /// with 95% intervals; writes the experiments to profile.coz (coz's format). Without a command,
    /// reads that profile.
    Causal(causal::CausalArgs),
}

/// What every subcommand's `--help` says about its input.
const LIMITS: &str = "Input limits: a call-tree file is read as a stream, and refused (one line naming the file, \
exit 2) past 8 GiB, 10,000,000 nodes (all its trees and processes together), a string (a name) of 4096 \
bytes, a tree whose depths do not follow its parents, or a count that overflows. Memory holds the runs \
read, not their text. A trace (merge --trace) is streamed one event at a time, up to 64 GiB and 1 MiB a \
string.";

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report(a) => report::run(&a),
        Command::Diff(a) => diff::run(
            &a.base,
            a.head.as_deref(),
            &compare::Options {
                threshold: a.threshold,
                min_ms: a.min_ms,
                metric: a.metric.unwrap_or(compare::Metric::Total),
                metric_given: a.metric.is_some(),
                paths: a.paths,
                fail_on_removed: a.fail_on_removed,
                noise: a.noise / 100.0,
            },
            a.html.as_deref(),
        ),
        Command::Html(a) => html::run(&a),
        Command::Record(a) => bundle::record::run(&a),
        Command::History(a) => history::run(&a),
        Command::Merge(a) if a.trace => {
            merge::trace::merge(&a.files, a.output.as_deref()).map(|_| 0)
        }
        Command::Merge(a) => {
            merge::merge(&a.files, a.output.as_deref(), a.allow_duplicates).map(|_| 0)
        }
        Command::Ps => attach::ps().map(|_| 0),
        Command::Dump(a) => attach::dump(a.pid, a.output.as_deref()).map(|_| 0),
        Command::Trace(a) => attach::trace(a.pid, a.seconds, &a.output).map(|_| 0),
        Command::Top(a) => top::run(a.pid, a.interval),
        Command::Causal(a) => causal::run(&a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure(line)) => {
            eprintln!("perfgraph: {line}");
            ExitCode::from(2)
        }
    }
}
