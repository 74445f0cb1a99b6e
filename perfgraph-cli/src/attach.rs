//! `ps`, `dump`, `trace` and `report <pid>`: the running processes, through their control sockets
//! (`perfgraph_core::attach`). Every failure is one line naming the process.

use std::path::{Path, PathBuf};

use clap::Args;
use perfgraph_core::data::Report;
use perfgraph_core::{attach, text};

use crate::failure::Failure;
use crate::load;

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// The process id.
    pub pid: u32,
    /// Where to write the JSON ("-" or none: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The process id.
    pub pid: u32,
    /// How long to trace, seconds.
    #[arg(long, value_name = "N", default_value_t = 5.0)]
    pub seconds: f64,
    /// The trace file: .pftrace or .perfetto-trace for Perfetto's format, anything else Chrome JSON.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

fn failure(e: &std::io::Error) -> Failure {
    Failure(e.to_string())
}

/// `report`'s argument as a pid: digits only, and no file of that name.
pub fn pid_argument(arg: &Path) -> Option<u32> {
    let text = arg.to_str()?;
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (digits && !arg.exists())
        .then(|| text.parse().ok())
        .flatten()
}

/// The report of running process `pid`, now.
pub fn report(pid: u32) -> Result<Report, Failure> {
    attach::report(pid).map_err(|e| failure(&e))
}

/// `perfgraph ps`: one row per process that answers, and per process that does not (stopped); then what
/// was refused (a socket directory not trusted, say), one line each, and exit code 2.
pub fn ps() -> Result<(), Failure> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let listing = attach::list();
    let mut rows: Vec<(u32, String)> = listing
        .processes
        .iter()
        .map(|p| {
            let ago = now.saturating_sub(p.start_unix_ns) / 1_000_000_000;
            let row = format!(
                "{:>7}  {:>7}  {:>7}  {:>8}  {}\n",
                p.pid,
                format!("{} ago", duration(ago)),
                p.threads.len(),
                p.sections,
                // The process's own text: never a terminal's command.
                text::escape(&p.program)
            );
            (p.pid, row)
        })
        .collect();
    rows.extend(listing.not_responding.iter().map(|&pid| {
        let row = format!(
            "{pid:>7}  {:>7}  {:>7}  {:>8}  stopped (not responding)\n",
            "-", "-", "-"
        );
        (pid, row)
    }));
    rows.sort_by_key(|(pid, _)| *pid);
    let mut text = String::from("    PID  STARTED  THREADS  SECTIONS  PROGRAM\n");
    text.extend(rows.into_iter().map(|(_, row)| row));
    load::print(&text)?;
    let mut errors = listing.errors;
    match errors.pop() {
        None => Ok(()),
        Some(last) => {
            for e in errors {
                eprintln!("perfgraph: {e}");
            }
            Err(Failure(last))
        }
    }
}

/// `3s`, `4m05s`, `2h07m`, `3d04h`.
fn duration(s: u64) -> String {
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

/// `perfgraph dump <pid> [-o file]`.
pub fn dump(pid: u32, output: Option<&Path>) -> Result<(), Failure> {
    let json = attach::dump(pid).map_err(|e| failure(&e))?;
    load::write(output, |out| out.write_all(&json))
}

/// `perfgraph trace <pid> --seconds N -o file`: the trace, as the process streams it, into the file,
/// through a temporary file renamed over it at the end ([`load::Replacing`]). Nothing is made before the
/// trace's first bytes: a process that is not there, or refuses, leaves no file; a write that fails (a full
/// disk) leaves the file of that name as it was.
pub fn trace(pid: u32, seconds: f64, output: &Path) -> Result<(), Failure> {
    let perfetto = output
        .extension()
        .is_some_and(|e| e == "pftrace" || e == "perfetto-trace");
    let mut file = load::Replacing::new(output);
    let written = attach::trace(pid, seconds, perfetto, &mut file);
    let bytes = written.map_err(|e| match file.started() {
        // The file's own error names the file.
        true if e.kind() != std::io::ErrorKind::Other => {
            Failure(format!("{}: {e}", output.display()))
        }
        _ => failure(&e),
    })?;
    if file.started() {
        file.commit()
            .map_err(|e| Failure(format!("{}: {e}", output.display())))?;
    }
    eprintln!(
        "perfgraph: trace of process {pid}: {bytes} {} in {}",
        if bytes == 1 { "byte" } else { "bytes" },
        output.display()
    );
    Ok(())
}
