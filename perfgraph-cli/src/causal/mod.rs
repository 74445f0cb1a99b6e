//! `perfgraph causal`: runs a program with causal profiling on (`PERFGRAPH_CAUSAL`), as many times as
//! asked, gathers the experiments into one profile (coz's format, `profile.coz`), and prints what speeding
//! each section up would do to the program: for each tested speed-up, the program's predicted speed-up at
//! a progress point, with its 95% interval. Without a command, it reads the profile already there.

mod estimate;
mod page;
mod profile;
mod table;

use std::ffi::OsString;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::failure::Failure;
use crate::stop::{self, Stop};
use profile::Profile;

/// `perfgraph causal`'s arguments.
#[derive(clap::Args, Debug)]
pub struct CausalArgs {
    /// Runs of the command (each adds its experiments to the profile).
    #[arg(short = 'n', long = "runs", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// The progress point: a section whose completions count the program's progress (throughput).
    /// Default: of the sections every experiment at 0% saw end, the one whose rate was steadiest.
    #[arg(long, value_name = "SECTION")]
    pub progress: Option<String>,
    /// Predicts the progress point's latency (its calls' time from start to end, by Little's law, as coz)
    /// rather than its rate of completions; the runs must name it (`--progress`).
    #[arg(long)]
    pub latency: bool,
    /// Only these sections are sped up (repeat the flag; default: any section that ends).
    #[arg(long = "section", value_name = "SECTION")]
    pub sections: Vec<String>,
    /// The speed-ups tried, in percent (default: 0 to 100 by 5, with 0 a quarter of the picks).
    #[arg(long, value_name = "LIST", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(0..=100))]
    pub speedups: Vec<u32>,
    /// An experiment's shortest length, seconds (PERFGRAPH_CAUSAL_EXPERIMENT).
    #[arg(long, value_name = "SECONDS")]
    pub experiment: Option<f64>,
    /// The profile: written by the runs (replaced), or read when no command is given.
    #[arg(short, long, value_name = "FILE", default_value = "profile.coz")]
    pub output: PathBuf,
    /// Also writes the predictions as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also writes them as one self-contained HTML page: each section's curve, then the table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The command, after `--`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// Runs the command's runs (if any), then prints the predictions. Exit code: 0, or the first run's
/// status that was not 0 (a line says so).
pub fn run(a: &CausalArgs) -> Result<u8, Failure> {
    let ran = if a.command.is_empty() {
        Ran::default()
    } else {
        record(a)?
    };
    let predicted = predict(a, &ran);
    // A signal (SIGINT, SIGTERM, SIGHUP) cut the runs short: the predictions from what they gathered are
    // printed, then perfgraph ends as the signal would have ended it (a shell sees the signal).
    if let Some(sig) = ran.signal {
        if let Err(Failure(line)) = &predicted {
            eprintln!("perfgraph: {line}");
        }
        stop::end(sig);
    }
    predicted
}

/// What this invocation's runs did.
#[derive(Debug, Default)]
struct Ran {
    /// The exit code to give: 0, or the first run's status that was not 0.
    status: u8,
    /// The runs made (`None`: the profile was there already).
    runs: Option<u32>,
    /// The signal that cut the runs short.
    signal: Option<i32>,
}

/// Reads the profile and prints the predictions (and writes `--json`, `--html`); returns the runs' exit
/// code.
fn predict(a: &CausalArgs, ran: &Ran) -> Result<u8, Failure> {
    let mut p = Profile::default();
    let name = a.output.display().to_string();
    let file = File::open(&a.output).map_err(|e| Failure(format!("{name}: {e}")))?;
    profile::read(BufReader::new(file), &name, &mut p)?;
    if p.experiments.is_empty() {
        return Err(Failure(format!(
            "{name}: no experiment was reported ({} could not be: runs too short, or the progress point \
             too rarely reached; run longer, or more times with -n)",
            p.unreported
        )));
    }
    let point = match &a.progress {
        Some(p) => p.clone(),
        None => estimate::steadiest(&p.experiments).ok_or_else(|| {
            Failure(format!(
                "{name}: no section ended at least 5 times in every experiment at 0%; name the progress \
                 point with --progress"
            ))
        })?,
    };
    let measure = if a.latency {
        estimate::Measure::Latency
    } else {
        estimate::Measure::Throughput
    };
    let Some(base) = estimate::baseline(&p.experiments, &point, measure) else {
        let what = if a.latency {
            "the latency point (a run's --progress names it)"
        } else {
            "the progress point"
        };
        return Err(Failure(format!(
            "{name}: no experiment at 0% saw {what} {point:?} reached"
        )));
    };
    let cells = estimate::cells(&p.experiments, &point, measure);
    let shown = table::Shown {
        point: &point,
        measure,
        runs: ran.runs,
    };
    let text = table::render(&shown, &base, &cells, &p);
    print!("{text}");
    if let Some(json) = &a.json {
        write_to(json, &table::json(&shown, &base, &cells))?;
    }
    if let Some(html) = &a.html {
        let sections = table::sections(&cells);
        let title = format!("perfgraph causal: {point}");
        write_to(html, &page::page(&title, &sections, &cells, &text))?;
    }
    Ok(ran.status)
}

/// Writes `text` to the file `path`, or says why it could not.
fn write_to(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure(format!("{}: {e}", path.display())))
}

