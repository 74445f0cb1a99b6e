//! The capture when perfgraph-core is built without its `capture` feature: none of the capture's code
//! (the forwarder, its child, the pseudo-terminal, `tee` and `splice`) is compiled, and these stand in for
//! the crate-internal functions the rest of the collector calls, each doing what the real one does in a
//! process where no capture was ever started. `collector/mod.rs` takes this file as `capture` (`#[path]`)
//! so that the callers stay as they are, and it sits next to the real module so that a change to that
//! module's crate-internal surface is seen to need one here.

use std::time::Duration;

use crate::base::config::CaptureMode;
use crate::collector::terminal::Screen;

/// The runtime's start: nothing is captured; a warning when `PERFGRAPH_CAPTURE=on` asked for it.
pub(crate) fn start(mode: CaptureMode) -> Option<String> {
    (mode == CaptureMode::On).then(|| {
        "perfgraph: warning: PERFGRAPH_CAPTURE=on: this program was built without perfgraph-core's \
         `capture` feature; its output goes straight through"
            .to_owned()
    })
}

/// Whether the program's output is captured now: never.
pub(crate) fn active() -> bool {
    false
}

/// In a child forked after the start: there is no capture to leave to the parent.
pub(crate) fn forget_in_child() {}

/// How long a writer may wait for the destination to take the program's bytes (nothing is ever waited for
/// here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// At most this long since the destination last took something.
    Stall(#[allow(dead_code, reason = "read by the real capture only")] Duration),
    /// As long as it takes.
    Forever,
}

/// Whether the capture learns of a stop from SIGCONT: no, live print guesses from a late pass.
pub(crate) fn sees_stops() -> bool {
    false
}

/// Live print is about to write: the program never has the floor here, live print may write now.
pub(crate) fn before_live(_screen: &mut Screen, _late: bool) -> Option<Duration> {
    None
}

/// At exit: no SIGCONT is watched.
pub(crate) fn settle_stop(_screen: &mut Screen) {}

/// Forwards everything the program wrote: nothing is held back, so all of it is out.
pub(crate) fn flush_all(_screen: &mut Screen, _wait: Wait) -> bool {
    true
}

/// A thread enters or leaves `suspend`: there is no forwarder to tell.
pub(crate) fn set_suspended(_screen: &mut Screen, _inside: bool) {}

/// The program's `stderr()` writes: called only while [`active`], which it never is.
pub(crate) fn write_program(_screen: &mut Screen, _bytes: &[u8]) -> std::io::Result<()> {
    Ok(())
}

/// At a normal exit: the program's descriptors were never taken over.
pub(crate) fn stop() {}

/// Before live print's first line: no capture starts.
pub(crate) fn before_first_line(_screen: &mut Screen) -> Option<String> {
    None
}
