//! Capture of the program's own output (`PERFGRAPH_CAPTURE`): perfgraph takes over fds 1 and 2, forwards the
//! program's bytes to where they were going, and puts its own lines only at the program's line boundaries.
//!
//! At the runtime's start ([`start()`]) the destination is kept as a new descriptor (a `dup` of fd 2), and
//! perfgraph's own lines go there from then on ([`process::output_fd`](crate::base::process::output_fd)).
//! The program gets a stream in its place, dup'ed onto fd 2 (and fd 1 when it led to the same place): a
//! pseudo-terminal when the destination is a terminal (so `isatty` stays true and colour detection keeps
//! working; the terminal's settings and window size are copied to it, and SIGWINCH copies the size again),
//! a pipe otherwise.
//!
//! A thread of ours (`perfgraph-capture`) reads that stream and forwards it under the terminal's lock, as
//! other output: it ends an open live line first and tells live print that other output came (so it says
//! `Still` / `Currently`). Whole lines go out at once; a partial line (`print!` without a newline) is held
//! until [`PARTIAL_DELAY`] has passed, then goes out as it is, and live print's next line starts on a fresh
//! line. Whoever takes the lock to write (live print, a report, `suspend`, the program's `stderr()` writes)
//! first forwards what the program wrote before ([`before_live`], [`flush_all`]), so nothing perfgraph
//! writes overtakes it; live print waits while the program holds a partial line younger than the delay.
//! What the program wrote before the start went straight out: on a terminal live print's first line waits
//! a moment for the program's next bytes, which tell what the cursor's row holds (`terminal::partial`).
//!
//! The forwarder never takes the program's bytes out of the stream before they are at the destination: it
//! looks at them with `tee` (a copy into a pipe of its own) to find the line boundaries, and moves them
//! to the destination with `splice`, inside the kernel. A partial line being held back stays in the
//! stream. So when the process dies in any way (abort, a fault, SIGKILL), every byte is still in the stream
//! or already out, and a child process forked at the start ([`child`]) forwards what the stream still holds
//! once the process is gone, until every write end of it is closed. For a terminal the child also feeds the
//! pipe from the pseudo-terminal all along (a pseudo-terminal cannot be looked at without taking the bytes
//! out), so that step is not in the process that dies either. Nothing the program wrote is lost or
//! reordered. (Where the destination takes no `splice`, the forwarder writes what it looked at and then
//! takes it out of the stream: a death between the two repeats those bytes.)

mod child;
mod pump;
mod start;

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{self as terminal, Screen};
use crate::base::config::CaptureMode;
use crate::base::poison;
use crate::base::sys::{self, Io, Kind, Room, Target};
use pump::{Continued, Stream};

/// The runtime's start: notes the capture mode for the first live line ([`before_first_line`]), which
/// decides and starts the capture; nothing is touched before that. (Built without the `capture` feature,
/// `off.rs` stands in for this module.)
pub(crate) fn start(mode: CaptureMode) -> Option<String> {
    if mode != CaptureMode::Off {
        *poison::lock(&PLANNED) = Some(mode);
    }
    None
}

/// How long a partial line the program leaves waiting (`print!` without a newline) is held back before it
/// goes out as it is; live print waits for it at most this long.
pub const PARTIAL_DELAY: Duration = Duration::from_millis(50);
/// Most bytes one look at the stream copies (a pipe's default capacity).
const LOOK: usize = 64 * 1024;
/// Longest partial line held back; a longer one goes out at once.
const HOLD_MAX: usize = 32 * 1024;
/// What one turn of forwarding writes at least before it may stop at a line boundary and let others
/// write: more than the stream holds, so everything the program wrote before the turn began goes out in it.
const BUDGET: usize = 256 * 1024;
/// Largest write to a terminal or socket: `PIPE_BUF`, which one that reports room takes without blocking
/// for long.
const CHUNK: usize = 4096;
/// Largest write to a pipe (non-blocking splice) or a regular file (which never blocks).
const BIG_CHUNK: usize = 64 * 1024;
/// How often the forwarder looks whether a held partial line got more bytes (a pipe that holds them
/// cannot be waited on for *more*).
const HOLD_POLL: Duration = Duration::from_millis(2);

/// Whether the program's output is captured now.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The capture mode in force, until the first live line decides whether to capture ([`before_first_line`]):
/// `None` once decided (or when capture is off).
static PLANNED: Mutex<Option<CaptureMode>> = Mutex::new(None);

