//! End-of-run outputs (reports, trace, folded stacks, JSON) and interval statistics. Stub: the hooks the
//! background thread calls.

use crate::config::Config;
use crate::thread::{Record, ThreadState};

/// State of the at-exit outputs, owned by the background thread.
pub(crate) struct Outputs {}

impl Outputs {
    pub(crate) fn new(_config: &Config) -> Outputs {
        Outputs {}
    }

    /// Records `thread` completed since the last pass, in completion order.
    pub(crate) fn on_records(&mut self, _thread: &ThreadState, _records: &[Record]) {}

    /// A resident-memory sample taken at `ticks`.
    pub(crate) fn on_memory(&mut self, _ticks: u64, _bytes: u64) {}

    /// Periodic work (interval statistics). Returns how long (ns) it may sleep before it needs another pass.
    pub(crate) fn tick(&mut self, _now: u64) -> Option<u64> {
        None
    }

    /// Process exit, after live print finished: print the reports and write the files.
    pub(crate) fn finish(&mut self) {}
}
