//! Do no harm, tested by difference: every program shape of `tests/harm` is built twice, with perfgraph and
//! compiled out (`--no-default-features`), and run in every setting a user runs programs in: a terminal
//! (a pseudo-terminal of the test's, its final screen rendered by a terminal emulator, `vt100`),
//! `2>&1 | cat`, `2>&1 | head -n 3`, `> file 2>&1`, `2> file`, and a shell running `prog; echo after=$?` in
//! a terminal. The build with perfgraph runs [`runs()`] times in each (with live print showing lines, so the
//! capture of the program's output is running); each run must match the compiled-out build's:
//!
//! * the same exit status, death by a signal included;
//! * the same bytes once perfgraph's own lines are removed (its sections' messages hold `pgmark`, which
//!   the program never prints): stdout and stderr together where they share a place, each on its own where
//!   they do not; perfgraph may only have started its line on a new line after a partial line the program
//!   left open in a pipe or file (where nothing can be redrawn);
//! * on a terminal, the same final screen once perfgraph's rows are removed, so also the same order: a
//!   shell's `after=` line after everything the program wrote;
//! * nothing left behind: no process still running the program, no file beside the output file, no
//!   control socket (each run has a runtime directory of its own, `XDG_RUNTIME_DIR`).
//!
//! `DO_NO_HARM_RUNS=N` sets the runs per shape and setting (default 3; 20 with `TESTS_FULL=1`, which
//! `.ci/run` sets); `cargo test --test do_no_harm -- --ignored` runs the long form (200 runs). The `lines`
//! shape prints 100,000 lines with `TESTS_FULL=1` and 20,000 by default (still some 40 times a pipe's
//! buffer): rendering a terminal's 100,000 lines and matching them took 10 of this test's 27 s.

mod common;
#[path = "do_no_harm/comparing.rs"]
mod comparing;
#[path = "do_no_harm/shapes.rs"]
mod shapes;

use comparing::*;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Only catches a hang: every run ends in well under a second on an idle machine.
const HANG: Duration = Duration::from_secs(60);
/// The terminal's size: wide enough for a live line with its stats (110 columns), which would otherwise
/// wrap onto a row of its own.
const ROWS: u16 = 40;
const COLS: u16 = 132;
/// In the name of every section of the shapes: perfgraph's lines hold it, the program's never do.
const MARK: &str = "pgmark";

/// `DO_NO_HARM_RUNS` if set; else 20 with `TESTS_FULL=1` (as `.ci/run` sets), 3 by default: every shape in
/// every setting still runs, a few times.
fn runs() -> usize {
    std::env::var("DO_NO_HARM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if common::full() { 20 } else { 3 })
}

// ---- the two builds ---------------------------------------------------------------------------------------

struct Builds {
    with: PathBuf,
    without: PathBuf,
    /// As a binary that gets perfgraph only through a library's `default-features = false,
    /// features = ["enabled"]`.
    library: PathBuf,
}

/// Builds `tests/harm` with and without perfgraph (once per test binary), into `target/harm`.
fn builds() -> &'static Builds {
    static BUILDS: OnceLock<Builds> = OnceLock::new();
    BUILDS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let target = dir.join("../target/harm");
        let build = |features: &[&str], name: &str| {
            let out = common::child_command(env!("CARGO"))
                .args(["build", "--quiet", "--manifest-path"])
                .arg(dir.join("tests/harm/Cargo.toml"))
                .args(features)
                .env("CARGO_TARGET_DIR", &target)
                .env_remove("RUSTFLAGS")
                .output()
                .expect("cargo runs");
            assert!(
                out.status.success(),
                "building tests/harm {features:?} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Both builds have one name: keep each under its own.
            let built = target.join("debug/perfgraph-harm-shapes");
            let kept = target.join(name);
            std::fs::copy(&built, &kept).unwrap();
            kept
        };
        let with = build(&[], "shapes-with-perfgraph");
        let without = build(&["--no-default-features"], "shapes-compiled-out");
        let library = build(
            &["--no-default-features", "--features", "library"],
            "shapes-library-only",
        );
        Builds {
            with,
            without,
            library,
        }
    })
}

