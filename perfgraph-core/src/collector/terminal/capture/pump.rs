//! The stream as the forwarder sees it, and one turn of forwarding ([`Stream::pump`]): look at what the
//! stream holds (`tee`), find the last line boundary, move the whole lines to the destination (`splice`),
//! hold a partial line back in the stream until it is complete or old.

use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::{ACTIVE, BUDGET, HOLD_MAX, LOOK, PARTIAL_DELAY, Pumped, Wait};
use crate::base::sys::{self, Io, Room};
use crate::collector::terminal::Screen;

/// Empties a signal's self-pipe. Returns whether it held anything.
pub(super) fn drain_signal(fd: RawFd) -> bool {
    let mut buf = [0u8; 64];
    let mut came = false;
    while let Io::Done(_) = sys::read_fd(fd, &mut buf) {
        came = true;
    }
    came
}

/// What [`Stream::check_continued`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Continued {
    /// No SIGCONT since the last look (or none that live print still waits for).
    Unseen,
    /// SIGCONT came, and the screen knows.
    Came,
    /// The process was continued, but the program's thread that takes the signal has not run its handler
    /// yet (a busy machine may run perfgraph's thread first): the screen does not know.
    OnItsWay,
}

/// The capture's state.
pub(super) struct Stream {
    /// Read side of the pipe the program's bytes arrive in (non-blocking).
    pub read: RawFd,
    /// A pipe of our own that a look copies the stream's front into: (read end, write end).
    pub peek: (RawFd, RawFd),
    /// The pseudo-terminal's master (when the destination is a terminal): its window size follows the
    /// terminal's.
    pub master: Option<RawFd>,
    /// The destination: fd 2 as it was.
    pub dest: RawFd,
    /// Largest single write to `dest`.
    pub chunk: usize,
    /// `dest` takes `splice` (else: write what was looked at, then take it out of the stream).
    pub splice: bool,
    /// Fd 1 leads into the stream too (not only fd 2).
    pub stdout: bool,
    /// The stream's front as the last look saw it (from the first byte not yet forwarded).
    pub look: Vec<u8>,
    /// Bytes at the stream's front that are a partial line held back (they hold no newline).
    pub held: usize,
    /// When the partial line held now started to be held.
    pub held_since: Option<Instant>,
    /// The stream is over, or the capture was stopped: nothing more is forwarded.
    pub done: bool,
    /// Threads inside `suspend`: live print waits.
    pub suspended: u32,
    /// Since when live print has been waiting for the program's partial line.
    pub live_waiting: Option<Instant>,
    /// SIGWINCH's self-pipe (when the destination is a terminal).
    pub winch: Option<UnixStream>,
    /// SIGCONT's self-pipe (when the destination is a terminal): the job was stopped (Ctrl-Z) and
    /// continued (`fg`), and the shell wrote on the terminal meanwhile.
    pub cont: Option<UnixStream>,
    /// Live print has waited its most for a SIGCONT still pending (a program that blocks it everywhere) and
    /// went on, or the exit did: it does not wait again until that one is gone.
    pub cont_waited: bool,
    /// Since when live print has been waiting, on a late pass, for a SIGCONT that may be on its way.
    pub late_since: Option<Instant>,
    /// Shared with the child: perfgraph's own text left the destination mid-line.
    pub tail: &'static AtomicU64,
    /// The lifeline's write end (-1 once closed): closing it tells the child to forward what is left.
    pub lifeline: RawFd,
    /// The caught-up pipe's read end (-1 once taken): it ends when the child, told to forward what is
    /// left, has found nothing more to forward.
    pub caught_up: RawFd,
    /// For a terminal: the child's word saying it holds bytes read from the master not yet fed.
    pub feeding: Option<&'static AtomicU64>,
}

impl Stream {
    /// Whether the stream holds everything the program has written so far: always for a pipe; for a
    /// terminal, once the child has fed the stream all the pseudo-terminal had (its master is empty and
    /// the child holds nothing).
    pub fn fed(&self) -> bool {
        match (self.master, self.feeding) {
            (Some(master), Some(feeding)) => {
                // SeqCst: loaded after the poll found the master empty; pairs with the child's stores
                // (`child::feed_stream`).
                !sys::readable_now(master) && feeding.load(Ordering::SeqCst) == 0
            }
            _ => true,
        }
    }

