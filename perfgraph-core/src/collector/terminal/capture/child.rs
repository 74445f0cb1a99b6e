//! The child that outlives the process: forked (twice, so it is nobody's child in the program) at the
//! capture's start. It keeps the stream's read end, the destination, the read end of a "lifeline" pipe
//! whose write end only the process holds, and for a terminal the pseudo-terminal's master and the
//! stream's write end; it closes every other descriptor and ignores every signal it can.
//!
//! For a terminal it feeds the stream from the master while the process lives (what the program writes to
//! the pseudo-terminal reaches the process's forwarder through the stream, which can be looked at without
//! taking bytes out). Otherwise it only waits. When the lifeline ends (the process is gone: it exited,
//! aborted, was killed, or replaced itself by `exec`), it forwards what the stream still holds, then (for a
//! terminal) what it had read but not yet fed and the rest of the master's output, until every write end
//! is closed (a pipe's end of input; EIO from the master), and exits.
//!
//! It runs in a copy of a process that may have had other threads (holding the allocator's lock, say), so
//! it makes only async-signal-safe calls (`read`, `write`, `poll`, `close`, `sigaction`, `_exit`) on fixed
//! buffers, allocates nothing and cannot panic.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::base::sys::{self, Io, Want};

/// The descriptors of the capture, as the child gets them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fds {
    /// The stream's read end (non-blocking: the flag is shared with the process's descriptor).
    pub stream: RawFd,
    /// The stream's write end.
    pub feed: RawFd,
    /// The pseudo-terminal's master, or -1 when the destination is no terminal.
    pub master: RawFd,
    /// What the program writes to: the pseudo-terminal's slave, or `feed`.
    pub slave: RawFd,
    /// The destination.
    pub dest: RawFd,
    /// The lifeline: (read end, write end).
    pub lifeline: (RawFd, RawFd),
    /// The caught-up pipe: (read end, write end). The child closes its write end once it has forwarded
    /// everything that was written before the lifeline ended.
    pub caught_up: (RawFd, RawFd),
    /// The limit on open descriptors, read before the fork (for closing the others where the kernel has
    /// no `close_range`).
    pub limit: u32,
}

/// Words of memory the child shares with the process.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shared {
    /// perfgraph's own text left the destination mid-line (the process stores, the child reads once the
    /// process is gone).
    pub tail: &'static AtomicU64,
    /// 1 while the child holds bytes it read from the master and has not fed into the stream yet (set
    /// before each read): with the master empty and this 0, everything the program wrote to the
    /// pseudo-terminal is in the stream.
    pub feeding: &'static AtomicU64,
}

/// The child's whole life. Never returns.
pub(super) fn run((fds, shared): (Fds, Shared)) -> ! {
    let tail = shared.tail;
    sys::ignore_signals();
    let terminal = fds.master >= 0;
    let (master, feed) = if terminal {
        (fds.master, fds.feed)
    } else {
        (-1, -1)
    };
    sys::close_other_fds(
        [
            fds.stream,
            fds.dest,
            fds.lifeline.0,
            master,
            feed,
            fds.caught_up.1,
        ],
        fds.limit,
    );
    let mut buf = [0u8; 4096];
    let mut pending = (0, 0);
    if terminal {
        pending = feed_stream(fds.lifeline.0, master, feed, &mut buf, shared.feeding);
        // The stream now ends after what it holds.
        sys::close_fd(feed);
    } else {
        let mut byte = [0u8; 1];
        while !matches!(sys::read_fd(fds.lifeline.0, &mut byte), Io::End) {}
    }
    sys::close_fd(fds.lifeline.0);
    // perfgraph's own text left the destination mid-line (an open live line): the program's bytes start on
    // a new line. Relaxed: the process that stored it is gone.
    let mut newline = tail.load(Ordering::Relaxed) != 0;
    let mut out = [0u8; 4096];
    // Told once everything written before the lifeline ended is out: the stream for a pipe, and for a
    // terminal the stream, what was read but not fed, then the master (whose poll sees every write to the
    // slave that has returned).
    let mut caught_up = fds.caught_up.1;
    if terminal {
        let mut none = -1;
        if drain(fds.stream, fds.dest, &mut newline, &mut out, &mut none) {
            let (from, to) = pending;
            if put(fds.dest, &mut newline, buf.get(from..to).unwrap_or(&[])) {
                drain(master, fds.dest, &mut newline, &mut out, &mut caught_up);
            }
        }
    } else {
        drain(fds.stream, fds.dest, &mut newline, &mut out, &mut caught_up);
    }
    sys::exit_now(0)
}

