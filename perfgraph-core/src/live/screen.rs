//! The terminal as live print shares it: one lock that orders live lines, reports and the program's own
//! output through [`suspend`], and a writer that never blocks on stderr.
//!
//! Only the background thread writes live lines. It never blocks on stderr: before each `write` it polls
//! the descriptor for room (a pipe nobody reads reports none), writes at most [`CHUNK`] bytes (a pipe
//! takes up to `PIPE_BUF` bytes at once when it reports room), and keeps the rest for the next pass, up to
//! [`MAX_PENDING`] bytes; beyond that whole lines are dropped and counted. A closed stderr or one that
//! returns errors (EPIPE) stops live output for good; nothing else notices.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Largest single write: `PIPE_BUF` on Linux, which a pipe with room takes without blocking.
const CHUNK: usize = 4096;
/// Live text kept while stderr has no room; past this, new lines are dropped (and counted).
const MAX_PENDING: usize = 64 * 1024;

/// Shared state of the terminal.
#[derive(Debug, Default)]
pub struct Screen {
    /// Bytes the background thread wrote into its buffer but stderr has not taken yet.
    pending: Vec<u8>,
    /// A live line is open (no newline yet): whoever writes next must end it first.
    pub line_open: bool,
    /// stderr failed (closed, EPIPE): live output stops.
    broken: bool,
}

/// The one lock around the terminal.
pub static SCREEN: Mutex<Screen> = Mutex::new(Screen {
    pending: Vec::new(),
    line_open: false,
    broken: false,
});

/// Times other output went through [`suspend`] or a report; the printer compares it between passes.
pub static OTHER_OUTPUT: AtomicU64 = AtomicU64::new(0);

/// Live print has something on screen whose end the program's output must not overtake.
pub static SHOWING: AtomicBool = AtomicBool::new(false);

/// Longest [`suspend`] waits for live print to catch up before the program's output goes out.
const CATCH_UP: Duration = Duration::from_millis(50);

/// Live-print bytes dropped because stderr had no room.
pub static DROPPED_BYTES: AtomicU64 = AtomicU64::new(0);

/// Locks the terminal (a panic elsewhere never makes it unusable).
pub fn lock() -> std::sync::MutexGuard<'static, Screen> {
    SCREEN.lock().unwrap_or_else(|e| e.into_inner())
}

impl Screen {
    /// Queues `text` and writes what stderr takes now without blocking.
    pub fn write(&mut self, text: &str) {
        if text.is_empty() || self.broken {
            return;
        }
        if self.pending.len() + text.len() > MAX_PENDING {
            DROPPED_BYTES.fetch_add(text.len() as u64, Ordering::Relaxed);
        } else {
            self.pending.extend_from_slice(text.as_bytes());
        }
        if let Some(&last) = text.as_bytes().last() {
            self.line_open = last != b'\n';
        }
        self.flush(Duration::ZERO);
    }

    /// Writes pending bytes, waiting for room at most `budget` in total. Returns whether all went out.
    pub fn flush(&mut self, budget: Duration) -> bool {
        let deadline = Instant::now() + budget;
        while !self.pending.is_empty() && !self.broken {
            let wait = deadline.saturating_duration_since(Instant::now());
            match writable(wait) {
                Room::Yes => {}
                Room::No => return false,
                Room::Broken => self.broken = true,
            }
            if self.broken {
                break;
            }
            let n = self.pending.len().min(CHUNK);
            // SAFETY: the pointer and length describe the first `n` initialised bytes of `pending`.
            let written = unsafe { libc::write(2, self.pending.as_ptr().cast(), n) };
            if written > 0 {
                self.pending.drain(..written as usize);
            } else if written < 0 {
                let err = std::io::Error::last_os_error();
                if !matches!(
                    err.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                ) {
                    self.broken = true;
                }
            }
        }
        if self.broken {
            DROPPED_BYTES.fetch_add(self.pending.len() as u64, Ordering::Relaxed);
            self.pending.clear();
        }
        self.pending.is_empty()
    }

    /// Before other output: end an open live line and get pending live text out (waiting briefly for room; if
    /// stderr stays full, drop it rather than let it land after the newer output).
    pub fn make_way(&mut self) {
        if self.line_open {
            self.line_open = false;
            if !self.broken {
                self.pending.push(b'\n');
            }
        }
        if !self.flush(Duration::from_millis(100)) {
            DROPPED_BYTES.fetch_add(self.pending.len() as u64, Ordering::Relaxed);
            self.pending.clear();
        }
    }
}

enum Room {
    Yes,
    No,
    Broken,
}

/// Whether stderr takes a write now (or within `wait`).
fn writable(wait: Duration) -> Room {
    let mut fd = libc::pollfd {
        fd: 2,
        events: libc::POLLOUT,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fd` is one valid pollfd and we pass a count of 1.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    if n < 0 {
        return Room::No; // EINTR or similar: try again next pass
    }
    if n == 0 {
        return Room::No;
    }
    if fd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return Room::Broken;
    }
    Room::Yes
}

/// Runs `f`, which prints to the terminal, without breaking live print's lines: an open dots line is ended
/// first, and live print then follows MOOSE's rules (`Still` / `Currently` / `Finished`) for what it prints
/// next. Live print waits while `f` runs.
///
/// ```
/// perfgraph_core::suspend(|| eprintln!("iteration 3: residual 1.2e-9"));
/// ```
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    catch_up();
    let mut screen = lock();
    screen.make_way();
    let result = f();
    let _ = std::io::stderr().flush();
    OTHER_OUTPUT.fetch_add(1, Ordering::Relaxed);
    drop(screen);
    result
}

/// When live print shows something, lets it finish a pass first, so a section that ended before this output
/// gets its stats printed before it, as the order of events says. Bounded by [`CATCH_UP`].
fn catch_up() {
    // Relaxed: a stale value only costs one unneeded (bounded) wait, or one line printed a pass late.
    if !SHOWING.load(Ordering::Relaxed) || crate::runtime::shutting_down() {
        return;
    }
    // A full pass that starts after this point: the one running now may have drained before our caller's
    // last section ended.
    let target = crate::runtime::passes() + 2;
    crate::runtime::wake();
    let deadline = Instant::now() + CATCH_UP;
    while crate::runtime::passes() < target && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Writes `text` (whole lines) as other output: reports and interval statistics from the background thread.
pub fn write_other(text: &str) {
    let mut screen = lock();
    screen.make_way();
    let _ = std::io::stderr().write_all(text.as_bytes());
    OTHER_OUTPUT.fetch_add(1, Ordering::Relaxed);
}

/// An `io::Write` to stderr that cooperates with live print (see [`stderr`](crate::stderr)).
#[derive(Debug, Default, Clone, Copy)]
pub struct LiveStderr;

impl Write for LiveStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        suspend(|| std::io::stderr().write_all(buf)).map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