    /// If SIGCONT came (the job was stopped and continued: the shell wrote its lines), the screen learns it
    /// now, before live print decides (the forwarder also looks, when it wakes). One still on its way is
    /// [`Continued::OnItsWay`] while live print `may_wait` for it; else the screen takes it that the job was
    /// continued, once for that signal (a program that blocks SIGCONT everywhere never runs the handler).
    pub fn check_continued(&mut self, screen: &mut Screen, may_wait: bool) -> Continued {
        let Some(cont) = &self.cont else {
            return Continued::Unseen;
        };
        let came = drain_signal(std::os::fd::AsRawFd::as_raw_fd(cont));
        if came {
            screen.resumed();
        }
        // The caller (live print, on the background thread) blocks every signal, so a SIGCONT the kernel
        // gave a program's thread shows as pending here until that thread takes it.
        let pending = sys::signal_pending(libc::SIGCONT);
        if !pending {
            self.cont_waited = false;
        }
        if pending && !self.cont_waited {
            if may_wait {
                return Continued::OnItsWay;
            }
            self.cont_waited = true;
            if !came {
                screen.resumed();
            }
            return Continued::Came;
        }
        if came {
            Continued::Came
        } else {
            Continued::Unseen
        }
    }

    /// Waits at most `max` until [`fed`](Self::fed). Returns whether it is.
    pub fn wait_fed(&self, max: std::time::Duration) -> bool {
        let deadline = Instant::now() + max;
        loop {
            if self.fed() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// One turn: forwards whole lines (and a partial line older than the delay or longer than `HOLD_MAX`)
    /// until the stream is empty or the budget is used up at a line boundary. With `all`, a partial line the
    /// program left waiting (nothing more behind it) goes out too.
    pub fn pump(&mut self, screen: &mut Screen, all: bool, wait: Wait) -> Pumped {
        let mut forwarded = 0;
        while !self.done {
            let expired = self
                .held_since
                .is_some_and(|t| t.elapsed() >= PARTIAL_DELAY);
            // Nothing new behind the held partial line: no need to look again.
            if self.held > 0 && sys::bytes_waiting(self.read) <= self.held {
                if !(all || expired) {
                    return Pumped::Held(self.held_since.unwrap_or_else(Instant::now));
                }
                if !self.forward(screen, self.held, wait) {
                    return self.stuck();
                }
                self.held = 0;
                self.held_since = None;
                continue;
            }
            match self.look() {
                Io::Done(_) => {}
                Io::End => {
                    self.done = true;
                    break;
                }
                // Empty (nothing was held, or the held bytes went meanwhile).
                _ => {
                    self.held = 0;
                    self.held_since = None;
                    return Pumped::Empty;
                }
            }
            let n = self.look.len();
            let from = self.held.min(n);
            let cut = memchr::memrchr(b'\n', &self.look[from..]).map_or(0, |i| from + i + 1);
            let upto = if expired || n - cut > HOLD_MAX {
                n
            } else {
                cut
            };
            if upto > 0 {
                if !self.forward(screen, upto, wait) {
                    return self.stuck();
                }
                forwarded += upto;
            }
            let before = self.held;
            self.held = n - upto;
            self.held_since = match self.held {
                0 => None,
                _ if upto > 0 || before == 0 => Some(Instant::now()),
                _ => self.held_since,
            };
            if forwarded >= BUDGET && upto == cut && upto > 0 {
                return Pumped::Cut;
            }
        }
        Pumped::Done
    }

    /// The forward did not finish: the destination is full, or failed.
    fn stuck(&self) -> Pumped {
        if self.done {
            Pumped::Done
        } else {
            Pumped::Blocked
        }
    }

    /// Looks at the stream's front: copies up to [`LOOK`] bytes into `look` without taking them out.
    /// [`Io::Again`]: the stream is empty; [`Io::End`]: it is over (every write end closed).
    fn look(&mut self) -> Io {
        let n = match sys::tee_pipe(self.read, self.peek.1, LOOK) {
            Io::Done(n) => n,
            Io::Refused => return Io::End,
            other => return other,
        };
        self.look.clear();
        self.look.resize(n, 0);
        let mut got = 0;
        while got < n {
            match sys::read_fd(self.peek.0, &mut self.look[got..]) {
                Io::Done(k) => got += k,
                Io::Again => {}
                Io::End | Io::Refused => break,
            }
        }
        self.look.truncate(got);
        Io::Done(got)
    }

    /// Moves the stream's first `upto` bytes (the front of `look`) to the destination, after ending an open
    /// live line. Returns false when the destination took not all of them (no room within `wait`, or it
    /// failed); what it took is out of `look` either way.
    fn forward(&mut self, screen: &mut Screen, upto: usize, wait: Wait) -> bool {
        if screen.is_broken() || !screen.clear_for_program(wait.as_duration()) {
            if screen.is_broken() {
                self.give_back();
            }
            return false;
        }
        let upto = upto.min(self.look.len());
        let mut at = 0;
        let mut deadline = Instant::now() + wait.as_duration();
        let done = loop {
            if at >= upto {
                break true;
            }
            let ms = match wait {
                Wait::Forever => -1,
                _ => deadline
                    .saturating_duration_since(Instant::now())
                    .as_millis()
                    .min(i32::MAX as u128) as i32,
            };
            match sys::room(self.dest, ms) {
                Room::Yes => {}
                Room::No if wait == Wait::Forever || Instant::now() < deadline => continue,
                Room::No => break false,
                Room::Broken => {
                    self.give_back();
                    break false;
                }
            }
            let n = (upto - at).min(self.chunk);
            match self.move_out(at, n) {
                Io::Done(w) => {
                    at += w;
                    // Relaxed: the child reads it only after this process is gone.
                    self.tail.store(0, Ordering::Relaxed);
                    screen.program_wrote(&self.look[at - w..at]);
                    if let Wait::Stall(d) = wait {
                        deadline = Instant::now() + d;
                    }
                }
                Io::Again => {}
                Io::End | Io::Refused => {
                    self.give_back();
                    break false;
                }
            }
        };
        self.look.drain(..at);
        self.held = self.held.saturating_sub(at);
        done
    }

    /// Moves `n` bytes from the stream's front (`look[at..at + n]`) to the destination: a `splice`, or where
    /// the destination takes none, a write of what was looked at and then a read that takes as much out.
    fn move_out(&mut self, at: usize, n: usize) -> Io {
        if self.splice {
            match sys::splice_out(self.read, self.dest, n) {
                Io::Refused => self.splice = false,
                other => return other,
            }
        }
        let written = sys::write_fd_raw(self.dest, &self.look[at..at + n]);
        if let Io::Done(w) = written {
            let mut sink = [0u8; 4096];
            let mut left = w;
            while left > 0 {
                match sys::read_fd(self.read, &mut sink[..left.min(4096)]) {
                    Io::Done(k) => left -= k,
                    Io::Again => {}
                    Io::End | Io::Refused => break,
                }
            }
        }
        written
    }

    /// The capture ends: the program gets the destination back on fds 1 and 2, this process forwards
    /// nothing more, and the child is told (the lifeline closes) to forward what the stream and the
    /// pseudo-terminal still hold. When the destination failed (a closed pipe, a hung-up terminal), the
    /// child's first write fails and it exits; with this process's reader closed too
    /// ([`close_reader`](Self::close_reader)), a program's write blocked on the full stream then fails with
    /// EPIPE (or SIGPIPE) as it would have on the destination, and its next writes fail there.
    pub fn give_back(&mut self) {
        self.release();
        // What the program wrote before is the child's to forward now; what it writes next goes straight to
        // the destination, so wait (at most `HANDOVER_WAIT`) until the child has forwarded the rest, or the
        // next write could overtake it. A destination that failed makes the child exit at once.
        let fd = std::mem::replace(&mut self.caught_up, -1);
        if fd >= 0 {
            forget(fd);
            sys::wait_for_end(fd, super::HANDOVER_WAIT);
            sys::close_fd(fd);
        }
    }

    /// [`give_back`](Self::give_back) without the wait: the descriptors back, the lifeline closed.
    fn release(&mut self) {
        if self.stdout {
            let _ = sys::dup_onto(self.dest, 1);
        }
        let _ = sys::dup_onto(self.dest, 2);
        self.done = true;
        // Relaxed: read under the terminal's lock by whoever acts on it.
        ACTIVE.store(false, Ordering::Relaxed);
        if self.lifeline >= 0 {
            forget(self.lifeline);
            sys::close_fd(self.lifeline);
            self.lifeline = -1;
        }
    }

    /// A normal exit: the descriptors back as [`give_back`](Self::give_back) gives them, then the caught-up
    /// pipe's read end, for the caller to wait on outside the terminal's lock (it ends once the child has
    /// forwarded what was left). `None` if the capture had ended.
    pub fn hand_over(&mut self) -> Option<RawFd> {
        if self.done {
            return None;
        }
        self.release();
        let fd = std::mem::replace(&mut self.caught_up, -1);
        forget(fd);
        (fd >= 0).then_some(fd)
    }

    /// The forwarder is leaving (`done` is set): this process no longer reads the stream.
    pub fn close_reader(&mut self) {
        for fd in [&mut self.read, &mut self.peek.0, &mut self.peek.1] {
            if *fd >= 0 {
                forget(*fd);
                sys::close_fd(*fd);
                *fd = -1;
            }
        }
    }
}

/// `fd` is closed (or handed elsewhere) by this process: a child forked from now on has nothing to close.
fn forget(fd: RawFd) {
    for slot in &super::INHERITED {
        // Relaxed: see `INHERITED`.
        let _ = slot.compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed);
    }
}
