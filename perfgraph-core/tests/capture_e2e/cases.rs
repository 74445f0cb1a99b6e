//! The tests, each run by the harness in `main` (on a pipe, on a terminal, or both) against a child of
//! this binary.

use super::*;

pub(crate) fn println_lines_stay_whole(place: Place) {
    let r = run(command("println"), place);
    assert!(r.status.success(), "{}", r.out);
    let expected = lines_of((1..=4).map(|i| format!("result {} of 10", i * 7))) + "child done\n";
    check(&r, &["Working"], &expected, &[]);
}

pub(crate) fn eprintln_lines_stay_whole(place: Place) {
    let r = run(command("eprintln"), place);
    assert!(r.status.success(), "{}", r.out);
    let expected = lines_of((1..=4).map(|i| format!("result {} of 10", i * 7))) + "child done\n";
    check(&r, &["Working"], &expected, &[]);
}

pub(crate) fn chatter_between_dots_stays_whole(place: Place) {
    let r = run(command("chatter"), place);
    assert!(r.status.success(), "{}", r.out);
    let expected = lines_of((0..30).map(|i| {
        let stream = if i % 2 == 0 { "stdout" } else { "stderr" };
        format!("chat line {i} on {stream}")
    })) + "child done\n";
    check(&r, &["Chatting"], &expected, &[]);
}

pub(crate) fn a_partial_line_goes_out_and_live_print_starts_a_new_line(place: Place) {
    let r = run(command("partial"), place);
    assert!(r.status.success(), "{}", r.out);
    check(
        &r,
        &["Warming up", "Working"],
        "partial rest\nchild done\n",
        &[" rest"],
    );
    // The partial line went out while the section ran (after the delay), before its live line; on a terminal
    // live print cleared it and drew it again below its own line.
    let partial = r.out.find("partial").unwrap();
    let live = r.out.find("Working").unwrap();
    assert_eq!(partial < live, place == Place::Pipe, "{}", r.out);
}

pub(crate) fn a_panic_message_stays_whole(place: Place) {
    let r = run(command("panic"), place);
    assert!(!r.status.success());
    let got = program_text(&r.out, &["Working"]);
    // std's hook starts with an empty line of its own.
    let lines: Vec<&str> = got.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 4, "{}", r.out);
    assert_eq!(lines[0], "before the panic", "{}", r.out);
    assert!(
        lines[1].starts_with("thread 'main' ") && lines[1].contains(" panicked at "),
        "{}",
        r.out
    );
    assert_eq!(lines[2], "deliberate failure", "{}", r.out);
    assert!(
        lines[3].starts_with("note: run with `RUST_BACKTRACE=1`"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .lines()
            .any(|l| l.starts_with("Finished Working (panicked) ")),
        "{}",
        r.out
    );
}

pub(crate) fn main_returning_err_stays_whole(place: Place) {
    let r = run(command("err"), place);
    assert_eq!(r.status.code(), Some(1), "{}", r.out);
    check(&r, &["Background"], "Error: \"failed on purpose\"\n", &[]);
}

pub(crate) fn c_printf_arrives_in_order(place: Place) {
    let r = run(command("printf"), place);
    assert!(r.status.success(), "{}", r.out);
    // Rust's "child done" is written before C flushes its buffer at exit when C's stdout is a pipe. The live
    // line printed while "c partial" waited starts on a new line after it.
    let expected = match place {
        Place::Pipe => "c says 42\nc partialchild done\n and more\n",
        Place::Terminal => "c says 42\nc partial and more\nchild done\n",
    };
    check(
        &r,
        &["Warming up", "Working"],
        expected,
        &["child done", " and more"],
    );
}