// ---- running a shape in a setting -------------------------------------------------------------------------

/// Where the program's fds 1 and 2 lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    /// Both on a terminal.
    Terminal,
    /// `2>&1 | cat`.
    Pipe,
    /// `2>&1 | head -n 3`.
    Head,
    /// `> file 2>&1`.
    File,
    /// `2> file`, stdout to a pipe.
    ErrFile,
    /// `sh -c 'prog; echo after=$?'` on a terminal.
    Shell,
}

const SETTINGS: [Setting; 6] = [
    Setting::Terminal,
    Setting::Pipe,
    Setting::Head,
    Setting::File,
    Setting::ErrFile,
    Setting::Shell,
];

/// The settings but `| head -n 3`, for shapes that print only a few lines: there perfgraph's own lines,
/// which `2>&1` sends into the same pipe, take some of `head`'s three, so `head` leaves earlier and the
/// program's next write may fail where the compiled-out build's still went into the pipe (as it may fail
/// or not for the compiled-out build itself, by how fast `head` is). A program that writes more than
/// `head` takes fails either way: the `lines` and `mixed` shapes run there.
const SHORT_SETTINGS: [Setting; 5] = [
    Setting::Terminal,
    Setting::Pipe,
    Setting::File,
    Setting::ErrFile,
    Setting::Shell,
];

/// What a run left: its exit status, and what reached each destination.
#[derive(Debug)]
struct Outcome {
    status: ExitStatus,
    /// The pipe's, the file's or `head`'s bytes; for a terminal, the final screen's rows.
    out: Vec<u8>,
    /// `2> file`: the file's bytes.
    err: Vec<u8>,
    /// A terminal's final screen, row by row (trailing spaces trimmed).
    screen: Vec<String>,
    /// A terminal's bytes as read, for a failure's message.
    raw: Vec<u8>,
    /// Whether the run made its control socket's directory (`PERFGRAPH_LISTEN`), in a runtime directory
    /// of its own (`XDG_RUNTIME_DIR`), and what it left there (nothing, but after an `exec`).
    listened: bool,
    sockets_left: Vec<String>,
}

fn command(program: &Path, shape: &str) -> Command {
    let mut cmd = common::child_command(program);
    cmd.arg(shape)
        .env("PERFGRAPH_TIME_LIMIT", "0.02")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0");
    cmd
}

/// stdin: a pipe holding one answer (the `prompt` shape reads it), then its end.
fn stdin_answer() -> std::io::PipeReader {
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer.write_all(b"bob\n").unwrap();
    reader
}

fn wait(child: &mut std::process::Child, start: Instant) -> ExitStatus {
    common::wait_or_kill(child, start, HANG)
}

