//! `perfgraph top` end to end, under a real pseudo-terminal whose bytes a terminal emulator (`vt100`)
//! renders: the section running in a long-running child (`examples/service`) is on the screen, the panes
//! switch with their keys (the call graph from its root, the program), `q` quits with status 0; and when
//! the child exits, the screen says so and keeps the last snapshot. No wall-clock bound but a generous one
//! that only catches a hang.

use std::process::Command;
use std::time::{Duration, Instant};

mod common;
mod top_pty;

use common::{PATIENCE, Service};
use top_pty::{Tty, top, wait};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

fn scratch(name: &str) -> common::Scratch {
    common::scratch("perfgraph-top", name)
}

#[test]
fn top_shows_the_running_section_switches_panes_and_quits() {
    let runtime = scratch("live");
    let svc = Service::start(&runtime);
    let (mut top, mut screen) = top(&runtime, svc.pid(), &Tty::default());
    screen.wait_for("Running now");
    screen.wait_for("solve");
    screen.wait_for("assemble");
    screen.wait_for(&format!("service (pid {})", svc.pid()));
    // The call graph: `residual` under both.
    screen.press("2");
    screen.wait_for("  residual");
    // Its first row is the root, as in the report's graph: the program, its total the wall time (100%).
    screen.wait_for("\nservice ");
    let text = screen.text();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Section "));
    let root = lines.nth(1).unwrap_or_default();
    assert!(
        root.starts_with("service ") && root.trim_end().ends_with(" 100.0"),
        "{text}"
    );
    // Heaviest sections with their percentiles.
    screen.press("3");
    screen.wait_for("p99");
    // The locks and counters panes, by their keys, listed in the key line; the service uses neither.
    screen.wait_for("tab/1-7 pane");
    screen.press("5");
    screen.wait_for("5 Locks");
    screen.wait_for("No lock of perfgraph_core::sync");
    screen.press("6");
    screen.wait_for("6 Counters");
    screen.wait_for("No counter! set");
    screen.press("7");
    screen.wait_for("No thread is waiting");
    screen.press("3");
    // A filter typed after `/`.
    screen.press("/resid\r");
    screen.wait_for("filter: resid");
    screen.press("q");
    assert_eq!(wait(&mut top).code(), Some(0), "{}", screen.text());
    assert!(svc.stop().status.success());
}

#[test]
fn top_follows_a_wait_to_the_section_at_its_root() {
    let runtime = scratch("waits");
    // `nested` of examples/critical with T2's `flush` (holding `L2`) lasting until stdin closes.
    let svc = Service::start_example(&runtime, "critical", &["stuck"]);
    let (mut top, mut screen) = top(&runtime, svc.pid(), &Tty::default());
    screen.wait_for("Running now");
    screen.press("7");
    screen.wait_for("Waits for");
    screen.wait_for("`L1` held by T1, which waits for `L2` held by T2 in `flush`");
    screen.wait_for("`L2` held by T2 in `flush`");
    screen.press("q");
    assert_eq!(wait(&mut top).code(), Some(0), "{}", screen.text());
    assert!(svc.stop().status.success());
}

#[test]
fn top_says_when_the_process_exited_and_keeps_its_last_snapshot() {
    let runtime = scratch("exit");
    let svc = Service::start(&runtime);
    let pid = svc.pid();
    // 80 columns: the line that says so is whole, not cut after the header.
    let tty = Tty {
        cols: 80,
        ..Tty::default()
    };
    let (mut top, mut screen) = top(&runtime, pid, &tty);
    screen.wait_for("solve");
    assert!(svc.stop().status.success());
    let gone = format!("process {pid} exited; showing its last snapshot");
    screen.wait_for(&gone);
    let text = screen.text();
    assert!(
        text.contains("solve") && text.contains("assemble"),
        "{text}"
    );
    // Still usable on its last snapshot: the panes, the sort and the filter.
    screen.press("3");
    screen.wait_for("p99");
    screen.press("s/resid\r");
    screen.wait_for("filter: resid");
    screen.wait_for("sort: self");
    let text = screen.text();
    assert!(text.contains("residual") && text.contains(&gone), "{text}");
    screen.press("q");
    assert_eq!(wait(&mut top).code(), Some(0), "{}", screen.text());
}

