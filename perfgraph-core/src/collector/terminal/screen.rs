//! The ways to write to the terminal live print shares: [`suspend`], [`LiveStderr`] (behind
//! [`stderr`](crate::stderr)), warnings and blocks of lines. They take the terminal's lock
//! ([`terminal`](super)), forward what the program wrote to a captured stream before their own
//! text, and end an open live line first. Only the background thread writes live lines
//! (`Screen::write_live`).
//!
//! Why not a writer thread behind a channel: `poll` + writes of at most `PIPE_BUF` already never block on a
//! pipe, a file never blocks, and a terminal stopped with Ctrl-S reports no room; a thread would add a
//! second place that owns the terminal's state (is a live line open?) and a hand-off that `suspend` would
//! have to wait for anyway.

use std::io::Write;
use std::sync::Mutex;

use super::{CATCH_UP, STALL, inside, other_output, set_inside, writing};
pub use super::{EXIT_FLUSH, MID_LINE, OTHER_OUTPUT_AT, Screen, lock};
use crate::base::poison;
use crate::base::process;
use crate::collector::terminal::capture::{self, Wait};

/// Runs `f` holding the terminal, after ending an open live line; then live print knows other output came.
fn with_screen<R>(f: impl FnOnce(&mut Screen) -> R) -> R {
    struct Inside;
    impl Drop for Inside {
        fn drop(&mut self) {
            set_inside(false);
        }
    }
    process::catch_up(CATCH_UP);
    let mut screen = lock();
    screen.make_way();
    set_inside(true);
    let inside = Inside;
    let result = f(&mut screen);
    drop(inside);
    other_output();
    drop(screen);
    result
}

/// Runs `f`, which prints to the terminal, without breaking live print's lines: an open dots line is ended
/// first, and live print then follows MOOSE's rules (`Still` / `Currently` / `Finished`) for what it prints
/// next. Live print waits while `f` runs. If a section live print shows has just ended, its stats are
/// printed first (waiting for the background thread at most 50 ms). Nested calls (and
/// [`stderr`](crate::stderr) writes inside `f`) just run.
///
/// ```
/// use perfgraph_core::{suspend, timed};
///
/// #[timed(live = "Solving", dots)]
/// fn solve(iteration: u32) -> f64 {
///     let residual = 1e-3 / f64::from(iteration);
///     suspend(|| eprintln!("iteration {iteration}: residual {residual:.1e}"));
///     residual
/// }
///
/// assert!(solve(3) < 1e-3);
/// ```
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    // In a forked child there is no live print to wait, and the terminal's lock is the parent's.
    if inside() || process::forked() {
        return f();
    }
    if capture::active() {
        return suspend_captured(f);
    }
    with_screen(|_| {
        let result = f();
        let _ = std::io::stderr().flush();
        result
    })
}

/// [`suspend`] while the program's output is captured: `f`'s output goes through the stream like the rest
/// (so the lock is not held while `f` runs: the forwarder needs it), and live print waits meanwhile. One
/// `suspend` runs at a time, as when the lock is held.
fn suspend_captured<R>(f: impl FnOnce() -> R) -> R {
    static TURN: Mutex<()> = Mutex::new(());
    /// Leaving, also by unwinding: `f`'s output goes out, then live print may go on.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            set_inside(false);
            let _ = std::io::stderr().flush();
            let mut screen = lock();
            capture::flush_all(&mut screen, Wait::Forever);
            capture::set_suspended(&mut screen, false);
            other_output();
        }
    }
    process::catch_up(CATCH_UP);
    let _turn = poison::lock(&TURN);
    {
        let mut screen = lock();
        capture::flush_all(&mut screen, Wait::Forever);
        screen.make_way();
        capture::set_suspended(&mut screen, true);
    }
    set_inside(true);
    let leave = Leave;
    let result = f();
    drop(leave);
    result
}

/// Writes one warning line to stderr (ending an open live line first). A stderr that is closed, fails or
/// takes nothing for 100 ms loses the line; the program goes on.
pub fn warn(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    write_block(&text);
}

/// Writes `text` (whole lines) as other output: reports and interval statistics from the background thread,
/// warnings. Never blocks for long (see [`STALL`]).
pub fn write_block(text: &str) {
    if inside() || process::forked() {
        // Our own thread holds the screen (a warning raised inside `suspend`), or this is a forked child
        // (no live print, and the terminal's lock is the parent's): the line just goes out.
        let _ = std::io::stderr().write_all(text.as_bytes());
        return;
    }
    let mut screen = lock();
    if capture::active() {
        // What the program wrote before goes out first, and a line it left open is ended.
        capture::flush_all(&mut screen, Wait::Stall(STALL));
        screen.end_program_line();
    }
    screen.write_lines(text);
    drop(screen);
    other_output();
}

/// An `io::Write` to stderr that cooperates with live print (see [`stderr`](crate::stderr)).
#[derive(Debug, Default, Clone, Copy)]
pub struct LiveStderr;

impl Write for LiveStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if inside() || process::forked() {
            return std::io::stderr().write(buf);
        }
        if capture::active() {
            // Straight to the destination, after what the program wrote to the stream before.
            process::catch_up(CATCH_UP);
            let mut screen = lock();
            capture::flush_all(&mut screen, Wait::Forever);
            screen.make_way();
            return capture::write_program(&mut screen, buf).map(|()| buf.len());
        }
        with_screen(|screen| {
            writing(buf);
            let result = std::io::stderr().write_all(buf);
            if result.is_ok() {
                screen.stderr_wrote(buf[buf.len() - 1]);
            }
            result
        })
        .map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