fn run(program: &Path, shape: &str, setting: Setting, env: &[(&str, String)]) -> Outcome {
    let start = Instant::now();
    let mut cmd = match setting {
        Setting::Shell => {
            let mut cmd = common::child_command("sh");
            cmd.args(["-c", "\"$0\" \"$1\"; echo \"after=$?\""])
                .arg(program)
                .arg(shape)
                .env("PERFGRAPH_TIME_LIMIT", "0.02")
                .env("NO_COLOR", "1")
                .env("RUST_BACKTRACE", "0");
            cmd
        }
        _ => command(program, shape),
    };
    cmd.stdin(stdin_answer());
    cmd.env(
        "HARM_LINES",
        if common::full() { "100000" } else { "20000" },
    );
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let runtime = temp_dir(&format!("{shape}-runtime"));
    cmd.env("XDG_RUNTIME_DIR", &runtime);
    let mut outcome = Outcome {
        status: ExitStatus::from_raw(0),
        out: Vec::new(),
        err: Vec::new(),
        screen: Vec::new(),
        raw: Vec::new(),
        listened: false,
        sockets_left: Vec::new(),
    };
    match setting {
        Setting::Terminal | Setting::Shell => {
            let (master, slave) = common::open_pty();
            common::set_size(&master, COLS, ROWS);
            // Raw: a pseudo-terminal's output processing costs the 100,000-line shape seconds a run;
            // `render` turns `\n` into `\r\n` as that processing (`ONLCR`) would.
            make_raw(&slave);
            cmd.stdout(slave.try_clone().unwrap()).stderr(slave);
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            let reading = std::thread::spawn(move || common::read_all(master));
            outcome.status = wait(&mut child, start);
            let bytes = reading.join().unwrap();
            outcome.screen = render(&bytes);
            outcome.raw = bytes;
        }
        Setting::Pipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            let reading = std::thread::spawn(move || common::read_all(reader));
            outcome.status = wait(&mut child, start);
            outcome.out = reading.join().unwrap();
        }
        Setting::Head => {
            let (reader, writer) = std::io::pipe().unwrap();
            cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            let mut head = Command::new("head")
                .args(["-n", "3"])
                .stdin(reader)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let head_out = head.stdout.take().unwrap();
            let reading = std::thread::spawn(move || common::read_all(head_out));
            outcome.status = wait(&mut child, start);
            wait(&mut head, start);
            outcome.out = reading.join().unwrap();
        }
        Setting::File | Setting::ErrFile => {
            let dir = temp_dir(shape);
            let path = dir.join("output");
            let file = std::fs::File::create(&path).unwrap();
            let reading = if setting == Setting::File {
                cmd.stdout(file.try_clone().unwrap()).stderr(file);
                None
            } else {
                let (reader, writer) = std::io::pipe().unwrap();
                cmd.stdout(writer).stderr(file);
                Some(std::thread::spawn(move || common::read_all(reader)))
            };
            let mut child = cmd.spawn().unwrap();
            drop(cmd);
            outcome.status = wait(&mut child, start);
            let piped = reading.map(|r| r.join().unwrap());
            let written = std::fs::read(&path).unwrap();
            match piped {
                None => outcome.out = written,
                Some(out) => (outcome.out, outcome.err) = (out, written),
            }
            let left: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, ["output"], "files left beside the output");
        }
    }
    let sockets = runtime.join("perfgraph");
    outcome.listened = sockets.exists();
    outcome.sockets_left = std::fs::read_dir(&sockets)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    outcome
}

/// Turns off the terminal's input and output processing (`cfmakeraw`).
fn make_raw(slave: &impl std::os::fd::AsRawFd) {
    let fd = slave.as_raw_fd();
    // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite; cfmakeraw and tcsetattr
    // take a valid termios and the open descriptor.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(fd, &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(fd, libc::TCSANOW, &t), 0);
    }
}

/// A fresh directory for one run, removed when dropped.
fn temp_dir(shape: &str) -> common::Scratch {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    common::scratch(&format!("harm-{shape}-{n}"))
}

/// The final screen of a terminal that was sent `bytes` (`\n` taken as `\r\n`, as a terminal's output
/// processing sends it), row by row, trailing blanks and blank rows at the bottom trimmed; a thread's id in
/// a panic message (`thread 'main' (12345) panicked`) read as `(N)`.
fn render(bytes: &[u8]) -> Vec<String> {
    let rows = std::num::NonZeroU16::new(ROWS).unwrap();
    let cols = std::num::NonZeroU16::new(COLS).unwrap();
    let mut parser = vt100::Parser::new(rows, cols, 0);
    let mut translated = Vec::with_capacity(bytes.len() + bytes.len() / 16);
    for &b in bytes {
        if b == b'\n' {
            translated.push(b'\r');
        }
        translated.push(b);
    }
    parser.process(&translated);
    let mut screen: Vec<String> = parser
        .screen()
        .rows(0, COLS)
        .map(|r| normalise(r.trim_end()))
        .collect();
    while screen.last().is_some_and(String::is_empty) {
        screen.pop();
    }
    screen
}

/// A thread's id in a panic message read as `(N)`: the one thing that differs between any two runs.
fn normalise(line: &str) -> String {
    match (line.find("' ("), line.find(") panicked")) {
        (Some(a), Some(b)) if a < b => format!("{}' (N{}", &line[..a], &line[b..]),
        _ => line.to_owned(),
    }
}