/// Longest live print waits in all for the program to end its partial lines before it interrupts one: a
/// program that always has one pending (two-part writes, a bar redrawn without pause) still sees live
/// lines. Each partial line gets its own [`PARTIAL_DELAY`] within this.
const LIVE_WAIT_MAX: Duration = Duration::from_secs(1);
/// Longest a normal exit waits for the forwarder child to have forwarded what the program wrote before
/// the exit (the destination taking nothing for this long: a terminal stopped with Ctrl-S, a pipe nobody
/// reads). The child still forwards the rest afterwards.
const HANDOVER_WAIT: Duration = Duration::from_secs(2);
/// Longest a writer that would wait for the destination as long as it takes waits for the child to feed
/// the stream what the program wrote to the pseudo-terminal (a program that writes without pause keeps
/// the child busy: past this, what is in the stream goes out first and the rest after).
const FED_WAIT_FOREVER: Duration = Duration::from_secs(1);

/// The capture's state. Locked only while the terminal's lock is held (every function here takes the
/// `Screen` as proof), so the order is always screen, then stream.
static STREAM: Mutex<Option<Stream>> = Mutex::new(None);

/// Whether the program's output is captured now (after [`start()`], until the destination failed).
pub(crate) fn active() -> bool {
    // Relaxed: set under the terminal's lock; callers that act on it take that lock.
    ACTIVE.load(Ordering::Relaxed)
}

/// In a child forked after the start: the capture is the parent's. The child's fds 1 and 2 still lead into
/// the program's stream, which the parent's forwarder forwards; nothing in the child touches the stream or
/// the parent's forwarder (there is no forwarder thread in it). Async-signal-safe: one atomic store.
pub(crate) fn forget_in_child() {
    ACTIVE.store(false, Ordering::Relaxed);
    // The parent's own ends of the capture are not the child's: holding them would keep the forwarder
    // child waiting for the parent after the parent is gone (the lifeline), or keep a pipe's reader alive.
    for fd in &INHERITED {
        let fd = fd.swap(-1, Ordering::Relaxed);
        if fd >= 0 {
            sys::close_fd(fd);
        }
    }
}

/// The descriptors of the capture that only this process may hold (the lifeline's write end, the
/// caught-up pipe's read end, the stream's read end, the look pipe, the pseudo-terminal's master): closed
/// in a child forked after the start ([`forget_in_child`], async-signal-safe). -1: none. Relaxed: set
/// under the terminal's lock before anything is forwarded; a fork reads them in the forking thread.
static INHERITED: [AtomicI32; 6] = [const { AtomicI32::new(-1) }; 6];

/// How long a writer may wait for the destination to take the program's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Not at all: what does not go out now stays in the stream.
    No,
    /// At most this long since the destination last took something.
    Stall(Duration),
    /// As long as it takes (the program's own writes would block as long).
    Forever,
}

impl Wait {
    fn as_duration(self) -> Duration {
        match self {
            Wait::No => Duration::ZERO,
            Wait::Stall(d) => d,
            Wait::Forever => Duration::from_secs(86_400),
        }
    }
}

/// How a turn of forwarding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pumped {
    /// The stream is empty and nothing is held.
    Empty,
    /// The budget is used up, at a line boundary; the stream may hold more.
    Cut,
    /// The stream is empty but a partial line is held, since then.
    Held(Instant),
    /// The destination takes nothing now.
    Blocked,
    /// The capture is over (every write end closed, the destination failed, or stopped at exit).
    Done,
}

/// How long a late pass waits for SIGCONT's self-pipe before live print takes it that the process was not
/// stopped, only not run (see [`before_live`]).
const LATE_WAIT: Duration = Duration::from_millis(50);

/// Whether the capture learns of a stop (Ctrl-Z, then `fg`) from SIGCONT: it is on, on a terminal. Without
/// it, live print can only guess from a late pass.
pub(crate) fn sees_stops() -> bool {
    active()
        && stream()
            .as_ref()
            .is_some_and(|s| !s.done && s.cont.is_some())
}

fn stream() -> MutexGuard<'static, Option<Stream>> {
    poison::lock(&STREAM)
}

