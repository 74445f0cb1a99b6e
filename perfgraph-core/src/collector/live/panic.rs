//! Live print and panics: a panic hook, chained in front of the one in place when the runtime starts, that
//! prints the panic message through [`suspend`](crate::collector::terminal::screen::suspend) (so it never lands inside an open
//! live line) and notes which thread panicked when, so the sections the unwinding ends print as
//! `Finished <message> (panicked)`.

use std::sync::{Mutex, MutexGuard};

use crate::base::clock;
use crate::base::poison;
use crate::collector::terminal::screen;
use crate::local::threads;

/// Panics not yet seen by live print: `(thread index, ticks)`.
static PANICS: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

/// Chains perfgraph's hook in front of the panic hook in place now (the default one prints the message).
pub(crate) fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let ptr = threads::current_ptr();
        if !ptr.is_null() {
            // SAFETY: a non-null `current_ptr` is this (running) thread's own state, which the thread list
            // keeps alive for the whole process.
            let index = unsafe { &*ptr }.index;
            let at = clock::now().0;
            poison::lock(&PANICS).push((index, at));
        }
        // The background thread and the capture's forwarder may hold the terminal themselves: they just print.
        if matches!(
            std::thread::current().name(),
            Some("perfgraph" | "perfgraph-capture")
        ) {
            previous(info);
        } else {
            screen::suspend(|| previous(info));
        }
    }));
}

/// The panics noted since the last call, oldest first.
pub(crate) fn take() -> Vec<(u32, u64)> {
    std::mem::take(&mut *poison::lock(&PANICS))
}

/// The list's lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub(crate) fn hold_for_fork() -> MutexGuard<'static, Vec<(u32, u64)>> {
    poison::lock(&PANICS)
}
