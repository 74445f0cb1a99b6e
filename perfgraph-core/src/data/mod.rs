//! Plain data: what a snapshot of the recording produces and what the reports and exports render. Nothing
//! here touches the runtime.
//!
//! * [`tree`]: call trees, per thread and merged, and what runs now;
//! * [`report`]: a whole run's [`Report`](report::Report), built by a pure function.

pub(crate) mod report;
pub(crate) mod tree;
