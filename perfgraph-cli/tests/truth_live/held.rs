//! The held program (`examples/truth` with `TRUTH_HOLD=1`): started, waited for until it holds, given
//! phases, ended; and the commands run against it, each under a timeout that only catches a hang.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::common::truth::{self, PATIENCE, Truth};
use crate::common::{Reaped, Scratch};

pub const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// `cmd` run to its end with its output taken; killed (and the test failed) if it hangs.
pub fn output(cmd: &mut Command) -> Output {
    let mut child = Reaped(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let take = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = take(Box::new(child.0.stdout.take().unwrap()));
    let err = take(Box::new(child.0.stderr.take().unwrap()));
    let status = wait(&mut child, &format!("{cmd:?}"));
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Waits for `child` to exit (a hang fails the test, and the child is killed as it drops).
pub fn wait(child: &mut Reaped, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status;
        }
        assert!(start.elapsed() < PATIENCE, "{what} hung");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A port free on 127.0.0.1 now (bound, read, let go).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /metrics` on 127.0.0.1:`port`: the body of a 200 answer.
pub fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.lines()
        .next()?
        .contains(" 200 ")
        .then(|| body.to_owned())
}

/// The running program, held after its run; killed and reaped if the test fails.
pub struct Held {
    child: Reaped,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Its runtime directory and output files (dropped after the program: fields drop in order).
    pub dir: Scratch,
}

impl Held {
    /// Starts it (`TRUTH_HOLD=1`, then `envs`) in a scratch directory of its own and waits until it holds.
    pub fn start(name: &str, envs: &[(&str, &str)]) -> Held {
        let dir = crate::common::scratch("perfgraph-truth-live", name);
        let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
        let mut child = truth::command(&dir, envs)
            .env("TRUTH_HOLD", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let held = Held {
            child: Reaped(child),
            stdin,
            lines,
            dir,
        };
        held.expect("truth: holding");
        held
    }

    /// Waits for the program's stdout line `want`.
    fn expect(&self, want: &str) {
        let start = Instant::now();
        loop {
            let left = PATIENCE.saturating_sub(start.elapsed());
            match self.lines.recv_timeout(left) {
                Ok(line) if line == want => return,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no {want:?} in time\n{}", self.stderr()),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the program ended before {want:?}\n{}", self.stderr())
                }
            }
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    pub fn pid_arg(&self) -> String {
        self.pid().to_string()
    }

    /// What the program measured itself, as it last wrote it.
    pub fn truth(&self) -> Truth {
        Truth::read(&truth::truth_path(&self.dir), 0)
    }

    /// One phase: 5 sleeps of 100 ms and 1,000 ticks; returns once the program wrote its truth again.
    pub fn phase(&mut self) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(b"phase\n").unwrap();
        stdin.flush().unwrap();
        self.expect("truth: done");
    }

    /// `perfgraph args...` against its runtime directory; must succeed.
    pub fn cli(&self, args: &[&str]) -> Output {
        let out = output(
            Command::new(CLI)
                .env("XDG_RUNTIME_DIR", &self.dir)
                .args(args),
        );
        assert!(
            out.status.success(),
            "perfgraph {args:?}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A path in its scratch directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Ends it (stdin closed) and waits for its exit, which must be a success; its stderr, and its
    /// directory, to keep until the test's last check (removed when dropped, kept if the test fails).
    pub fn end(mut self) -> (String, Scratch) {
        drop(self.stdin.take());
        let status = wait(&mut self.child, "the held program's exit");
        assert!(status.success(), "{status:?}\n{}", self.stderr());
        (self.stderr(), self.dir)
    }
}

/// Until `path` or its temporary file exists (a trace window's file is made at its first bytes: the window is
/// open).
pub fn wait_for_file(path: &Path, child: &mut Reaped) {
    let start = Instant::now();
    // `-o` writes under a temporary name beside the file (`.<name>.perfgraph-<pid>-<n>`, made at the first
    // bytes) and renames it at the end.
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let temp = format!(".{name}.perfgraph-{}-", child.0.id());
    let started = || {
        path.exists()
            || std::fs::read_dir(path.parent().unwrap()).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(&temp)))
            })
    };
    while !started() {
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!(
                "perfgraph trace ended ({status:?}) before writing {}",
                path.display()
            );
        }
        assert!(start.elapsed() < PATIENCE, "{} never made", path.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}