/// Live print is about to decide and write (`screen` held): forwards what the program wrote first. Returns
/// how long live print should wait instead, while the program has the floor: a partial line younger than
/// [`PARTIAL_DELAY`] (live print waits for it at most that long in all), a thread inside `suspend`, or a
/// destination with no room for the program's bytes, or a SIGCONT on its way. `None`: live print may write
/// now. `late`: this pass came far later than asked, as after a stop (Ctrl-Z, `fg`), or on a machine too busy
/// to run it.
pub(crate) fn before_live(screen: &mut Screen, late: bool) -> Option<Duration> {
    if !active() {
        return None;
    }
    let mut guard = stream();
    let s = guard.as_mut()?;
    if s.done {
        return None;
    }
    // Each partial line gets its whole delay (`pump` lets one out once it is older); the total wait only
    // bounds a program that never stops having one.
    let waited = s.live_waiting.map_or(Duration::ZERO, |t| t.elapsed());
    let force = waited >= LIVE_WAIT_MAX;
    // For a terminal, what the program wrote may still be on its way into the stream (the child feeds
    // it): live print waits for it, so that nothing it prints overtakes the program's earlier bytes.
    if !force && !s.wait_fed(Duration::from_millis(2)) {
        s.live_waiting.get_or_insert_with(Instant::now);
        return Some(Duration::from_millis(1));
    }
    let busy = match s.pump(screen, force, Wait::No) {
        Pumped::Empty | Pumped::Cut | Pumped::Done => None,
        Pumped::Held(since) => {
            let due = PARTIAL_DELAY.saturating_sub(since.elapsed());
            Some(due.min(LIVE_WAIT_MAX.saturating_sub(waited)))
        }
        Pumped::Blocked => Some(Duration::from_millis(10)),
    };
    let busy = if s.suspended > 0 {
        Some(Duration::from_millis(10))
    } else {
        busy
    };
    // Last, right before live print decides and writes (the waits above are where a Ctrl-Z most likely
    // lands): whether the job was stopped and continued meanwhile. Until the program's thread has run
    // SIGCONT's handler the screen does not know that the shell wrote its lines, so live print waits for
    // it (a dot written now would follow them as if on its old line). A program that blocks SIGCONT
    // everywhere never runs the handler: after the longest wait, the screen takes it that the job was
    // continued, once. A late pass with no SIGCONT in sight may be one whose handler has taken the signal
    // and not yet written the self-pipe: live print gives it [`LATE_WAIT`], after which the pass was
    // merely late (a busy machine) and the line is as live print left it.
    let busy = match busy {
        None => match s.check_continued(screen, !force) {
            Continued::OnItsWay => Some(Duration::from_millis(1)),
            Continued::Unseen if late && s.cont.is_some() => {
                let since = *s.late_since.get_or_insert_with(Instant::now);
                (since.elapsed() < LATE_WAIT).then_some(Duration::from_millis(1))
            }
            Continued::Unseen | Continued::Came => None,
        },
        busy => busy,
    };
    if busy.is_none() {
        s.late_since = None;
    }
    match busy {
        None => s.live_waiting = None,
        Some(_) => {
            s.live_waiting.get_or_insert_with(Instant::now);
        }
    }
    busy.map(|d| d.max(Duration::from_millis(1)))
}

/// At exit, when live print can wait no more: a SIGCONT that came is told to the screen, and one still on
/// its way (its handler not run) too.
pub(crate) fn settle_stop(screen: &mut Screen) {
    if !active() {
        return;
    }
    if let Some(s) = stream().as_mut()
        && !s.done
    {
        s.check_continued(screen, false);
    }
}

/// Forwards everything the program wrote, its partial line included (`screen` held): before perfgraph's
/// own blocks, before the program's `stderr()` writes and around `suspend`, at exit. Returns false if the
/// destination did not take it all within `wait`.
pub(crate) fn flush_all(screen: &mut Screen, wait: Wait) -> bool {
    if !active() {
        return true;
    }
    let mut guard = stream();
    let Some(s) = guard.as_mut() else {
        return true;
    };
    // What the program wrote before this call is in the stream first (for a terminal, the child feeds it).
    s.wait_fed(match wait {
        Wait::No => Duration::ZERO,
        Wait::Stall(d) => d,
        Wait::Forever => FED_WAIT_FOREVER,
    });
    // Stopping at the budget is enough: it is more than the stream held when this began.
    s.pump(screen, true, wait) != Pumped::Blocked
}

/// A thread enters (`true`) or leaves `suspend` (`screen` held): live print waits while any is inside.
pub(crate) fn set_suspended(_screen: &mut Screen, inside: bool) {
    if let Some(s) = stream().as_mut() {
        if inside {
            s.suspended += 1;
        } else {
            s.suspended = s.suspended.saturating_sub(1);
        }
    }
}