/// While the process lives (until `lifeline` ends), copies what the program writes to the pseudo-terminal
/// (`master`) into the stream (`feed`). Returns what it had read but not yet fed: `buf[from..to]`.
fn feed_stream(
    lifeline: RawFd,
    master: RawFd,
    feed: RawFd,
    buf: &mut [u8; 4096],
    feeding: &AtomicU64,
) -> (usize, usize) {
    let (mut from, mut to) = (0, 0);
    let mut master_open = true;
    loop {
        let ready = if from < to {
            sys::poll_fds(&[(lifeline, Want::Read), (feed, Want::Write)], -1)
        } else if master_open {
            sys::poll_fds(&[(lifeline, Want::Read), (master, Want::Read)], -1)
        } else {
            sys::poll_fds(&[(lifeline, Want::Read)], -1)
        };
        if ready & 1 != 0 {
            let mut byte = [0u8; 1];
            if sys::read_fd(lifeline, &mut byte) == Io::End {
                return (from, to);
            }
        }
        if ready & 2 == 0 {
            continue;
        }
        if from < to {
            match sys::write_fd_raw(feed, buf.get(from..to).unwrap_or(&[])) {
                Io::Done(n) => from += n,
                Io::Again => {}
                // Nobody reads the stream any more (cannot happen while we hold its read end).
                Io::End | Io::Refused => return (from, to),
            }
            if from >= to {
                // SeqCst, as below.
                feeding.store(0, Ordering::SeqCst);
            }
        } else {
            // SeqCst: stored before the read that empties the master, so a process that then finds the
            // master empty and loads this (`Stream::fed`) sees 1 until the bytes are in the stream.
            feeding.store(1, Ordering::SeqCst);
            match sys::read_fd(master, buf) {
                Io::Done(n) => (from, to) = (0, n),
                Io::Again => feeding.store(0, Ordering::SeqCst),
                // Every slave is closed (the program closed fds 1 and 2): nothing more will come.
                Io::End | Io::Refused => {
                    feeding.store(0, Ordering::SeqCst);
                    master_open = false;
                }
            }
        }
    }
}

/// Forwards `from` to `dest` until `from` ends. Returns false when `dest` failed. The first time `from`
/// has nothing to read, `caught_up` (if not -1) is closed, and set to -1.
fn drain(
    from: RawFd,
    dest: RawFd,
    newline: &mut bool,
    buf: &mut [u8; 4096],
    caught_up: &mut RawFd,
) -> bool {
    loop {
        if *caught_up >= 0 && sys::poll_fds(&[(from, Want::Read)], 0) == 0 {
            sys::close_fd(*caught_up);
            *caught_up = -1;
        }
        match sys::read_fd(from, buf) {
            Io::Done(n) => {
                if !put(dest, newline, buf.get(..n).unwrap_or(&[])) {
                    return false;
                }
            }
            Io::Again => {
                sys::poll_fds(&[(from, Want::Read)], -1);
            }
            Io::End | Io::Refused => return true,
        }
    }
}

/// Writes all of `bytes` to `dest` (after a newline, once, if `newline` asks for one and there are bytes),
/// waiting for room as long as it takes. Returns false when `dest` fails.
fn put(dest: RawFd, newline: &mut bool, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    if *newline {
        *newline = false;
        if !put(dest, newline, b"\n") {
            return false;
        }
    }
    let mut at = 0;
    while let Some(rest) = bytes.get(at..).filter(|r| !r.is_empty()) {
        match sys::write_fd_raw(dest, rest) {
            Io::Done(n) => at += n,
            Io::Again => {
                sys::poll_fds(&[(dest, Want::Write)], -1);
            }
            Io::End | Io::Refused => return false,
        }
    }
    true
}