#[test]
fn a_signal_ends_top_as_it_would_with_the_terminal_given_back() {
    use std::os::unix::process::ExitStatusExt;
    let runtime = scratch("signals");
    let svc = Service::start(&runtime);
    // Killed by the signal, as its default action would: a shell says 143, 129 and 130.
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let (mut top, screen) = top(&runtime, svc.pid(), &Tty::default());
        screen.wait_for("solve");
        assert!(screen.alternate_screen());
        assert!(screen.raw_mode());
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(top.0.id() as i32, sig) };
        let status = wait(&mut top);
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        // The main screen is back (the reader may still be taking the last bytes), raw mode off.
        let start = Instant::now();
        while screen.alternate_screen() {
            assert!(start.elapsed() < PATIENCE, "still on the alternate screen");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!screen.raw_mode(), "still in raw mode after signal {sig}");
    }
    assert!(svc.stop().status.success());
}

/// Hangs the terminal up under a running `top`: it ends, killed by SIGHUP, without spinning first.
fn hang_up_ends_top(controlling: bool) {
    use std::os::unix::process::ExitStatusExt;
    let runtime = scratch(if controlling { "hangup-ctty" } else { "hangup" });
    let svc = Service::start(&runtime);
    let tty = Tty {
        controlling,
        ..Tty::default()
    };
    let (mut top, mut screen) = top(&runtime, svc.pid(), &tty);
    screen.wait_for("solve");
    let pid = top.0.id();
    let cpu = top_pty::cpu_ms(pid);
    let start = Instant::now();
    screen.hang_up();
    // Its CPU time after the hangup: what it takes to end, not a loop reading end of file.
    while !top_pty::ended(pid) {
        let spent = top_pty::cpu_ms(pid) - cpu;
        assert!(
            spent < 50,
            "top still running {:?} after the hangup, {spent} ms of CPU",
            start.elapsed()
        );
        assert!(start.elapsed() < PATIENCE, "top still running");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (took, spent) = (start.elapsed(), top_pty::cpu_ms(pid) - cpu);
    eprintln!("hangup (controlling: {controlling}): ended in {took:?}, {spent} ms of CPU");
    assert!(spent < 50, "{spent} ms of CPU after the hangup");
    // As SIGHUP's default action would: a shell says 129.
    let status = wait(&mut top);
    assert_eq!(status.signal(), Some(libc::SIGHUP), "{status:?}");
    assert!(svc.stop().status.success());
}

#[test]
fn a_hung_up_terminal_ends_top_at_once() {
    hang_up_ends_top(false);
}

#[test]
fn a_hung_up_controlling_terminal_ends_top_at_once() {
    hang_up_ends_top(true);
}

/// The figures on a row that are cut: a number ending in its decimal point; with `durations`, one with
/// one or two decimals (as `371.8 ms` or `1.25 s`) without its unit after it; else one with two decimals
/// (seconds have three, percentages one).
fn cut_figures(row: &str, durations: bool) -> Vec<String> {
    let words: Vec<&str> = row.split_whitespace().collect();
    let unit = |w: Option<&&str>| matches!(w, Some(&("ns" | "µs" | "ms" | "s" | "MB")));
    let mut cut = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let decimals = match w.split_once('.') {
            Some((a, b)) if digits(a) => b.len(),
            _ => continue,
        };
        let whole = match decimals {
            0 => false,
            1 | 2 if durations => unit(words.get(i + 1)),
            2 => false,
            _ => true,
        };
        if !whole {
            cut.push(format!("{w:?} in {row:?}"));
        }
    }
    cut
}

#[test]
fn a_narrow_terminal_cuts_no_figure() {
    let runtime = scratch("narrow");
    let svc = Service::start(&runtime);
    let tty = Tty {
        cols: 40,
        rows: 8,
        ..Tty::default()
    };
    let (mut top, mut screen) = top(&runtime, svc.pid(), &tty);
    screen.wait_for("solve");
    // The sections pane, its percentiles in ms and µs; then the others.
    for key in ["3", "2", "1", "4"] {
        screen.press(key);
        let start = Instant::now();
        while !screen.selected_tab().starts_with(key) {
            assert!(start.elapsed() < PATIENCE, "pane {key} never shown");
            std::thread::sleep(Duration::from_millis(20));
        }
        let rows = screen.rows();
        // The header's and the running and sections panes' figures are durations and sizes.
        let cut: Vec<String> = (rows.iter().enumerate())
            .flat_map(|(i, r)| cut_figures(r, i == 0 || key == "1" || key == "3"))
            .collect();
        assert!(
            cut.is_empty(),
            "pane {key}: cut figures {cut:#?}\n{}",
            rows.join("\n")
        );
    }
    screen.press("q");
    assert_eq!(wait(&mut top).code(), Some(0), "{}", screen.text());
    assert!(svc.stop().status.success());
}

#[test]
fn top_of_no_process_is_one_line_and_exit_2() {
    let runtime = scratch("none");
    let out = Command::new(CLI)
        .args(["top", "999999999"])
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("perfgraph: process 999999999: "), "{err}");
}
