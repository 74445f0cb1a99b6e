//! The terminal's state and its one lock: what live print, reports, warnings, the program's output through
//! [`stderr`](crate::stderr) and the capture's forwarder share. The writer never blocks on stderr: before
//! each `write` it polls the descriptor for room (a pipe nobody reads reports none), writes at most
//! [`CHUNK`] bytes (a pipe that reports room takes up to `PIPE_BUF` bytes at once), and keeps the rest for
//! the next pass, up to [`MAX_PENDING`] bytes; beyond that a pass's text is dropped whole, and live print
//! starts over on a fresh line as after other output. A closed stderr or one that returns errors (EPIPE)
//! stops live output for good; nothing else notices.
//!
//! Below the capture (which forwards the program's bytes under this lock) and [`screen`]
//! (the public ways to write: `suspend`, `stderr()`, blocks of lines), which uses both.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[cfg(feature = "capture")]
pub(crate) mod capture;
// Without the feature, stand-ins for what the collector calls: none of the capture's code is built.
#[cfg(not(feature = "capture"))]
#[path = "capture/off.rs"]
pub(crate) mod capture;
mod partial;
pub(crate) mod screen;

use crate::base::sys::{self, Room};
use crate::base::{clock, poison, process};
use partial::Partial;

/// Largest single write: `PIPE_BUF` on Linux, which a pipe with room takes without blocking.
const CHUNK: usize = 4096;
/// Live text kept while stderr has no room; past this, new text is dropped (and counted).
const MAX_PENDING: usize = 64 * 1024;

/// The shortest stop (Ctrl-Z, then `fg`) live print tells from a process merely not run for a while: 0.3 s,
/// less than a person takes to type `fg`. A pass that much later than asked counts as after a stop
/// (`collector::live`); a write that much before SIGCONT is seen was made before the stop.
pub(crate) const SHORTEST_STOP: Duration = Duration::from_millis(300);
/// Longest a block of other output (a report) or a warning waits for stderr to take more of it: the wait
/// starts over whenever stderr takes something, so a slow reader gets everything and a dead one costs this
/// once.
pub const STALL: Duration = Duration::from_millis(100);
/// Longest the final live lines wait for stderr at process exit.
pub const EXIT_FLUSH: Duration = Duration::from_millis(100);
/// Longest [`suspend`](crate::suspend) waits for live print to catch up before the program's output goes out.
pub const CATCH_UP: Duration = Duration::from_millis(50);

/// Shared state of the terminal.
///
/// Invariant: `pending` holds bytes accepted but not yet written, in order; `last_queued` is the last byte
/// accepted (written or pending), `last_written` the last byte stderr took.
#[derive(Debug)]
pub struct Screen {
    pending: Vec<u8>,
    /// Live print's line is open (its last byte is not a newline): other output must end it first.
    line_open: bool,
    /// Live text was dropped; the terminal may hold part of a line: the next text starts on a new line.
    torn: bool,
    /// The program's own output (through [`stderr`](crate::stderr)) ended without a newline: live print's
    /// next text starts on a new line.
    foreign_open: bool,
    last_queued: u8,
    last_written: u8,
    /// When stderr last took bytes (`None`: never).
    written_at: Option<Instant>,
    /// stderr failed (closed, EPIPE): live output stops.
    broken: bool,
    /// The program's partial line on a terminal under capture, for redrawing it below live print's text.
    pub(crate) partial: Partial,
}

/// The one lock around the terminal.
static SCREEN: Mutex<Screen> = Mutex::new(Screen {
    pending: Vec::new(),
    line_open: false,
    torn: false,
    foreign_open: false,
    last_queued: b'\n',
    last_written: b'\n',
    written_at: None,
    broken: false,
    partial: Partial::new(),
});

