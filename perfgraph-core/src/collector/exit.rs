//! Process exit: an `atexit` handler (return from `main`, `std::process::exit`), or the watcher of a signal
//! that ends the run ([`signals`](super::signals)), asks the background thread for its final pass and waits
//! for it while it makes progress ([`process::progress`]: each step of the final pass, each block a file
//! writer hands the OS). A final pass that makes none for [`EXIT_WAIT`] (a disk or pipe that takes no
//! writes) is given up with one line on stderr, and its half-written file removed (the streamed trace, which
//! has its name since the start, is kept as far as it got, as after a kill): a stuck output loses its own
//! lines but never hangs the exit, while a large trace that is still being written is not cut short.
//!
//! A SIGINT, SIGTERM or SIGHUP that arrives while the program's own exit runs the final pass cuts that pass
//! short at once ([`shutdown_for_signal`]): a supervisor's SIGTERM to a process stuck writing to a named
//! pipe ends it now, not after [`EXIT_WAIT`], as a second Ctrl-C does.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::files::{self, Abandoned};
use super::terminal::capture;
use super::terminal::screen;

use crate::base::clock;
use crate::base::poison;
use crate::base::process::{self, Message};

/// Longest the exit handler waits for the background thread's final pass to make progress: it gives up
/// after this long without any.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Set (and notified) when the background thread has finished its final pass.
static FINISHED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// The background thread finished its final pass: the exit handler may return.
pub(crate) fn finished() {
    let (lock, cvar) = &FINISHED;
    *poison::lock(lock) = true;
    cvar.notify_all();
}

/// The signal whose final pass is under way (0: none): set by `signals` before it asks for that pass.
static ENDING_BY: AtomicI32 = AtomicI32::new(0);

/// A signal is ending the run: its final pass comes next, then the signal is raised again. The exit handler
/// then waits rather than let the process exit with another status.
pub(crate) fn ending_by_signal(sig: i32) {
    ENDING_BY.store(sig, Ordering::Relaxed);
}

/// In a child forked after the start: a signal ending the parent's run does not end the child's.
/// Async-signal-safe: one atomic store.
pub(crate) fn forget_in_child() {
    ENDING_BY.store(0, Ordering::Relaxed);
}

/// For the exit handler: when a signal is ending the run, waits (briefly: the signal is raised as soon as
/// its final pass is over) for it to end the process, so the exit status is the signal's.
fn wait_for_death() {
    // Relaxed: set before the signal's final pass, which this handler's own `shutdown` waited for.
    if ENDING_BY.load(Ordering::Relaxed) != 0 {
        std::thread::sleep(EXIT_WAIT + Duration::from_secs(1));
    }
}

pub(crate) extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        shutdown(EXIT_WAIT);
        // What the program writes from now on (C's stdio buffers, flushed after the exit handlers) goes out
        // through the capture's child once the process is gone.
        capture::stop();
        // A signal's final pass was under way when the program exited: the signal is raised again right
        // after it, and the exit status is the signal's.
        wait_for_death();
    });
}

/// The signal that cut the final pass short (0: none), set by [`shutdown_for_signal`].
static CUT_BY: AtomicI32 = AtomicI32::new(0);

/// Asks the background thread for its final pass and waits for it as long as it makes progress; gives up
/// after `stall` without any (saying so on stderr and removing the temporary file it was writing). If the
/// final pass was asked for already (a signal arrived during exit, or the program exits during a signal's
/// final pass), it waits for that one the same way.
pub(crate) fn shutdown(stall: Duration) {
    if !process::collecting() {
        return;
    }
    if process::begin_shutdown(clock::now().0) {
        process::send(Message::Exit);
    }
    wait_for_final_pass(stall);
}

/// [`shutdown`] for the signal `sig` that ends the run: its own final pass if none is under way; if the
/// program's exit is running one already, that pass is cut short now (the file being written is given up
/// as after a stall, with one line naming the signal), for this thread and the exit handler both.
pub(crate) fn shutdown_for_signal(sig: i32, stall: Duration) {
    if !process::collecting() {
        return;
    }
    if process::begin_shutdown(clock::now().0) {
        process::send(Message::Exit);
    } else {
        // Relaxed: read by the waiting loops below, which poll it every slice; the condition variable's
        // notification only wakes them sooner.
        CUT_BY.store(sig, Ordering::Relaxed);
        FINISHED.1.notify_all();
    }
    wait_for_final_pass(stall);
}

/// Waits for the final pass as long as it makes progress (see [`shutdown`]), or until a signal cuts it short.
fn wait_for_final_pass(stall: Duration) {
    let (lock, cvar) = &FINISHED;
    let mut done = poison::lock(lock);
    let mut seen = process::progress_count();
    let mut last_progress = std::time::Instant::now();
    let slice = Duration::from_millis(20).min(stall);
    while !*done {
        done = match cvar.wait_timeout(done, slice) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
        let cut = CUT_BY.load(Ordering::Relaxed);
        if cut != 0 && !*done {
            drop(done);
            cut_short(cut);
            return;
        }
        let now = process::progress_count();
        if now != seen {
            seen = now;
            last_progress = std::time::Instant::now();
        } else if !*done && last_progress.elapsed() >= stall {
            drop(done);
            give_up(stall);
            return;
        }
    }
}

/// Set by the first of [`give_up`] and [`cut_short`]: the final pass is given up once, with one line.
static GAVE_UP: AtomicBool = AtomicBool::new(false);

/// The final pass is stuck: say so, and remove the half-written file so none is left behind (but the
/// trace's, already under its name: it is kept, as a killed run's is).
#[cold]
fn give_up(stall: Duration) {
    // Relaxed: only one thread may print; nothing else is published through it.
    if GAVE_UP.swap(true, Ordering::Relaxed) {
        return;
    }
    let line = match files::abandon_current() {
        Some((variable, path, left)) => format!(
            "perfgraph: error: exit: writing {variable} file {:?} made no progress for {} s; gave up{}, \
             and the outputs after it are not written",
            path.display().to_string(),
            stall.as_secs_f64(),
            what_is_left(left)
        ),
        None => format!(
            "perfgraph: error: exit: the final outputs made no progress for {} s; gave up, and what \
             they had not written yet is lost",
            stall.as_secs_f64()
        ),
    };
    screen::warn(&line);
}

/// What an abandoned file left, as the give-up line says it.
fn what_is_left(left: Abandoned) -> &'static str {
    match left {
        Abandoned::Removed => " (the partial file is removed)",
        Abandoned::Kept => " (the trace keeps what it had written, without its closing event)",
        Abandoned::Nothing => "",
    }
}

/// A signal (`sig`) arrived during the program's own final pass: give it up now, removing the half-written
/// file as [`give_up`] does, with one line.
#[cold]
fn cut_short(sig: i32) {
    // Relaxed: as in `give_up`.
    if GAVE_UP.swap(true, Ordering::Relaxed) {
        return;
    }
    let name = match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    };
    let line = match files::abandon_current() {
        Some((variable, path, left)) => format!(
            "perfgraph: error: exit: {name} while writing {variable} file {:?}; gave up{}, and the outputs \
             after it are not written",
            path.display().to_string(),
            what_is_left(left)
        ),
        None => format!(
            "perfgraph: error: exit: {name} during the final outputs; gave up, and what they had not \
             written yet is lost"
        ),
    };
    screen::warn(&line);
}