/// Runs the command `a.runs` times, each writing its experiments to a file of its own beside the profile,
/// appended to the new profile after the run; the new profile replaces the old one once every run has
/// ended (a command that cannot run leaves the old one as it was). A SIGINT, SIGTERM or SIGHUP (a Ctrl-C
/// reaches the program too) ends the runs after the one under way, keeping what they gathered. Returns
/// the exit code to give, and the signal that cut the runs short.
fn record(a: &CausalArgs) -> Result<Ran, Failure> {
    let out = &a.output;
    let fresh = beside(out, "new");
    // A new file (never one already there, nor what a link there points to).
    let mut profile = File::options()
        .write(true)
        .create_new(true)
        .open(&fresh)
        .map_err(|e| Failure(format!("{}: {e}", fresh.display())))?;
    let part = beside(out, "run");
    let stop = Stop::catch();
    let mut status = 0u8;
    let mut made = 0;
    for run in 1..=a.runs {
        if stop.signal().is_some() {
            break;
        }
        made = run;
        let ran = run_once(a, &part).and_then(|code| {
            append(&part, &mut profile, &fresh)?;
            Ok(code)
        });
        let code = match ran {
            Ok(code) => code,
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                let _ = std::fs::remove_file(&fresh);
                return Err(e);
            }
        };
        if code != 0 && status == 0 {
            let program = a.command[0].to_string_lossy();
            eprintln!("perfgraph: run {run} of {program} exited with {code}");
            status = u8::try_from(code).unwrap_or(1);
        }
    }
    std::fs::rename(&fresh, out).map_err(|e| Failure(format!("{}: {e}", out.display())))?;
    if let Some(sig) = stop.signal() {
        eprintln!(
            "perfgraph: {}: the runs ended after run {made} of {}; the predictions are from what they gathered",
            stop::name(sig),
            a.runs
        );
    }
    Ok(Ran {
        status,
        runs: Some(made),
        signal: stop.signal(),
    })
}

/// One run of the command, its experiments to `part`: its exit status as a shell gives it.
fn run_once(a: &CausalArgs, part: &Path) -> Result<i32, Failure> {
    let mut c = Command::new(&a.command[0]);
    c.args(&a.command[1..]).env("PERFGRAPH_CAUSAL", part);
    if let Some(p) = &a.progress {
        c.env("PERFGRAPH_CAUSAL_PROGRESS", p);
    }
    if !a.sections.is_empty() {
        c.env("PERFGRAPH_CAUSAL_SECTIONS", a.sections.join(","));
    }
    if !a.speedups.is_empty() {
        let list: Vec<String> = a.speedups.iter().map(u32::to_string).collect();
        c.env("PERFGRAPH_CAUSAL_SPEEDUPS", list.join(","));
    }
    if let Some(s) = a.experiment {
        c.env("PERFGRAPH_CAUSAL_EXPERIMENT", s.to_string());
    }
    let program = a.command[0].to_string_lossy();
    let exit = c
        .status()
        .map_err(|e| Failure(format!("{program}: cannot run: {e}")))?;
    Ok(crate::bundle::record::shell_status(exit))
}

/// A file beside the profile, named after it, this process and `what`.
fn beside(out: &Path, what: &str) -> PathBuf {
    let mut name = out.file_name().map(OsString::from).unwrap_or_default();
    name.push(format!(".{}.{what}", std::process::id()));
    out.with_file_name(name)
}

/// Appends the run's file `part` (if it wrote one) to the profile, and removes it.
fn append(part: &Path, profile: &mut File, out: &Path) -> Result<(), Failure> {
    let mut text = match File::open(part) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Failure(format!("{}: {e}", part.display()))),
    };
    let _ = std::fs::remove_file(part);
    // Copied a buffer at a time: memory does not grow with the run's length.
    std::io::copy(&mut text, profile)
        .map(drop)
        .map_err(|e| Failure(format!("{}: {e}", out.display())))
}