fn normalise_bytes(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes)
        .split_inclusive('\n')
        .map(normalise)
        .collect::<String>()
        .into_bytes()
}

/// Processes still running `program` with `shape` (the program itself, or a forwarder it forked).
fn still_running(program: &Path, shape: &str) -> Vec<u32> {
    let want = {
        let mut c = program.as_os_str().as_encoded_bytes().to_vec();
        c.push(0);
        c.extend_from_slice(shape.as_bytes());
        c.push(0);
        c
    };
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && cmdline == want
        {
            left.push(pid);
        }
    }
    left
}

/// Runs `shape` in every setting: the compiled-out build once (beside our first runs), ours [`runs()`] times
/// (four at a time), and compares each run. Calls `also` on each of our runs for the shape's own checks.
/// Returns our outcomes.
fn differential(shape: &str, also: fn(Setting, &Outcome) -> Result<(), String>) {
    differential_in(shape, &SETTINGS, also);
}

/// [`differential`] in `settings` only.
fn differential_in(
    shape: &str,
    settings: &[Setting],
    also: fn(Setting, &Outcome) -> Result<(), String>,
) {
    differential_with(shape, settings, &[], also);
}

/// [`differential_in`], our runs with the settings `env` adds.
fn differential_with(
    shape: &str,
    settings: &[Setting],
    env: &[(&str, String)],
    also: fn(Setting, &Outcome) -> Result<(), String>,
) {
    let b = builds();
    let n = runs();
    let mut failures = Vec::new();
    for &setting in settings {
        let mut theirs = None;
        let mut done = 0;
        while done < n {
            let batch = (n - done).min(4);
            let outcomes: Vec<Outcome> = std::thread::scope(|s| {
                // The compiled-out run beside our first batch (four processes at a time, as a batch).
                let compiled_out = theirs
                    .is_none()
                    .then(|| s.spawn(|| run(&b.without, shape, setting, &[])));
                let handles: Vec<_> = (0..batch)
                    .map(|_| s.spawn(|| run(&b.with, shape, setting, env)))
                    .collect();
                if let Some(h) = compiled_out {
                    theirs = Some(h.join().unwrap());
                }
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let theirs = theirs.as_ref().unwrap();
            for (k, ours) in outcomes.iter().enumerate() {
                let left = sockets_left(shape, ours);
                if let Err(e) = compare(setting, ours, theirs)
                    .and(left)
                    .and_then(|()| also(setting, ours))
                {
                    failures.push(format!("{shape} {setting:?} run {}: {e}", done + k + 1));
                }
            }
            done += batch;
        }
    }
    // Nothing left running: the forwarder child is gone once the program's output is out.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = still_running(&b.with, shape);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = still_running(&b.with, shape);
    }
    if !left.is_empty() {
        failures.push(format!("{shape}: processes left running: {left:?}"));
    }
    println!(
        "{shape}: {} settings x {n} runs, {} differences",
        settings.len(),
        failures.len()
    );
    let shown: Vec<&String> = failures.iter().take(3).collect();
    assert!(
        failures.is_empty(),
        "{} of {} runs differ; the first:\n{}",
        failures.len(),
        settings.len() * n,
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// The control socket is removed at every exit perfgraph sees. A process that dies without one (a signal
/// perfgraph does not handle: SIGPIPE restored to its default, SIGKILL) or that `exec`s another program
/// leaves it, stale, for the next start or `perfgraph ps` to remove (tests/attach.rs in perfgraph-cli,
/// docs/user-guide.md).
fn sockets_left(shape: &str, ours: &Outcome) -> Result<(), String> {
    let handled = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    let unseen_death = ours.status.signal().is_some_and(|s| !handled.contains(&s));
    if ours.sockets_left.is_empty() || shape == "exec" || unseen_death {
        Ok(())
    } else {
        Err(format!("sockets left behind: {:?}", ours.sockets_left))
    }
}

fn nothing_more(_: Setting, _: &Outcome) -> Result<(), String> {
    Ok(())
}
