//! Process exit: an `atexit` handler (return from `main`, `std::process::exit`), or the watcher of a signal
//! that ends the run ([`signals`](super::signals)), asks the background thread for its final pass and waits
//! for it while it makes progress ([`process::progress`]: each step of the final pass, each block a file
//! writer hands the OS). A final pass that makes none for [`EXIT_WAIT`] (a disk or pipe that takes no
//! writes) is given up with one line on stderr, and its half-written file removed (the streamed trace, which
//! has its name since the start, is kept as far as it got, as after a kill): a stuck output loses its own
//! lines but never hangs the exit, while a large trace that is still being written is not cut short.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::capture;
use super::files::{self, Abandoned};
use super::live::screen;

use crate::base::process::{self, Message};

/// Longest the exit handler waits for the background thread's final pass to make progress: it gives up
/// after this long without any.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Set (and notified) when the background thread has finished its final pass.
static FINISHED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// The background thread finished its final pass: the exit handler may return.
pub(crate) fn finished() {
    let (lock, cvar) = &FINISHED;
    *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
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

/// Asks the background thread for its final pass and waits for it as long as it makes progress; gives up
/// after `stall` without any (saying so on stderr and removing the temporary file it was writing). If the
/// final pass was asked for already (a signal arrived during exit, or the program exits during a signal's
/// final pass), it waits for that one the same way.
pub(crate) fn shutdown(stall: Duration) {
    if !process::collecting() {
        return;
    }
    if process::begin_shutdown() {
        process::send(Message::Exit);
    }
    let (lock, cvar) = &FINISHED;
    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = process::progress_count();
    let mut last_progress = std::time::Instant::now();
    let slice = Duration::from_millis(20).min(stall);
    while !*done {
        done = match cvar.wait_timeout(done, slice) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
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

/// The final pass is stuck: say so, and remove the half-written file so none is left behind (but the
/// trace's, already under its name: it is kept, as a killed run's is).
#[cold]
fn give_up(stall: Duration) {
    let line = match files::abandon_current() {
        Some((variable, path, left)) => format!(
            "perfgraph: error: exit: writing {variable} file {:?} made no progress for {} s; gave up{}, \
             and the outputs after it are not written",
            path.display().to_string(),
            stall.as_secs_f64(),
            match left {
                Abandoned::Removed => " (the partial file is removed)",
                Abandoned::Kept =>
                    " (the trace keeps what it had written, without its closing event)",
                Abandoned::Nothing => "",
            }
        ),
        None => format!(
            "perfgraph: error: exit: the final outputs made no progress for {} s; gave up, and what \
             they had not written yet is lost",
            stall.as_secs_f64()
        ),
    };
    screen::warn(&line);
}