/// The atomic mirror of `Screen::last_written != b'\n'`: the terminal, as perfgraph last wrote to it (live
/// print, or the program through [`stderr`](crate::stderr)), ends in the middle of a line. What the SIGABRT
/// handler (`collector::signals`) reads, since it may not take the lock: an abort then ends that line, so
/// stderr does not stop mid-line. It mirrors the bytes stderr took, not live print's `line_open`, which also
/// counts queued bytes that an abort loses and misses a line torn by dropped text.
///
/// Set before a write that may leave the line open, and to the exact value after it ([`writing`],
/// `Screen::wrote`): a reader of stderr may see the bytes and make the program abort before the writing
/// thread is back from `write`. A signal in that window costs at most one empty line. Relaxed: the handler
/// runs on any thread and orders nothing by it.
pub static MID_LINE: AtomicBool = AtomicBool::new(false);

/// About to write `bytes` to stderr: if they may end the terminal mid-line, say so first ([`MID_LINE`]).
pub fn writing(bytes: &[u8]) {
    if bytes.last().is_some_and(|&b| b != b'\n') {
        MID_LINE.store(true, Ordering::Relaxed);
    }
}

/// When other output (through [`suspend`](crate::suspend), [`stderr`](crate::stderr) or a report) last
/// reached the terminal, in clock ticks (0: never); the printer compares it between passes.
pub static OTHER_OUTPUT_AT: AtomicU64 = AtomicU64::new(0);

/// Notes that other output has just reached the terminal.
pub fn other_output() {
    // Before the first section there is no clock yet, and nothing for live print to say `Currently` about.
    if process::started() {
        // Relaxed: the printer reads it on its next pass; the screen lock orders the output itself.
        OTHER_OUTPUT_AT.fetch_max(clock::now().0.max(1), Ordering::Relaxed);
    }
}

/// Locks the terminal (a panic elsewhere never makes it unusable).
pub fn lock() -> std::sync::MutexGuard<'static, Screen> {
    poison::lock(&SCREEN)
}

