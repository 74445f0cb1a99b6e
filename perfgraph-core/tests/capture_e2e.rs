//! Capture of the program's own output (`PERFGRAPH_CAPTURE`) end to end: this test binary runs itself as a
//! child (`CAPTURE_CHILD=<scenario>`, `PERFGRAPH_TIME_LIMIT=0.1`) whose stdout and stderr lead to one place,
//! as in a terminal or with `2>&1 | cat`: a pseudo-terminal the test opens, or one pipe for both. The
//! program prints with `println!`, `eprintln!`, `print!` without a newline, a panic, `main` returning `Err`,
//! C's `printf`, while live lines print; then every byte the program wrote must arrive, in order, and no line
//! may mix program text with live text. A child that kills itself with SIGKILL (or aborts) right after
//! writing must lose nothing either.
//!
//! Its own `main` (`harness = false`): the child's work runs on the real main thread, and `main` can return
//! `Err` as a program's does. Time bounds are generous: they catch hangs, not slowness.

#[path = "capture_e2e/cases.rs"]
mod cases;
mod common;

use cases::*;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use perfgraph_core::timed;

/// A child that runs longer than this is hung.
const HANG: Duration = Duration::from_secs(30);

// ---- the child's scenarios (time limit 0.1 s) --------------------------------------------------------------

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

#[timed(live = "Working")]
fn working_println(i: u32) {
    sleep_ms(250);
    println!("result {} of 10", i * 7);
}

#[timed(live = "Working")]
fn working_eprintln(i: u32) {
    sleep_ms(250);
    eprintln!("result {} of 10", i * 7);
}

#[timed(live = "Chatting", dots)]
fn chatting() {
    // Another thread prints while this section's dots come every 0.1 s.
    std::thread::spawn(|| {
        for i in 0..30 {
            if i % 2 == 0 {
                println!("chat line {i} on stdout");
            } else {
                eprintln!("chat line {i} on stderr");
            }
            sleep_ms(23);
        }
    })
    .join()
    .unwrap();
}

/// A first live line, so the capture runs (it starts with the first one): what the program wrote before
/// it went straight through, a partial line included, as without perfgraph.
#[timed(live = "Warming up")]
fn warm_up() {
    sleep_ms(150);
}

#[timed(live = "Working")]
fn working_partial() {
    print!("partial");
    std::io::stdout().flush().unwrap();
    sleep_ms(300);
    println!(" rest");
}

/// Lines written in two parts a few milliseconds apart (as `eprint!` of a formatted line, which std writes
/// piecewise), while dots come every 0.1 s.
#[timed(live = "Two parts", dots)]
fn two_part_lines() {
    let mut out = std::io::stdout().lock();
    for i in 0..TWO_PART_LINES {
        write!(out, "part one {i}, ").unwrap();
        out.flush().unwrap();
        sleep_ms(4);
        writeln!(out, "part two {i}").unwrap();
        out.flush().unwrap();
    }
}

/// Lines [`two_part_lines`] writes.
const TWO_PART_LINES: usize = 320;

/// A dots section the test stops (as Ctrl-Z does) and continues (as `fg` does) while it runs.
#[timed(live = "Stoppable", dots)]
fn stoppable() {
    println!("ready to stop");
    sleep_ms(1200);
}

/// [`stoppable`], longer, in a program that blocks SIGCONT in its only thread: the signal's handler never
/// runs while it does.
#[timed(live = "Stoppable", dots)]
fn stoppable_blocking_sigcont() {
    // SAFETY: an all-zero sigset_t is valid storage for sigemptyset; the mask calls have no other
    // preconditions.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCONT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    println!("ready to stop");
    sleep_ms(3000);
}

#[timed(live = "Working")]
fn working_then_panicking() {
    println!("before the panic");
    sleep_ms(250);
    panic!("deliberate failure");
}

#[timed(live = "Background", dots)]
fn background() {
    sleep_ms(700);
}

#[timed(live = "Working")]
fn working_printf() {
    // SAFETY: NUL-terminated format strings whose conversions match the arguments; fflush(NULL) flushes
    // every C stream.
    unsafe {
        libc::printf(c"c says %d\n".as_ptr(), 42);
        libc::printf(c"c partial".as_ptr());
        libc::fflush(std::ptr::null_mut());
    }
    sleep_ms(250);
    // Not flushed: to a pipe C's stdout is fully buffered, so this goes out when C flushes at exit, after
    // perfgraph's exit handler.
    // SAFETY: as above.
    unsafe { libc::printf(c" and more\n".as_ptr()) };
}

/// Lines the killed child writes.
const KILL_LINES: usize = 20_000;

#[timed(live = "Working", dots)]
fn working_then_dying(how: &str) {
    sleep_ms(150);
    let mut out = std::io::stdout().lock();
    for i in 0..KILL_LINES {
        writeln!(out, "line {i}").unwrap();
    }
    write!(out, "tail without a newline").unwrap();
    out.flush().unwrap();
    if how == "abort" {
        std::process::abort();
    }
    // SAFETY: kill and getpid have no memory-safety preconditions.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    sleep_ms(10_000);
}

