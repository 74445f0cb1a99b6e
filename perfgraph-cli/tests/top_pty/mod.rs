//! The pseudo-terminal `perfgraph top` runs on in tests/top.rs, and what a test asks of it: the screen as a
//! terminal emulator (`vt100`) renders the bytes `top` wrote, keys typed, the terminal's modes, a hangup
//! (every descriptor of the master closed, as when a terminal window or a tmux pane is closed), and the CPU
//! time `top` used (from `/proc/<pid>/stat`).

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::{PATIENCE, Reaped};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// A pseudo-terminal of `cols` x `rows`: (master, slave), both close-on-exec from the start, so that no
/// child of a test running beside this one holds either (one holding the master would keep the terminal
/// from hanging up).
fn open_pty(cols: u16, rows: u16) -> (OwnedFd, OwnedFd) {
    let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: posix_openpt takes flags and returns a new descriptor or -1.
    let master = unsafe { libc::posix_openpt(flags) };
    assert!(
        master >= 0,
        "posix_openpt: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: posix_openpt just gave us this descriptor; nothing else owns it.
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    // SAFETY: unlockpt on the master just opened; TIOCGPTPEER opens its slave with the flags given
    // (Linux 4.13), without a path to look up.
    let slave = unsafe {
        assert_eq!(libc::unlockpt(master.as_raw_fd()), 0, "unlockpt");
        libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, flags)
    };
    assert!(
        slave >= 0,
        "TIOCGPTPEER: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: the ioctl just gave us this descriptor; nothing else owns it.
    let slave = unsafe { OwnedFd::from_raw_fd(slave) };
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads the winsize `size` points to, a live local.
    let rc = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    (master, slave)
}

/// The screen `top` drew, kept up to date by a thread that reads the master.
pub struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    /// The test's end of the terminal; `None` once hung up.
    master: Option<std::fs::File>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl Screen {
    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The screen's rows, trailing blanks trimmed.
    pub fn rows(&self) -> Vec<String> {
        let parser = self.parser.lock().unwrap();
        let (_, cols) = parser.screen().size();
        parser
            .screen()
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_owned())
            .collect()
    }

    /// The title of the pane shown: the highlighted (reversed) text on the tabs' row.
    pub fn selected_tab(&self) -> String {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (_, cols) = screen.size();
        (0..cols.get())
            .filter_map(|c| screen.cell(1, c))
            .filter(|cell| cell.inverse())
            .map(|cell| cell.contents())
            .collect::<String>()
    }

    pub fn alternate_screen(&self) -> bool {
        self.parser.lock().unwrap().screen().alternate_screen()
    }

    /// Waits until the screen holds `what`; panics with the screen after [`PATIENCE`].
    pub fn wait_for(&self, what: &str) {
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

    pub fn press(&mut self, keys: &str) {
        let master = self.master.as_mut().expect("hung up");
        master.write_all(keys.as_bytes()).unwrap();
    }

    /// The terminal is in raw mode (no line editing, no echo): the modes are the pty's, read on the master.
    pub fn raw_mode(&self) -> bool {
        let master = self.master.as_ref().expect("hung up");
        // SAFETY: termios is plain data, all zeroes a valid value; tcgetattr fills it from a live descriptor.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let rc = unsafe { libc::tcgetattr(master.as_raw_fd(), &mut t) };
        assert_eq!(rc, 0, "tcgetattr: {}", std::io::Error::last_os_error());
        t.c_lflag & (libc::ICANON | libc::ECHO) == 0
    }

    /// Hangs the terminal up: the reader stops and every descriptor of the master is closed.
    pub fn hang_up(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        drop(self.master.take());
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// How `top` is started.
pub struct Tty {
    pub cols: u16,
    pub rows: u16,
    /// The terminal is `top`'s controlling terminal, `top` its session's leader: the kernel sends it
    /// SIGHUP when the terminal hangs up (as to a shell in a terminal window). Else it only reads end of
    /// file and sees POLLHUP.
    pub controlling: bool,
}

impl Default for Tty {
    fn default() -> Tty {
        Tty {
            cols: 110,
            rows: 30,
            controlling: false,
        }
    }
}

/// `perfgraph top <pid>` on a pseudo-terminal.
pub fn top(runtime: &Path, pid: u32, tty: &Tty) -> (Reaped, Screen) {
    let (master, slave) = open_pty(tty.cols, tty.rows);
    let slave = std::fs::File::from(slave);
    let mut command = Command::new(CLI);
    command
        .args(["top", &pid.to_string(), "--interval", "0.2"])
        .env("XDG_RUNTIME_DIR", runtime)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    if tty.controlling {
        // SAFETY: between fork and exec, setsid and ioctl only (async-signal-safe): a new session whose
        // controlling terminal is the slave, fd 0 by then.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let child = command.spawn().unwrap();
    drop(command);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(
        std::num::NonZeroU16::new(tty.rows).unwrap(),
        std::num::NonZeroU16::new(tty.cols).unwrap(),
        0,
    )));
    let reader = std::fs::File::from(master);
    let writer = reader.try_clone().unwrap();
    let feed = Arc::clone(&parser);
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let reader = std::thread::spawn(move || {
        let mut reader = reader;
        let mut buf = [0u8; 65536];
        // Until `top` has closed the slave (EIO) or the test hangs up.
        while !stopped.load(Ordering::SeqCst) {
            let mut fds = [libc::pollfd {
                fd: reader.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            // SAFETY: poll on one live pollfd, 20 ms at most.
            if unsafe { libc::poll(fds.as_mut_ptr(), 1, 20) } <= 0 {
                continue;
            }
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => feed.lock().unwrap().process(&buf[..n]),
            }
        }
    });
    (
        Reaped(child),
        Screen {
            parser,
            master: Some(writer),
            stop,
            reader: Some(reader),
        },
    )
}

/// Waits for `child` to end; its status.
pub fn wait(child: &mut Reaped) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < PATIENCE, "top did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The CPU time (user and system) process `pid` has used, ms; a process that ended and is not yet waited
/// for too.
pub fn cpu_ms(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // After the command's name in parentheses: the state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks * 1000 / hz
}

/// Whether child `pid` has ended, leaving it to be waited for (its `/proc` entry still there).
pub fn ended(pid: u32) -> bool {
    // SAFETY: siginfo_t is plain data, all zeroes a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child, filling `info`; WNOWAIT leaves it waitable.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    assert_eq!(rc, 0, "waitid: {}", std::io::Error::last_os_error());
    // SAFETY: si_pid is set by waitid (0 when no child has changed state).
    unsafe { info.si_pid() != 0 }
}