pub(crate) fn nothing_is_lost_when_the_program_dies(place: Place, how: &str) {
    let r = run(command(how), place);
    assert!(!r.status.success(), "{}", r.out);
    let expected =
        lines_of((0..KILL_LINES).map(|i| format!("line {i}"))) + "tail without a newline";
    let got = program_text(&r.out, &["Working"]);
    // After the tail a newline may follow (a live line the exit printed starts on a fresh line).
    let got = got.strip_suffix('\n').unwrap_or(&got);
    // Under load the program can stall halfway through a line for longer than the partial-line delay (a
    // write to a full pty is taken in part, the rest waits for the writer to run again): that part goes
    // out, and a live line printed then starts on a fresh line, so perfgraph adds one newline before it.
    // What this test checks is that no byte is lost or reordered; whole lines are `check`'s business.
    let live_lines = r.out.lines().filter(|l| is_live(l, &["Working"])).count();
    let added = got.matches('\n').count() as i64 - expected.matches('\n').count() as i64;
    if got.replace('\n', "") != expected.replace('\n', "")
        || !(0..=live_lines as i64).contains(&added)
    {
        let first_bad = got.lines().zip(expected.lines()).position(|(a, b)| a != b);
        panic!(
            "{how}: {} bytes of {} arrived; first difference at line {first_bad:?} ({:?} for {:?}); last 300 bytes:\n{}",
            got.len(),
            expected.len(),
            first_bad.and_then(|i| got.lines().nth(i)),
            first_bad.and_then(|i| expected.lines().nth(i)),
            &got[got.len().saturating_sub(300)..]
        );
    }
}

/// `pipe:[12345]` for a pipe end.
pub(crate) fn pipe_name(fd: &impl AsRawFd) -> String {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
    link.display().to_string()
}

pub(crate) fn described(r: &Run) -> Vec<String> {
    // Without capture the line may follow live print's open line (`describefd1 ...`).
    let line = r
        .out
        .lines()
        .find_map(|l| l.find("fd1 ").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("{}", r.out));
    line.split(' ').map(str::to_owned).collect()
}

pub(crate) fn capture_off_and_auto_on_a_shared_pipe() {
    for (mode, captured) in [("off", false), ("auto", true), ("on", true)] {
        let (reader, writer) = std::io::pipe().unwrap();
        let ours = pipe_name(&writer);
        let mut cmd = command("describe");
        cmd.env("PERFGRAPH_CAPTURE", mode);
        cmd.stdout(writer.try_clone().unwrap()).stderr(writer);
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        let out = String::from_utf8(common::read_all(reader)).unwrap();
        assert!(child.wait().unwrap().success());
        let r = Run {
            status: ExitStatus::default(),
            out,
        };
        let d = described(&r);
        // fd1 <link> fd2 <link> tty <1> <2> size ...
        assert_eq!(
            d[1], d[3],
            "{mode}: fds 1 and 2 lead to one place: {}",
            r.out
        );
        assert_eq!(d[1] != ours, captured, "{mode}: ours {ours}: {}", r.out);
        assert!(d[1].starts_with("pipe:"), "{}", r.out);
    }
}

pub(crate) fn auto_captures_only_stderr_when_the_two_lead_apart() {
    let mut cmd = command("describe");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (out_name, err_name) = (pipe_name(&stdout), pipe_name(&stderr));
    let err = std::thread::spawn(move || common::read_all(stderr));
    let out = String::from_utf8(common::read_all(stdout)).unwrap();
    let _ = err.join();
    assert!(child.wait().unwrap().success());
    let r = Run {
        status: ExitStatus::default(),
        out,
    };
    let d = described(&r);
    // The child's stdout is our pipe still (the names match only as `pipe:[inode]`); its stderr, which its
    // writes share with live lines, is captured once live print showed a line.
    assert_eq!(d[1], out_name, "{}", r.out);
    assert!(d[3] != err_name && d[3].starts_with("pipe:"), "{}", r.out);
}

pub(crate) fn a_terminal_stays_a_terminal_with_its_size() {
    let r = run(command("describe"), Place::Terminal);
    assert!(r.status.success(), "{}", r.out);
    let d = described(&r);
    assert_eq!(&d[4..7], ["tty", "1", "1"], "{}", r.out);
    assert_eq!(d[8], "100x40", "{}", r.out);
}

/// Reads a pseudo-terminal's `master` to its end on a thread of its own: what it read so far is sent on the
/// receiver after every read (for waiting until the child printed something), and the thread returns all
/// of it (`\r\n` read as `\n`).
pub(crate) fn read_watching(
    master: &std::fs::File,
) -> (
    std::thread::JoinHandle<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let mut reader = master.try_clone().unwrap();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel::<String>();
    let reading = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    all.extend_from_slice(&buf[..n]);
                    let _ = seen_tx.send(String::from_utf8_lossy(&all).into_owned());
                }
            }
        }
        String::from_utf8_lossy(&all).replace("\r\n", "\n")
    });
    (reading, seen_rx)
}

