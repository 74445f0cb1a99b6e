//! Signals that end a run. SIGINT, SIGTERM and SIGHUP (how long runs usually end: Ctrl-C, `kill`, a closed
//! terminal) get the same final pass as a normal exit (live print's last lines, the reports, every file),
//! then the process dies of the same signal, so its exit status is the one the shell expects (130, 143,
//! 129). SIGABRT (`std::process::abort`, a panic with `panic = "abort"`) only ends an open live line, so
//! stderr does not stop in the middle of one. `PERFGRAPH_SIGNALS=off` installs none of this.
//!
//! Only a signal whose disposition is the default when the runtime starts is caught: one the program
//! handles or ignores already stays its own. A handler the program installs later replaces ours, and then
//! perfgraph does nothing for that signal, even when that handler calls ours after its own (signal-hook's
//! registry, which tokio uses, chains to the handler it found): the watcher acts only while the kernel's
//! disposition is still our handler. That check is why the handler is our own `sigaction` (in `base::sys`)
//! and not signal-hook's: its registry keeps every registrant behind one kernel handler, so a later tokio
//! registration would run beside ours instead of replacing it, and nothing could tell.
//!
//! The handler only does what is async-signal-safe: it writes the signal's number into a self-pipe
//! (non-blocking; `errno` kept). A small thread of ours (`perfgraph-signals`, every signal blocked, so the
//! kernel delivers signals to the program's threads as it would without perfgraph) waits on the pipe's other
//! end and does the rest: it puts the signal back to its default (a second Ctrl-C ends the process at once),
//! runs [`exit::shutdown`], which asks the background thread for its final pass exactly as the exit handler
//! does, then raises the signal again. The background thread's own doorbell, `Thread::unpark`, is not
//! async-signal-safe, hence the pipe and the thread that blocks on it.

use std::io::{PipeReader, Read};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use super::exit;
use super::terminal::screen;
use crate::base::process;
use crate::base::sys::{self, Disposition};

/// The signals whose arrival ends the run with its outputs written.
pub const ENDING: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The write end of the self-pipe (-1 until the watcher runs).
static PIPE: AtomicI32 = AtomicI32::new(-1);
/// The process that installed the handlers: a child forked from it shares the pipe, and must not end its
/// parent's run.
static OWNER: AtomicU32 = AtomicU32::new(0);

/// Catches SIGINT, SIGTERM, SIGHUP and SIGABRT, each only if its disposition is the default now. Called
/// once, by the runtime's start, after the background thread runs.
pub(crate) fn install() {
    let wanted: Vec<i32> = ENDING
        .into_iter()
        .filter(|&sig| sys::disposition(sig, on_signal) == Disposition::Default)
        .collect();
    if !wanted.is_empty() && start_watcher() {
        for sig in wanted {
            sys::catch_signal(sig, on_signal);
        }
    }
    if sys::disposition(libc::SIGABRT, on_abort) == Disposition::Default {
        sys::catch_signal(libc::SIGABRT, on_abort);
    }
}

/// Opens the self-pipe and starts the thread that reads it. `false` (nothing installed) if either fails.
fn start_watcher() -> bool {
    // Close-on-exec, both ends: a program that `exec`s hands neither on; above fd 2, where a program that
    // closed its standard error would find them.
    let Ok((reader, writer)) = std::io::pipe() else {
        return false;
    };
    let (Ok(reader), Ok(writer)) = (
        sys::above_stdio(reader.into()).map(std::io::PipeReader::from),
        sys::above_stdio(writer.into()).map(std::io::PipeWriter::from),
    ) else {
        return false;
    };
    if !sys::set_nonblocking(writer.as_raw_fd()) {
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("perfgraph-signals".into())
        .stack_size(128 * 1024)
        .spawn(move || watch(reader));
    if spawned.is_err() {
        return false;
    }
    // Kept open for the rest of the process: the handler writes to it.
    let fd = writer.into_raw_fd();
    OWNER.store(sys::process_id(), Ordering::Relaxed);
    // Relaxed: the handler that reads it is installed after this store by a system call (`sigaction`),
    // and a signal reaches it only through the kernel after that.
    PIPE.store(fd, Ordering::Relaxed);
    true
}

/// The handler of SIGINT, SIGTERM and SIGHUP: tells the watcher which signal came. Async-signal-safe: two
/// atomic loads, `getpid`, one non-blocking `write`. If the watcher cannot be told (the pipe is full, closed
/// or gone), or this is a forked child, the signal's default action happens, as it would without perfgraph.
extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE.load(Ordering::Relaxed);
    if sys::process_id() != OWNER.load(Ordering::Relaxed)
        || !sys::write_from_handler(fd, &[sig as u8])
    {
        sys::die_of(sig);
    }
}

/// The handler of SIGABRT: ends the terminal's open line, then the default action (the process aborts).
/// Async-signal-safe: atomic loads and stores and a `write`. The newline goes where perfgraph's own lines go
/// (under `PERFGRAPH_CAPTURE`, not into the program's pipe), and the capture's forwarder learns that the
/// line is ended.
extern "C" fn on_abort(sig: libc::c_int) {
    if screen::MID_LINE.load(Ordering::Relaxed) {
        sys::write_from_handler(process::output_fd(), b"\n");
        process::note_output(b'\n');
    }
    sys::die_of(sig);
}

/// The watcher thread: waits for a signal's number on the pipe, then ends the run by it. Should the pipe
/// fail, the signals go back to their default action rather than be swallowed.
fn watch(mut reader: PipeReader) {
    sys::block_signals_here();
    let mut buf = [0u8; 16];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                for &sig in &buf[..n] {
                    let sig = i32::from(sig);
                    if ENDING.contains(&sig) && claim(sig) {
                        end_run(sig);
                    }
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    release();
}

/// Whether `sig` is still ours (the program installed no handler of its own since): then every signal of
/// ours goes back to its default action, so a second one ends the process at once.
fn claim(sig: i32) -> bool {
    if sys::disposition(sig, on_signal) != Disposition::Handler(true) {
        return false;
    }
    release();
    true
}

/// Puts every signal still handled by [`on_signal`] back to its default action.
fn release() {
    for sig in ENDING {
        if sys::disposition(sig, on_signal) == Disposition::Handler(true) {
            sys::default_signal(sig);
        }
    }
}

/// The final pass, as at a normal exit, then death by `sig`: the program's output is at its destination
/// first (the capture hands over and waits, as at a normal exit), so a shell's next line comes after it.
/// If the program's own exit is running the final pass already, `sig` cuts it short instead
/// ([`exit::shutdown_for_signal`]): a supervisor's SIGTERM does not wait for a stuck output.
fn end_run(sig: i32) -> ! {
    exit::ending_by_signal(sig);
    let _ = std::panic::catch_unwind(|| {
        exit::shutdown_for_signal(sig, exit::EXIT_WAIT);
        super::terminal::capture::stop();
    });
    sys::die_of(sig)
}
