//! `perfgraph top` end to end, under a real pseudo-terminal whose bytes a terminal emulator (`vt100`)
//! renders: the section running in a long-running child (`examples/service`) is on the screen, the panes
//! switch with their keys (the call graph from its root, the program), `q` quits with status 0; and when
//! the child exits, the screen says so and keeps the last snapshot. No wall-clock bound but a generous one
//! that only catches a hang.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

use common::{PATIENCE, Reaped, Service};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");
const ROWS: u16 = 30;
const COLS: u16 = 110;

/// A pseudo-terminal of `COLS` x `ROWS`: (master, slave).
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: the pointers are to live locals; openpty writes the two descriptors and reads `size`.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Close-on-exec, both: the children of tests running beside this one must not hold this terminal
    // (the child given the slave as its stdio gets copies without the flag).
    for fd in [master, slave] {
        // SAFETY: fcntl on the descriptors openpty just gave us.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: openpty gave us these two descriptors; nothing else owns them.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// The screen `top` drew, kept up to date by a thread that reads the master.
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    master: std::fs::File,
}

impl Screen {
    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen holds `what`; panics with the screen after [`PATIENCE`].
    fn wait_for(&self, what: &str) {
        let start = Instant::now();
        while !self.text().contains(what) {
            assert!(
                start.elapsed() < PATIENCE,
                "{what:?} never on the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn press(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }
}

/// `perfgraph top <pid>` on a pseudo-terminal.
fn top(runtime: &Path, pid: u32) -> (Reaped, Screen) {
    let (master, slave) = open_pty();
    let slave = std::fs::File::from(slave);
    let child = Command::new(CLI)
        .args(["top", &pid.to_string(), "--interval", "0.2"])
        .env("XDG_RUNTIME_DIR", runtime)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZeroU16::new(ROWS).unwrap(),
        std::num::NonZeroU16::new(COLS).unwrap(),
        0,
    )));
    let reader = std::fs::File::from(master);
    let writer = reader.try_clone().unwrap();
    let feed = Arc::clone(&parser);
    std::thread::spawn(move || {
        let mut reader = reader;
        let mut buf = [0u8; 65536];
        // Until `top` and the test have both closed the slave (EIO).
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            feed.lock().unwrap().process(&buf[..n]);
        }
    });
    (
        Reaped(child),
        Screen {
            parser,
            master: writer,
        },
    )
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("perfgraph-top", name)
}

/// Waits for `child` to exit; its status code.
fn exit_code(child: &mut Reaped) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status.code();
        }
        assert!(start.elapsed() < PATIENCE, "top did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn top_shows_the_running_section_switches_panes_and_quits() {
    let runtime = scratch("live");
    let svc = Service::start(&runtime);
    let (mut top, mut screen) = top(&runtime, svc.pid());
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
    // A filter typed after `/`.
    screen.press("/resid\r");
    screen.wait_for("filter: resid");
    screen.press("q");
    assert_eq!(exit_code(&mut top), Some(0), "{}", screen.text());
    assert!(svc.stop().status.success());
}

#[test]
fn top_says_when_the_process_exited_and_keeps_its_last_snapshot() {
    let runtime = scratch("exit");
    let svc = Service::start(&runtime);
    let pid = svc.pid();
    let (mut top, mut screen) = top(&runtime, pid);
    screen.wait_for("solve");
    assert!(svc.stop().status.success());
    screen.wait_for(&format!("process {pid} exited"));
    let text = screen.text();
    assert!(
        text.contains("solve") && text.contains("assemble"),
        "{text}"
    );
    screen.press("q");
    assert_eq!(exit_code(&mut top), Some(0), "{}", screen.text());
}

#[test]
fn sigterm_ends_top_with_the_terminal_given_back() {
    use std::os::unix::process::ExitStatusExt;
    let runtime = scratch("sigterm");
    let svc = Service::start(&runtime);
    let (mut top, screen) = top(&runtime, svc.pid());
    screen.wait_for("solve");
    assert!(screen.parser.lock().unwrap().screen().alternate_screen());
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(top.0.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    let status = loop {
        if let Some(status) = top.0.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < PATIENCE, "top did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    // The main screen is back (the reader may still be taking the last bytes).
    while screen.parser.lock().unwrap().screen().alternate_screen() {
        assert!(start.elapsed() < PATIENCE, "still on the alternate screen");
        std::thread::sleep(Duration::from_millis(20));
    }
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
