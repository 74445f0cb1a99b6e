//! The signals that end `perfgraph causal`'s runs early (SIGINT, SIGTERM, SIGHUP): caught while the runs
//! go on, so that what they gathered is kept and predicted from; then perfgraph ends as the signal would
//! have ended it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The signals that end `perfgraph causal`'s runs early, caught while they run: the first one caught.
pub(super) struct Stop {
    caught: Arc<AtomicUsize>,
    ids: Vec<(signal_hook::SigId, i32)>,
}

impl Stop {
    const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    pub(super) fn catch() -> Stop {
        let caught = Arc::new(AtomicUsize::new(0));
        let ids = Stop::SIGNALS
            .iter()
            .filter_map(|&sig| {
                // Only where it is at its default: a `nohup` or a shell's ignored SIGINT stays ignored.
                if !at_default(sig) {
                    return None;
                }
                signal_hook::flag::register_usize(sig, Arc::clone(&caught), sig as usize)
                    .ok()
                    .map(|id| (id, sig))
            })
            .collect();
        Stop { caught, ids }
    }

    /// The signal caught, if any.
    pub(super) fn signal(&self) -> Option<i32> {
        match self.caught.load(Ordering::Relaxed) {
            0 => None,
            sig => i32::try_from(sig).ok(),
        }
    }
}

impl Drop for Stop {
    /// The signals go back to their default action (signal-hook's unregistering alone would leave them
    /// ignored): a Ctrl-C while the predictions are computed ends `perfgraph` at once.
    fn drop(&mut self) {
        for (id, sig) in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
            // SAFETY: SIG_DFL is a valid disposition for these signals, which were at it when caught
            // (`Stop::catch` takes only those); nothing else in this process handles them.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
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

/// The signal's name, as `kill -l` gives it.
pub(super) fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
