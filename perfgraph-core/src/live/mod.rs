//! Live print on stderr (MOOSE's PerfGraphLivePrint). Stub: the hooks the background thread calls.

use std::sync::Arc;

use crate::config::{Config, LiveMode};
use crate::thread::{Record, ThreadState};

/// The live printer's state, owned by the background thread.
pub(crate) struct Live {}

impl Live {
    /// `None` when `PERFGRAPH_LIVE=off`.
    pub(crate) fn new(config: &Config) -> Option<Live> {
        (config.live != LiveMode::Off).then_some(Live {})
    }

    /// Records `thread` completed since the last pass, in completion order.
    pub(crate) fn on_records(&mut self, _thread: &ThreadState, _records: &[Record]) {}

    /// Decides what to print now. Returns how long (ns) it may sleep before it needs another pass.
    pub(crate) fn tick(&mut self, _threads: &[Arc<ThreadState>], _now: u64) -> Option<u64> {
        None
    }

    /// Process exit: print the final lines of sections still on screen.
    pub(crate) fn finish(&mut self, _threads: &[Arc<ThreadState>], _now: u64) {}
}
