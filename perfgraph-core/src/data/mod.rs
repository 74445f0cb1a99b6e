//! Plain data: what a snapshot of the recording produces and what the reports and exports render. Nothing
//! here touches the runtime.
//!
//! * [`tree`]: call trees, per thread and merged, and what runs now;
//! * [`latency`]: a call path's latency distribution;
//! * [`report`]: a whole run's [`Report`](report::Report), built by a pure function;
//! * [`runs`]: many processes' runs merged into one report.

pub(crate) mod latency;
pub(crate) mod report;
pub(crate) mod runs;
pub(crate) mod tree;
