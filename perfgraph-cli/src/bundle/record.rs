//! `perfgraph record`: runs a command N times (with a baseline, both, interleaved in a random order),
//! each run writing its call-tree JSON into a new bundle directory whose manifest is rewritten after every
//! run, so a record cut short still leaves the runs it made, readable.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

use clap::Args;

use crate::bundle::{MANIFEST, Manifest, Recorded, Run, RunFile, Side, meta};
use crate::failure::Failure;
use crate::load;
use crate::rng::Rng;
use crate::stop::{self, Stop};

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Runs of each command.
    #[arg(short = 'n', long = "runs", value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub runs: u32,
    /// A baseline command, its arguments up to `--`: run as many times as the command, the two
    /// interleaved in a random order; `perfgraph diff BUNDLE` then compares them.
    #[arg(long, value_name = "CMD", num_args = 1.., allow_hyphen_values = true, value_terminator = "--")]
    pub baseline: Option<Vec<OsString>>,
    /// What the runs measure: wall time; each section's CPU time (PERFGRAPH_CPU=all); or instructions,
    /// each run under Callgrind (valgrind), nearly deterministic, for shared CI runners.
    #[arg(long, value_enum, default_value_t = Recorded::Wall)]
    pub metric: Recorded,
    /// The bundle directory to make; it must not exist.
    #[arg(short, long, value_name = "DIR", default_value = "perfgraph-bundle")]
    pub output: PathBuf,
    /// The seed of the run order (default: from the clock; the manifest keeps it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Runs of each command before the recorded ones, not kept (caches, page cache, CPU frequency).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warmup: u32,
    /// Shows the program's standard output and error; by default its output goes nowhere and its
    /// standard error into the bundle (`runs/<side>-<n>.stderr`).
    #[arg(long)]
    pub show_output: bool,
    /// The command, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// Runs the command's (and the baseline's) runs into the bundle. The exit code is the program's: the
/// status the runs exited with, or where they disagree the first that was not 0 (and a line says so).
/// A SIGINT, SIGTERM or SIGHUP (a Ctrl-C reaches the program too) ends the runs: the one under way is
/// left out (a run cut short is no sample), the bundle keeps those before it, the closing lines are
/// printed, and perfgraph ends as the signal would have ended it.
pub fn run(a: &RecordArgs) -> Result<u8, Failure> {
    if a.metric == Recorded::Instructions && meta::executable("valgrind").is_none() {
        return Err(Failure(
            "--metric instructions runs the program under Callgrind: valgrind is not installed"
                .into(),
        ));
    }
    let dir = &a.output;
    let runs_dir = make_bundle(dir)?;
    let seed = a
        .seed
        .unwrap_or_else(|| meta::now_unix_ns() ^ (u64::from(std::process::id()) << 32));
    let words = |v: &[OsString]| -> Vec<String> {
        v.iter().map(|w| w.to_string_lossy().into_owned()).collect()
    };
    let mut manifest = Manifest {
        metric: a.metric,
        seed,
        command: words(&a.command),
        baseline: a.baseline.as_deref().map(words),
        runs: Vec::new(),
    };
    let plan = order(a.runs, a.baseline.is_some(), seed);
    let facts = side_facts(&manifest);
    let cpu_model = meta::cpu_model();
    let stop = Stop::catch();
    warm_up(a, dir, &stop)?;
    let bar = Bar::new(plan.len());
    let json_dir = absolute(&runs_dir);
    for (order, &(side, index)) in plan.iter().enumerate() {
        if stop.signal().is_some() {
            break;
        }
        bar.draw(order);
        let name = Run::name_of(side, index);
        let callgrind = (a.metric == Recorded::Instructions)
            .then(|| PathBuf::from("runs").join(format!("{name}.callgrind")));
        let mut c = command(argv(a, side), a, callgrind.as_ref().map(|c| dir.join(c)));
        let json = json_dir.join(format!("{name}.{{rank}}.json"));
        c.env("PERFGRAPH_JSON", &json);
        if !a.show_output {
            let log = runs_dir.join(format!("{name}.stderr"));
            let file = std::fs::File::create(&log)
                .map_err(|e| Failure(format!("{}: {e}", log.display())))?;
            c.stdout(Stdio::null()).stderr(file);
        }
        let load_average = meta::load_average();
        let start_unix_ns = meta::now_unix_ns();
        let started = Instant::now();
        let status = spawn_wait(&mut c, argv(a, side), dir)?;
        if stop.signal().is_some() {
            forget(&runs_dir, &name);
            break;
        }
        let wall_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let f = &facts[usize::from(side == Side::Base)];
        manifest.runs.push(Run {
            side,
            index,
            order: order as u32 + 1,
            files: files(&runs_dir, &name),
            callgrind,
            exit: shell_status(status),
            start_unix_ns,
            wall_ns,
            load_average,
            git_commit: f.git.as_ref().map(|g| g.0.clone()),
            git_dirty: f.git.as_ref().is_some_and(|g| g.1),
            rustc: f.rustc.clone(),
            cpu_model: cpu_model.clone(),
        });
        write_manifest(dir, &manifest)?;
    }
    bar.done();
    let Some(sig) = stop.signal() else {
        return summary(dir, &manifest);
    };
    drop(stop);
    eprintln!(
        "perfgraph: {}: recording ended after {} of {} runs; the run under way was left out",
        stop::name(sig),
        manifest.runs.len(),
        plan.len()
    );
    if manifest.runs.is_empty() {
        // Nothing was recorded: the bundle, made empty by this command, goes (only if still empty).
        let _ = std::fs::remove_dir(&runs_dir);
        let _ = std::fs::remove_dir(dir);
    } else {
        summary(dir, &manifest)?;
    }
    stop::end(sig);
    Ok(128 + sig as u8)
}