/// Writes the program's `bytes` (its [`stderr`](crate::stderr) writes) straight to the destination, after
/// what it wrote to the stream before (`screen` held, [`flush_all`] done). Blocks as the program's own write
/// would.
pub(crate) fn write_program(screen: &mut Screen, bytes: &[u8]) -> std::io::Result<()> {
    let mut guard = stream();
    let Some(s) = guard.as_mut() else {
        return Ok(());
    };
    let mut at = 0;
    while at < bytes.len() {
        match sys::write_fd_raw(s.dest, &bytes[at..]) {
            Io::Done(n) => {
                at += n;
                // Relaxed: the child reads it only after this process is gone.
                s.tail.store(0, Ordering::Relaxed);
                screen.program_wrote(&bytes[at - n..at]);
            }
            Io::Again => {
                if sys::room(s.dest, -1) == Room::Broken {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
            }
            Io::End | Io::Refused => return Err(std::io::Error::last_os_error()),
        }
    }
    Ok(())
}

/// At a normal exit, after the final pass: forwards what is left, gives the program its descriptors back
/// (what it writes from now on, such as C's `stdio` buffers flushed after the exit handlers, goes straight
/// to the destination), and waits until the forwarder child has forwarded what the stream and the
/// pseudo-terminal still held, so everything the program wrote is at its destination before the process
/// can be reaped, and a shell's next line comes after it. The wait gives up after [`HANDOVER_WAIT`] (a
/// destination that takes nothing); the child goes on forwarding.
pub(crate) fn stop() {
    if !active() {
        return;
    }
    let caught_up = {
        let mut screen = terminal::lock();
        flush_all(&mut screen, Wait::Stall(terminal::EXIT_FLUSH));
        stream().as_mut().and_then(|s| s.hand_over())
    };
    if let Some(fd) = caught_up {
        sys::wait_for_end(fd, HANDOVER_WAIT);
        sys::close_fd(fd);
    }
}

/// Before live print writes its first line (`screen` held): starts capturing, if the mode in force and
/// where fds 1 and 2 lead now ask for it. Until then the program's descriptors are untouched, so a program
/// that never shows a live line (a short run, a test, `prog | head`) runs exactly as without perfgraph.
/// Returns a warning when `PERFGRAPH_CAPTURE=on` could not capture.
pub(crate) fn before_first_line(screen: &mut Screen) -> Option<String> {
    let mode = poison::lock(&PLANNED).take()?;
    start::start_now(screen, mode)
}

/// Whether to capture, given where fd 1 (`out`) and fd 2 (`err`) lead: `None` for no, else whether fd 1
/// is captured too (it leads where fd 2 does).
fn decide(mode: CaptureMode, out: Option<Target>, err: Option<Target>) -> Option<bool> {
    let err = err?;
    let same = out.is_some_and(|out| same_place(out, err));
    match mode {
        CaptureMode::Off => None,
        CaptureMode::On => Some(same),
        // The program's stderr writes meet live lines wherever fd 2 leads, its stdout writes only where
        // fd 1 leads to the same place.
        CaptureMode::Auto => {
            let collides = matches!(
                err.kind,
                Kind::Terminal | Kind::Pipe | Kind::Socket | Kind::File
            );
            collides.then_some(same)
        }
    }
}

/// Whether two descriptors lead to the same place: the same terminal device, or the same pipe or file.
fn same_place(a: Target, b: Target) -> bool {
    if a.kind == Kind::Terminal && b.kind == Kind::Terminal {
        a.rdev == b.rdev
    } else {
        a.kind == b.kind && a.dev == b.dev && a.ino == b.ino
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: Kind, dev: u64, ino: u64, rdev: u64) -> Option<Target> {
        Some(Target {
            dev,
            ino,
            rdev,
            kind,
        })
    }

    #[test]
    fn auto_captures_stderr_on_a_terminal_pipe_or_file_and_stdout_where_it_shares_it() {
        let pipe = t(Kind::Pipe, 12, 345, 0);
        let other_pipe = t(Kind::Pipe, 12, 346, 0);
        let tty = t(Kind::Terminal, 22, 5, 0x8803);
        let same_tty_other_inode = t(Kind::Terminal, 22, 6, 0x8803);
        let file = t(Kind::File, 2049, 77, 0);
        let null = t(Kind::Other, 5, 4, 0x103);
        let auto = CaptureMode::Auto;
        assert_eq!(decide(auto, pipe, pipe), Some(true));
        assert_eq!(decide(auto, tty, same_tty_other_inode), Some(true));
        assert_eq!(decide(auto, file, file), Some(true));
        assert_eq!(decide(auto, pipe, other_pipe), Some(false), "two pipes");
        assert_eq!(decide(auto, tty, pipe), Some(false));
        assert_eq!(decide(auto, null, null), None, "/dev/null");
        assert_eq!(decide(auto, None, pipe), Some(false), "fd 1 closed");
        assert_eq!(decide(auto, pipe, None), None, "fd 2 closed");
    }

    #[test]
    fn on_captures_stderr_whenever_it_is_open_and_off_never() {
        let pipe = t(Kind::Pipe, 12, 345, 0);
        let tty = t(Kind::Terminal, 22, 5, 0x8803);
        let null = t(Kind::Other, 5, 4, 0x103);
        assert_eq!(decide(CaptureMode::On, tty, pipe), Some(false));
        assert_eq!(decide(CaptureMode::On, pipe, pipe), Some(true));
        assert_eq!(decide(CaptureMode::On, null, null), Some(true));
        assert_eq!(decide(CaptureMode::On, tty, None), None);
        assert_eq!(decide(CaptureMode::Off, pipe, pipe), None);
    }
}