pub(crate) fn a_resize_reaches_the_program() {
    let (master, slave) = common::open_pty();
    let mut cmd = command("resize");
    cmd.stdout(slave.try_clone().unwrap()).stderr(slave);
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let (reading, seen_rx) = read_watching(&master);
    // Once the child is ready: a new size, and the SIGWINCH a terminal sends its foreground group.
    while let Ok(seen) = seen_rx.recv_timeout(HANG) {
        if seen.contains("ready") {
            break;
        }
    }
    common::set_size(&master, 120, 50);
    // SAFETY: kill has no memory-safety preconditions; the pid is our running child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGWINCH) };
    let status = common::wait_or_kill(&mut child, start, HANG);
    let out = reading.join().unwrap();
    assert!(status.success(), "{out}");
    assert!(out.contains("ready 100x40\n"), "{out}");
    assert!(out.contains("resized 120x50\n"), "{out}");
}

/// Each partial line gets its own 50 ms before a live line interrupts it: lines left unfinished for a few
/// milliseconds stay whole. (The allowance used to be spent over the run, and 20 to 147 lines of such a
/// program were cut.) This program always has a partial line pending, so live print goes ahead once it has
/// waited 1 s in all, cutting one line then; a pause stretched past 50 ms by a busy machine may cut another.
/// So a few are allowed, out of 320, and live print must have printed while the section ran.
pub(crate) fn partial_lines_get_their_allowance_each(place: Place) {
    let r = run(command("two-part"), place);
    assert!(r.status.success(), "{}", r.out);
    let text = program_text(&r.out, &["Warming up", "Two parts"]);
    let whole = (0..TWO_PART_LINES)
        .filter(|i| text.contains(&format!("part one {i}, part two {i}\n")))
        .count();
    assert!(
        whole + 4 >= TWO_PART_LINES,
        "{whole} whole lines:\n{}",
        r.out
    );
    let live = r.out.lines().filter(|l| l.contains("Two parts")).count();
    assert!(
        live >= 2,
        "live print printed while the section ran:\n{}",
        r.out
    );
}

/// Ctrl-Z and `fg`: the shell writes its lines while the program is stopped; perfgraph's next text must not
/// be stats appended after them on a line of blanks.
pub(crate) fn stopped_and_continued_leaves_no_line_of_blanks() {
    stopped_and_continued("stop");
}

/// As above, in a program whose thread blocks SIGCONT, so that its handler never runs: live print sees the
/// signal pending, waits for it a while (as it does for a handler a busy machine runs late), then goes on as
/// after a stop, once.
pub(crate) fn stopped_and_continued_with_sigcont_blocked() {
    stopped_and_continued("stop-blocked");
}

pub(crate) fn stopped_and_continued(scenario: &str) {
    let (master, slave) = common::open_pty();
    let mut shell = slave.try_clone().map(std::fs::File::from).unwrap();
    let mut cmd = command(scenario);
    cmd.stdout(slave.try_clone().unwrap()).stderr(slave);
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let (reading, seen_rx) = read_watching(&master);
    // Once a dot is on the live line: stop the program, write what a shell writes, continue it.
    while let Ok(seen) = seen_rx.recv_timeout(HANG) {
        if seen.contains("Stoppable.") {
            break;
        }
    }
    let pid = child.id() as i32;
    // SAFETY: kill has no memory-safety preconditions; the pid is our running child's.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    // As long as a person takes to type `fg`, at least (live print takes a pass that much late for a stop).
    sleep_ms(600);
    shell
        .write_all(b"^Z\n[1]+  Stopped   prog\n$ fg\nprog\n")
        .unwrap();
    drop(shell);
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let status = common::wait_or_kill(&mut child, start, HANG);
    let out = reading.join().unwrap();
    assert!(status.success(), "{out}");
    let shell_lines = "$ fg\nprog\n";
    let after = &out[out.find(shell_lines).expect("the shell's lines") + shell_lines.len()..];
    // The process may go on before the signal's handler has run: live print waits for it (and, in a program
    // that blocks SIGCONT, gives up waiting once); at worst it starts its next text after one empty line.
    let first = after.lines().find(|l| !l.is_empty()).unwrap_or_default();
    assert!(
        first.starts_with("Still Stoppable") || first.starts_with("Finished Stoppable"),
        "perfgraph's first line after fg: {first:?}\n{out}"
    );
}