/// Removes what the run `name` left in `runs_dir` (its reports, its standard error, Callgrind's output):
/// it was cut short, and the manifest does not list it.
fn forget(runs_dir: &Path, name: &str) {
    let prefix = format!("{name}.");
    for e in std::fs::read_dir(runs_dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Makes the bundle's directory, which must not exist, and its `runs` directory; the latter's path.
fn make_bundle(dir: &Path) -> Result<PathBuf, Failure> {
    std::fs::create_dir(dir).map_err(|e| {
        Failure(match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{}: exists: a bundle is made new (choose another name with -o)",
                dir.display()
            ),
            _ => format!("{}: {e}", dir.display()),
        })
    })?;
    let runs_dir = dir.join("runs");
    std::fs::create_dir(&runs_dir).map_err(|e| Failure(format!("{}: {e}", runs_dir.display())))?;
    Ok(runs_dir)
}

/// What the manifest says of the command's program and of the baseline's (nothing without one), in
/// that order.
fn side_facts(manifest: &Manifest) -> [Facts; 2] {
    let about = |program: &str| Facts {
        git: meta::git_commit(program),
        rustc: meta::rustc(program),
    };
    [
        about(&manifest.command[0]),
        manifest
            .baseline
            .as_ref()
            .map_or_else(Facts::default, |b| about(&b[0])),
    ]
}

/// The arguments of `side`'s command: the command's, or the baseline's.
fn argv(a: &RecordArgs, side: Side) -> &[OsString] {
    match side {
        Side::Head => &a.command[..],
        Side::Base => a.baseline.as_deref().expect("a baseline"),
    }
}

/// Runs each command `--warmup` times, its output going nowhere, the baseline first in each round, until
/// a signal asks the runs to end.
fn warm_up(a: &RecordArgs, dir: &Path, stop: &Stop) -> Result<(), Failure> {
    let sides: &[Side] = if a.baseline.is_some() {
        &[Side::Base, Side::Head]
    } else {
        &[Side::Head]
    };
    for _ in 0..a.warmup {
        for &side in sides {
            if stop.signal().is_some() {
                return Ok(());
            }
            let mut c = command(argv(a, side), a, None);
            c.stdout(Stdio::null()).stderr(Stdio::null());
            spawn_wait(&mut c, argv(a, side), dir)?;
        }
    }
    Ok(())
}

/// What the manifest says of a side's program, found once.
#[derive(Default)]
struct Facts {
    git: Option<(String, bool)>,
    rustc: Option<String>,
}

/// The runs in the order they run: with a baseline, each round runs the two in a random order (as
/// Abedi and Brecht's randomised multiple interleaved trials), so what drifts on the machine falls on both.
fn order(runs: u32, baseline: bool, seed: u64) -> Vec<(Side, u32)> {
    let mut rng = Rng::new(seed);
    let mut plan = Vec::new();
    for i in 1..=runs {
        if !baseline {
            plan.push((Side::Head, i));
        } else if rng.below(2) == 0 {
            plan.extend([(Side::Base, i), (Side::Head, i)]);
        } else {
            plan.extend([(Side::Head, i), (Side::Base, i)]);
        }
    }
    plan
}

