//! `perfgraph merge`: many processes' runs as one call-tree JSON; with `--trace` ([`trace`]), their
//! traces as one timeline.

pub mod trace;

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Args;
use perfgraph_core::data::Report;

use crate::failure::Failure;
use crate::load;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The runs' call-tree JSON files (with --trace: their traces, PERFGRAPH_TRACE).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the merge ("-" or none: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Merge traces (PERFGRAPH_TRACE files) into one timeline: a process per input, named by rank and
    /// host, aligned on their wall-clock anchors.
    #[arg(long)]
    pub trace: bool,
    /// Merge a process that is already in (the same host, pid, rank and start time: the same file twice,
    /// or a merge together with its own inputs) anyway, counting it twice. Without it, that is an error.
    #[arg(long)]
    pub allow_duplicates: bool,
}

/// Merges the runs in `files` into one JSON, written to `output` (standard output for none or `-`).
pub fn merge(
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
