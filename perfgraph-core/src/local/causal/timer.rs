//! Causal profiling's CPU-time timers: a thread that runs long without a perfgraph call (a loop with no
//! section in it) pays what it owes every millisecond of its CPU time, as coz's sampling timer makes it.
//! The timers' signal is a real-time one (`SIGRTMIN + 7`), taken only if the program left it at its
//! default; its handler pays (sleeping: `nanosleep` is async-signal-safe) unless the thread is in this
//! module's own code then, and puts `errno` back. A thread blocked in a system call runs no CPU time, so
//! the timer does not interrupt it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Own;
use crate::base::sys::{self, CpuTimer};

/// A thread's CPU time between two ticks, ns.
const PERIOD_NS: u64 = 1_000_000;

/// Whether the handler is installed (the signal was the program's to give).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The timers' signal.
fn signal() -> libc::c_int {
    libc::SIGRTMIN() + 7
}

thread_local! {
    /// The thread runs this module's own code: a tick then must not pay (it would count twice, or wait for
    /// the lock this thread holds). `const`, no destructor: readable from a signal handler.
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// The thread's count, index and timer, once started; `None` before, and once its exit hook ran.
    static MINE: Cell<Option<(*const Own, u32, CpuTimer)>> = const { Cell::new(None) };
    /// The thread tried to start its timer (it may have been refused).
    static TRIED: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread busy in this module's code while it lives (nested uses keep the outer mark).
pub(super) struct Busy(bool);

impl Busy {
    pub(super) fn enter() -> Busy {
        Busy(BUSY.try_with(|b| b.replace(true)).unwrap_or(true))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = BUSY.try_with(|b| b.set(self.0));
    }
}

/// Installs the timers' handler (the runtime's start, the mode on); `false` if the program has the signal.
pub fn install() -> bool {
    let ok = sys::catch_unclaimed(signal(), on_tick);
    // Relaxed: read by threads that start their timers after the runtime's start, which they went through.
    INSTALLED.store(ok, Ordering::Relaxed);
    ok
}

/// Starts the calling thread's timer, once: `own` and `thread` are its count and index, in its state.
pub(super) fn ensure(own: &Own, thread: u32) {
    // Relaxed: see `install`.
    if !INSTALLED.load(Ordering::Relaxed) || TRIED.try_with(|t| t.replace(true)).unwrap_or(true) {
        return;
    }
    if let Some(timer) = CpuTimer::start(signal(), PERIOD_NS) {
        let mine = (own as *const Own, thread, timer);
        if MINE.try_with(|m| m.set(Some(mine))).is_err() {
            timer.delete();
        }
    }
}

/// The calling thread ends (its exit hook, before its state may be freed): its timer goes.
pub fn thread_ends() {
    if let Ok(Some((_, _, timer))) = MINE.try_with(Cell::take) {
        timer.delete();
    }
}

/// A tick of the calling thread's timer: it pays what it owes, unless it is in this module's code.
extern "C" fn on_tick(_signal: libc::c_int) {
    if !super::on() || BUSY.try_with(Cell::get).unwrap_or(true) {
        return;
    }
    let Ok(Some((own, thread, _))) = MINE.try_with(Cell::get) else {
        return;
    };
    let errno = sys::errno();
    // SAFETY: `own` is the count in this thread's state, set by this thread at its first section and taken
    // back by its exit hook before the state may be freed; the handler runs on this thread, in between.
    super::pay_from(unsafe { &*own }, thread, true);
    sys::set_errno(errno);
}