/// The command for `argv`, with perfgraph's other outputs off unless the environment asks for them.
fn command(argv: &[OsString], a: &RecordArgs, callgrind: Option<PathBuf>) -> Command {
    let mut c = match callgrind {
        Some(out) => {
            let mut c = Command::new("valgrind");
            c.arg("--tool=callgrind")
                .arg("-q")
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg("--")
                .args(argv);
            c
        }
        None => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    c.stdin(Stdio::null());
    if std::env::var_os("PERFGRAPH_LIVE").is_none() {
        c.env("PERFGRAPH_LIVE", "off");
    }
    c.env_remove("PERFGRAPH_JSON");
    if a.metric == Recorded::Cpu {
        c.env("PERFGRAPH_CPU", "all");
    }
    c
}

fn spawn_wait(c: &mut Command, argv: &[OsString], dir: &Path) -> Result<ExitStatus, Failure> {
    let mut child = c.spawn().map_err(|e| {
        Failure(format!(
            "{}: cannot run: {e} (the bundle so far is in {})",
            argv[0].to_string_lossy(),
            dir.display()
        ))
    })?;
    child
        .wait()
        .map_err(|e| Failure(format!("{}: {e}", argv[0].to_string_lossy())))
}

/// The status as a shell gives it: the exit code, or 128 + the signal that ended it.
pub(crate) fn shell_status(s: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// The reports run `name` wrote (`<name>.<rank>.json`), by rank.
fn files(runs_dir: &Path, name: &str) -> Vec<RunFile> {
    let mut out: Vec<RunFile> = std::fs::read_dir(runs_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let rank = file
                .strip_prefix(name)?
                .strip_prefix('.')?
                .strip_suffix(".json")?
                .parse()
                .ok()?;
            Some(RunFile {
                path: PathBuf::from("runs").join(&file),
                rank,
            })
        })
        .collect();
    out.sort_by_key(|f| f.rank);
    out
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Writes the manifest through a temporary name, renamed over the last one: a reader (or a record cut
/// short) sees a whole manifest.
fn write_manifest(dir: &Path, m: &Manifest) -> Result<(), Failure> {
    let mut out = load::Replacing::new(&dir.join(MANIFEST));
    let fail = |e: std::io::Error| Failure(format!("{}: {e}", dir.join(MANIFEST).display()));
    out.write_all(m.to_json().as_bytes()).map_err(fail)?;
    out.commit().map_err(fail)
}

/// The closing lines, and the exit code: the runs' status, or where they disagree the first not 0.
fn summary(dir: &Path, m: &Manifest) -> Result<u8, Failure> {
    let without = m.runs.iter().filter(|r| r.files.is_empty()).count();
    let sides = if m.baseline.is_some() {
        format!(
            "{} of the baseline and {} of the command, interleaved",
            m.runs.iter().filter(|r| r.side == Side::Base).count(),
            m.runs.iter().filter(|r| r.side == Side::Head).count()
        )
    } else {
        format!("{} of the command", m.runs.len())
    };
    eprintln!(
        "perfgraph: {} runs ({sides}) in {}; compare with `perfgraph diff {}{}`",
        m.runs.len(),
        dir.display(),
        dir.display(),
        if m.baseline.is_some() { "" } else { " OTHER" }
    );
    if without > 0 {
        eprintln!(
            "perfgraph: {without} of the runs wrote no report (not a program with perfgraph, or it \
             failed before its exit); their standard error is in {}",
            dir.join("runs").display()
        );
    }
    let first = m.runs.first().map_or(0, |r| r.exit);
    if m.runs.iter().all(|r| r.exit == first) {
        return Ok(u8::try_from(first).unwrap_or(1));
    }
    let mut counts: Vec<(i32, usize)> = Vec::new();
    for r in &m.runs {
        match counts.iter_mut().find(|c| c.0 == r.exit) {
            Some(c) => c.1 += 1,
            None => counts.push((r.exit, 1)),
        }
    }
    let (code, name) = m
        .runs
        .iter()
        .find(|r| r.exit != 0)
        .map(|r| (r.exit, Run::name_of(r.side, r.index)))
        .expect("they differ");
    let said: Vec<String> = counts
        .iter()
        .map(|(s, n)| format!("{n} exited {s}"))
        .collect();
    eprintln!(
        "perfgraph: the runs' exit statuses disagree ({}); exiting with {code}, the first not 0 \
         ({name})",
        said.join(", ")
    );
    Ok(u8::try_from(code).unwrap_or(1))
}

/// A progress bar on standard error when it is a terminal; nothing otherwise.
struct Bar {
    total: usize,
    on: bool,
}

impl Bar {
    fn new(total: usize) -> Bar {
        Bar {
            total,
            on: std::io::stderr().is_terminal(),
        }
    }

    fn draw(&self, done: usize) {
        if !self.on {
            return;
        }
        const WIDTH: usize = 30;
        let filled = WIDTH * done / self.total.max(1);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rperfgraph record: [{}{}] {done}/{} runs\x1b[K",
            "#".repeat(filled),
            ".".repeat(WIDTH - filled),
            self.total
        );
        let _ = err.flush();
    }

    fn done(&self) {
        if self.on {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
