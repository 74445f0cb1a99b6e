//! What perfgraph's own process does on SIGINT, SIGTERM and SIGHUP, each only where it was at its default
//! when first asked (`nohup` keeps SIGHUP ignored). By default it ends as the signal's default action
//! would, after removing the temporary file of an output being replaced ([`remove_on_signal`]), so that
//! nothing is left behind. While a [`Stop`] catches them (the runs of `perfgraph causal` and `perfgraph
//! record`), a signal is only noted: the runs end, what they gathered is kept and reported, and [`end`]
//! then ends perfgraph as the signal would have.
//!
//! One handler per signal serves both, so neither undoes the other (a handler that ends the process
//! would end it in the middle of the runs; one put back to the default would leave a temporary file).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Whether a [`Stop`] catches the signals now.
static CATCHING: AtomicBool = AtomicBool::new(false);
/// The first signal caught while catching, 0 for none.
static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// The temporary file a signal removes before it ends the process (a leaked C string), or null.
static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the handlers, once: for each signal at its default action now.
fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for sig in SIGNALS {
            if !at_default(sig) {
                continue;
            }
            // SAFETY: `on_signal` only loads and stores atomics, calls `unlink` on a C string that is
            // never freed, and `emulate_default_handler` (sigaction, sigprocmask, raise): all
            // async-signal-safe; it allocates and locks nothing.
            let _ = unsafe { signal_hook::low_level::register(sig, move || on_signal(sig)) };
        }
    });
}

fn on_signal(sig: i32) {
    // Relaxed: the flag is the only thing read; `Stop::signal` reads what this stores, nothing else.
    if CATCHING.load(Ordering::Relaxed) {
        let _ = CAUGHT.compare_exchange(0, sig, Ordering::Relaxed, Ordering::Relaxed);
        return;
    }
    // Acquire: pairs with the Release store in `remove_on_signal`, so the string is whole.
    let temp = TEMP.load(Ordering::Acquire);
    if !temp.is_null() {
        // SAFETY: a NUL-terminated string that is never freed (leaked by `remove_on_signal`).
        unsafe { libc::unlink(temp) };
    }
    let _ = signal_hook::low_level::emulate_default_handler(sig);
}

/// From now on a signal that ends the process removes `temp` first (until [`disarm`]).
pub(crate) fn remove_on_signal(temp: &Path) {
    install();
    if let Ok(c) = CString::new(temp.as_os_str().as_bytes()) {
        // Release: pairs with the handler's Acquire load.
        TEMP.store(c.into_raw(), Ordering::Release);
    }
}

/// The temporary file is renamed or removed: a signal has nothing more to remove.
pub(crate) fn disarm() {
    // Relaxed: the string stays alive (leaked), so a handler that still sees it only fails its `unlink`.
    TEMP.store(std::ptr::null_mut(), Ordering::Relaxed);
}

/// The signals caught while it lives (one at a time): a signal is noted rather than ending the process.
pub(crate) struct Stop(());

impl Stop {
    pub(crate) fn catch() -> Stop {
        install();
        CAUGHT.store(0, Ordering::Relaxed);
        CATCHING.store(true, Ordering::Relaxed);
        Stop(())
    }

    /// The signal caught, if any.
    pub(crate) fn signal(&self) -> Option<i32> {
        match CAUGHT.load(Ordering::Relaxed) {
            0 => None,
            sig => Some(sig),
        }
    }
}

impl Drop for Stop {
    /// The signals end the process again: a Ctrl-C while the results are computed ends it at once.
    fn drop(&mut self) {
        CATCHING.store(false, Ordering::Relaxed);
    }
}

/// Ends perfgraph as the signal `sig` would have (the exit status a shell shows, 128 + `sig`), its
/// standard output flushed first.
pub(crate) fn end(sig: i32) {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let _ = signal_hook::low_level::emulate_default_handler(sig);
}

/// The signal's name, as `kill -l` gives it.
pub(crate) fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Whether the signal `sig` has its default action in this process.
fn at_default(sig: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`, a zeroed
    // `sigaction` this frame owns.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL
    }
}