/// Where fds 1 and 2 lead and whether they are terminals, as the child sees them once live print has
/// shown a line (the capture starts with the first one).
#[timed]
fn describe() {
    sleep_ms(200);
    let link = |fd: i32| {
        std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    // SAFETY: isatty has no preconditions.
    let tty = |fd: i32| unsafe { libc::isatty(fd) };
    // SAFETY: an all-zero winsize is valid; TIOCGWINSZ writes one into it.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) };
    println!(
        "fd1 {} fd2 {} tty {} {} size {}x{}",
        link(1),
        link(2),
        tty(1),
        tty(2),
        ws.ws_col,
        ws.ws_row
    );
}

/// Waits for the window size of fd 1 to change from what it is (the test resizes the terminal and sends
/// SIGWINCH), then prints it.
fn wait_for_resize() {
    let size = || {
        // SAFETY: an all-zero winsize is valid; TIOCGWINSZ writes one into it.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) };
        (ws.ws_col, ws.ws_row)
    };
    let before = size();
    println!("ready {}x{}", before.0, before.1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while size() == before && Instant::now() < deadline {
        sleep_ms(5);
    }
    let after = size();
    println!("resized {}x{}", after.0, after.1);
}

fn child(scenario: &str) -> Result<(), String> {
    match scenario {
        "println" => (1..=4).for_each(working_println),
        "eprintln" => (1..=4).for_each(working_eprintln),
        "chatter" => chatting(),
        "partial" => {
            warm_up();
            working_partial()
        }
        "panic" => working_then_panicking(),
        "err" => {
            let worker = common::spawn_named("worker", background);
            sleep_ms(300);
            // Returned while the worker's dots line is open; std prints `Error: ...` after `main`.
            std::mem::forget(worker);
            return Err("failed on purpose".into());
        }
        "printf" => {
            warm_up();
            working_printf()
        }
        "sigkill" => working_then_dying("kill"),
        "abort" => working_then_dying("abort"),
        "describe" => describe(),
        "stop" => stoppable(),
        "stop-blocked" => stoppable_blocking_sigcont(),
        "two-part" => {
            warm_up();
            two_part_lines()
        }
        "resize" => {
            describe();
            wait_for_resize();
        }
        _ => panic!("unknown scenario {scenario}"),
    }
    println!("child done");
    Ok(())
}

// ---- running a child --------------------------------------------------------------------------------------

fn command(scenario: &str) -> Command {
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.env("CAPTURE_CHILD", scenario)
        .env("PERFGRAPH_TIME_LIMIT", "0.1")
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0");
    cmd
}

/// Where the child's fds 1 and 2 lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// One pipe for both (`2>&1 | cat`).
    Pipe,
    /// A pseudo-terminal of the test's own, both on its slave side.
    Terminal,
}

/// What a child did: its status, and everything it wrote (`\r\n` read as `\n`: a terminal's processing).
struct Run {
    status: ExitStatus,
    out: String,
}

/// Spawns `cmd` with fds 1 and 2 on `place`; returns the child and what reads its output.
fn spawn(mut cmd: Command, place: Place) -> (Child, Box<dyn Read + Send>) {
    match place {
        Place::Pipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
            let child = cmd.spawn().unwrap();
            // The Command holds our copies of the write end: drop it so the reader sees the end.
            drop(cmd);
            (child, Box::new(reader))
        }
        Place::Terminal => {
            let (master, slave) = common::open_pty();
            cmd.stdout(slave.try_clone().unwrap()).stderr(slave);
            let child = cmd.spawn().unwrap();
            drop(cmd);
            (child, Box::new(master))
        }
    }
}

fn run(cmd: Command, place: Place) -> Run {
    let start = Instant::now();
    let (mut child, reader) = spawn(cmd, place);
    let reading = std::thread::spawn(move || common::read_all(reader));
    let status = common::wait_or_kill(&mut child, start, HANG);
    let bytes = reading.join().unwrap();
    assert!(start.elapsed() < HANG, "output still open after {HANG:?}");
    let out = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    Run {
        status,
        out: match place {
            Place::Terminal => cleared(&out),
            Place::Pipe => out,
        },
    }
}

/// What a terminal shows of `out` where live print cleared the program's partial line (`\r` `ESC [ K`) to
/// print above it and draw it again: the cleared text is gone.
fn cleared(out: &str) -> String {
    let mut shown = String::new();
    let mut rest = out;
    while let Some(at) = rest.find("\r\x1b[K") {
        shown.push_str(&rest[..at]);
        shown.truncate(shown.rfind('\n').map_or(0, |i| i + 1));
        rest = &rest[at + "\r\x1b[K".len()..];
    }
    shown.push_str(rest);
    shown
}

// ---- checking the output ----------------------------------------------------------------------------------