impl Screen {
    fn queue(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.pending.extend_from_slice(bytes);
            self.last_queued = last;
        }
    }

    /// stderr took bytes ending in `last`, in a write begun `at`.
    fn wrote(&mut self, last: u8, at: Instant) {
        self.last_written = last;
        self.written_at = Some(at);
        MID_LINE.store(last != b'\n', Ordering::Relaxed);
    }

    /// Starts a new line unless the terminal is at the start of one.
    fn newline(&mut self) {
        if self.last_queued != b'\n' {
            self.queue(b"\n");
        }
    }

    /// Queues live print's `text` and writes what stderr takes now, without blocking. Returns false when the
    /// terminal no longer ends with what live print decided: the text was dropped (stderr has taken nothing
    /// for a while), or the program's partial line was redrawn after it.
    pub fn write_live(&mut self, text: &str) -> bool {
        if text.is_empty() || self.broken {
            return true;
        }
        if self.pending.len() + text.len() + 1 > MAX_PENDING {
            self.torn = true;
            self.line_open = false;
            return false;
        }
        if self.foreign_open && !self.torn {
            let fd = process::output_fd();
            if let Some(line) = self.partial.redrawable(fd).map(<[u8]>::to_vec) {
                // On a terminal: clear the program's partial line, print, and draw it again below.
                self.queue(b"\r\x1b[K");
                self.queue(text.as_bytes());
                if !text.ends_with('\n') {
                    self.queue(b"\n");
                }
                self.queue(&line);
                self.line_open = false;
                self.flush(Duration::ZERO);
                return false;
            }
        }
        self.settle_unknown_row();
        if self.torn || self.foreign_open {
            self.newline();
            self.torn = false;
            self.foreign_open = false;
        }
        self.queue(text.as_bytes());
        self.line_open = self.last_queued != b'\n';
        self.flush(Duration::ZERO);
        true
    }

    /// Before perfgraph's own text, while the start of the cursor's row is not known (the capture just
    /// started on a terminal, and the program has written nothing since): starts the text on a row of its
    /// own if the cursor is not at the start of one ([`partial::fresh_row`]), so it is never written after
    /// what the program left unfinished before the capture. (When the program has written since, the
    /// cursor is mid-row and the usual new line follows.)
    fn settle_unknown_row(&mut self) {
        if !self.partial.unknown() {
            return;
        }
        if !self.foreign_open
            && !self.torn
            && !self.line_open
            && let Some(cols) = sys::window_cols(process::output_fd())
        {
            self.queue(&partial::fresh_row(cols));
        }
        self.partial.row_known();
    }

    /// The capture starts forwarding to `terminal` or not: on a terminal the start of the cursor's row
    /// is not known; elsewhere, `open` tells whether the program left a line unfinished there (a file's
    /// last byte), so live print's first text starts on a new line.
    #[cfg(feature = "capture")]
    pub(crate) fn capture_started(&mut self, terminal: bool, open: bool) {
        if terminal {
            self.partial.start_unknown();
        } else if open && self.last_queued == b'\n' {
            self.foreign_open = true;
            self.last_queued = b' ';
        }
    }

    /// How much longer live print's first line waits for the row to be known on a terminal
    /// ([`partial::FIRST_LINE_WAIT`]).
    pub(crate) fn first_line_wait(&self) -> Option<Duration> {
        self.partial.first_line_wait()
    }

    /// Writes pending bytes, waiting for room at most `budget` in total. Returns whether all went out.
    pub fn flush(&mut self, budget: Duration) -> bool {
        self.write_out(budget, false)
    }

    /// Writes pending bytes; waits for room at most `wait`, in total (`stall == false`) or since stderr
    /// last took something (`stall == true`). Returns whether all went out.
    fn write_out(&mut self, wait: Duration, stall: bool) -> bool {
        let mut deadline = Instant::now() + wait;
        while !self.pending.is_empty() && !self.broken {
            let left = deadline.saturating_duration_since(Instant::now());
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            match sys::stderr_room(ms) {
                Room::Yes => {}
                Room::No => return false,
                Room::Broken => {
                    self.broken = true;
                    break;
                }
            }
            let n = self.pending.len().min(CHUNK);
            writing(&self.pending[..n]);
            // Before the call: a stop that lands while it returns finds the bytes out already.
            let at = Instant::now();
            match sys::write_stderr(&self.pending[..n]) {
                Ok(0) => {}
                Ok(written) => {
                    self.wrote(self.pending[written - 1], at);
                    self.pending.drain(..written);
                    if stall {
                        deadline = Instant::now() + wait;
                    }
                }
                Err(err) => {
                    if !matches!(
                        err.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                    ) {
                        self.broken = true;
                    }
                }
            }
        }
        if self.broken {
            self.discard();
        }
        self.pending.is_empty()
    }

    /// Drops what stderr did not take (counted); the terminal may now end in part of a line.
    fn discard(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.pending.clear();
        self.last_queued = self.last_written;
        self.torn = self.last_written != b'\n';
        self.line_open = false;
    }

    /// Before other output: end an open live line and get pending live text out (waiting briefly for room; if
    /// stderr stays full, drop it rather than let it land after the newer output).
    pub fn make_way(&mut self) {
        if self.line_open || self.torn {
            self.newline();
            self.line_open = false;
            self.torn = false;
        }
        if !self.write_out(STALL, true) {
            self.discard();
        }
    }

    /// Before the program's own bytes (forwarded by the capture): end an open live line and get pending
    /// live text out, waiting at most `wait` (since stderr last took something). False: stderr did not take
    /// it all, and the program's bytes must wait too.
    #[cfg(feature = "capture")]
    pub(crate) fn clear_for_program(&mut self, wait: Duration) -> bool {
        if self.line_open || self.torn {
            self.newline();
            self.line_open = false;
            self.torn = false;
        }
        self.write_out(wait, true)
    }

    /// The program's own `bytes` reached the terminal (forwarded by the capture, or written through
    /// [`stderr`](crate::stderr)): live print's next text starts on a new line (or, on a terminal, above the
    /// redrawn partial line) if they left a line open, and says `Still` / `Currently`.
    #[cfg(feature = "capture")]
    pub(crate) fn program_wrote(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.partial.wrote(bytes);
        self.foreign_open = last != b'\n';
        self.last_queued = last;
        self.last_written = last;
        self.written_at = Some(Instant::now());
        other_output();
    }

    /// The process was stopped (Ctrl-Z) and continued (`fg`): the shell wrote its own lines on the terminal
    /// meanwhile and left the cursor at the start of a line. Live print's next text starts there, as after
    /// other output (`Still` / `Finished` lines, not stats appended to its old line).
    #[cfg(feature = "capture")]
    pub(crate) fn resumed(&mut self) {
        other_output();
        if !self.pending.is_empty() {
            // Text still waiting for room goes out where it was meant to.
            return;
        }
        self.line_open = false;
        self.foreign_open = false;
        // SIGCONT's handler runs on one of the program's threads, which a busy machine may run later than
        // perfgraph's. Live print waits while the signal is pending (`capture::before_live`), but not in the
        // moment between the handler taking it and writing the self-pipe, nor after a program that blocks it
        // everywhere made it give up: bytes written then (a dot) came after the shell's lines and left the
        // line open. A write that recent may have come before the stop or after it: the next text starts on
        // a new line (one empty line at worst) rather than risk stats appended to a dot.
        let maybe_after_stop = self.last_written != b'\n'
            && self
                .written_at
                .is_some_and(|at| at.elapsed() < SHORTEST_STOP);
        if maybe_after_stop {
            self.torn = true;
            return;
        }
        self.torn = false;
        self.last_queued = b'\n';
        self.last_written = b'\n';
        MID_LINE.store(false, Ordering::Relaxed);
    }

    /// The process may have been stopped and continued, or only not run for a while (a late pass, with no
    /// SIGCONT to tell): live print's next text starts on a new line if its line was open, an empty line
    /// at worst.
    pub(crate) fn may_have_stopped(&mut self) {
        if self.line_open {
            self.line_open = false;
            self.torn = true;
        }
    }

    /// stderr failed (closed, EPIPE): nothing more goes out.
    #[cfg(feature = "capture")]
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// The program's own bytes, ending in `last`, were just written to stderr directly (through
    /// [`stderr`](crate::stderr)): live print's next text starts on a new line if they left a line open.
    pub(crate) fn stderr_wrote(&mut self, last: u8) {
        self.foreign_open = last != b'\n';
        self.last_queued = last;
        self.wrote(last, Instant::now());
    }

    /// Ends a line the program's forwarded bytes left open, before other output.
    pub(crate) fn end_program_line(&mut self) {
        if self.foreign_open {
            self.newline();
            self.foreign_open = false;
        }
    }

    /// Writes `text` (whole lines) as other output after ending an open live line, without ever blocking for
    /// long: what stderr does not take within [`STALL`] of its last progress is dropped.
    pub(crate) fn write_lines(&mut self, text: &str) {
        self.settle_unknown_row();
        self.make_way();
        if self.broken {
            return;
        }
        self.queue(text.as_bytes());
        if !self.write_out(STALL, true) {
            self.discard();
        }
    }
}

/// Whether this thread is inside [`suspend`](screen::suspend) (holds the screen): a nested
/// `suspend` or [`stderr`](crate::stderr) write just runs. (The flag lives in `base::process`, where a
/// recording thread that ends a shown section reads it too.)
pub fn inside() -> bool {
    process::holds_screen()
}

/// Marks this thread as inside `suspend` (or no longer).
pub fn set_inside(inside: bool) {
    process::set_holds_screen(inside);
}