/// Whether `line` is one of live print's lines about `messages` (any prefix and indent, `Still` /
/// `Currently` / `Finished`, dots, stats).
fn is_live(line: &str, messages: &[&str]) -> bool {
    let body = match line.split_once(": ") {
        Some((prefix, rest)) if !prefix.contains(' ') => rest,
        _ => line,
    };
    let body = body.trim_start();
    let body = ["Still ", "Currently ", "Finished "]
        .iter()
        .find_map(|w| body.strip_prefix(w))
        .unwrap_or(body);
    messages.iter().any(|m| {
        body.strip_prefix(m).is_some_and(|rest| {
            let rest = rest.trim_start_matches('.');
            let rest = rest.strip_prefix(" (panicked)").unwrap_or(rest);
            rest.is_empty()
                || (rest.starts_with(' ')
                    && rest.trim_start().starts_with('[')
                    && rest.ends_with(" MB]"))
        })
    })
}

/// The output without live print's lines: what must be the program's bytes.
fn program_text(out: &str, messages: &[&str]) -> String {
    out.split_inclusive('\n')
        .filter(|line| !is_live(line.trim_end_matches('\n'), messages))
        .collect()
}

/// Every byte of `expected` arrived in order, and no line mixes program text with live text: without the
/// live lines the output is `expected` exactly, except for newlines perfgraph may add after a partial line
/// the program left waiting (only at `pauses`: the program text before which a newline may be added).
fn check(run: &Run, messages: &[&str], expected: &str, pauses: &[&str]) {
    let got = program_text(&run.out, messages);
    let mut allowed = vec![expected.to_owned()];
    for pause in pauses {
        let with: Vec<String> = allowed
            .iter()
            .map(|a| a.replacen(pause, &format!("\n{pause}"), 1))
            .collect();
        allowed.extend(with);
    }
    assert!(
        allowed.contains(&got),
        "program text differs\n--- expected\n{expected}\n--- got (live lines removed)\n{got}\n--- output\n{}",
        run.out
    );
    // Live print did print (else the test proves nothing).
    assert!(
        run.out.lines().any(|l| is_live(l, messages)),
        "no live line:\n{}",
        run.out
    );
}

fn lines_of(i: impl IntoIterator<Item = String>) -> String {
    i.into_iter().map(|l| l + "\n").collect()
}

// ---- a minimal harness ------------------------------------------------------------------------------------

/// A test that runs on either place.
type Case = (&'static str, fn(Place));

fn main() -> Result<(), String> {
    if let Ok(scenario) = std::env::var("CAPTURE_CHILD") {
        return child(&scenario);
    }
    let mut tests: Vec<common::Test> = Vec::new();
    for (place, name) in [(Place::Pipe, "pipe"), (Place::Terminal, "terminal")] {
        let cases: [Case; 8] = [
            (
                "partial_lines_get_their_allowance_each",
                partial_lines_get_their_allowance_each,
            ),
            ("println_lines_stay_whole", println_lines_stay_whole),
            ("eprintln_lines_stay_whole", eprintln_lines_stay_whole),
            (
                "chatter_between_dots_stays_whole",
                chatter_between_dots_stays_whole,
            ),
            (
                "a_partial_line_goes_out_and_live_print_starts_a_new_line",
                a_partial_line_goes_out_and_live_print_starts_a_new_line,
            ),
            ("a_panic_message_stays_whole", a_panic_message_stays_whole),
            (
                "main_returning_err_stays_whole",
                main_returning_err_stays_whole,
            ),
            ("c_printf_arrives_in_order", c_printf_arrives_in_order),
        ];
        for (case, f) in cases {
            let full: &'static str = Box::leak(format!("{case}_{name}").into_boxed_str());
            tests.push((full, Box::new(move || f(place))));
        }
        for how in ["sigkill", "abort"] {
            let full: &'static str =
                Box::leak(format!("nothing_is_lost_after_{how}_{name}").into_boxed_str());
            tests.push((
                full,
                Box::new(move || nothing_is_lost_when_the_program_dies(place, how)),
            ));
        }
    }
    tests.push((
        "capture_off_and_auto_on_a_shared_pipe",
        Box::new(capture_off_and_auto_on_a_shared_pipe),
    ));
    tests.push((
        "auto_captures_only_stderr_when_the_two_lead_apart",
        Box::new(auto_captures_only_stderr_when_the_two_lead_apart),
    ));
    tests.push((
        "a_terminal_stays_a_terminal_with_its_size",
        Box::new(a_terminal_stays_a_terminal_with_its_size),
    ));
    tests.push((
        "stopped_and_continued_leaves_no_line_of_blanks",
        Box::new(stopped_and_continued_leaves_no_line_of_blanks),
    ));
    tests.push((
        "stopped_and_continued_with_sigcont_blocked",
        Box::new(stopped_and_continued_with_sigcont_blocked),
    ));
    tests.push((
        "a_resize_reaches_the_program",
        Box::new(a_resize_reaches_the_program),
    ));
    // Two at a time, so the 20,000-line floods do not starve each other on two cores. Eight at once is what
    // exposed a race (a SIGKILL right after a live line's write left the forwarder child unaware of the
    // open line: `Still Working` joined the program's next line), fixed in `sys::write_stderr`.
    common::run_tests(tests, 2);
    Ok(())
}
