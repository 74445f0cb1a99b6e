//! What was recorded, as plain values: a whole run's [`Report`] (what [`report()`](crate::report()) returns
//! and `PERFGRAPH_JSON` holds), the call trees in it ([`CallTree`], [`CallNode`], per thread in
//! [`ThreadSnapshot`]), a call path's [`Latency`], and the per-section sums the report tables show
//! ([`SectionTotal`], [`AsyncTotal`], [`AllocTotal`], [`CpuTotal`]). Nothing here touches the runtime: a
//! `Report` read back from a file ([`Report::read_json`]) is the same value.
//!
//! ```
//! use perfgraph_core::data::{CallNode, Report};
//!
//! #[perfgraph_core::timed]
//! fn assemble() {}
//!
//! assemble();
//! let r: Report = perfgraph_core::report();
//! let node: &CallNode = r.tree.find(&["assemble"]).unwrap();
//! assert_eq!(node.calls, 1);
//! ```
//
// Inside the crate, the layer above `base`: `tree` (a call tree and its nodes), `thread_snapshot` (what
// one thread recorded and what it runs now), `combine` (trees combined by call path), `latency` (a call
// path's distribution), `report` (a whole run's `Report`, built by a pure function), `runs` (many
// processes' runs merged into one report).

pub(crate) mod args;
pub(crate) mod combine;
pub(crate) mod counters;
pub(crate) mod figures;
pub(crate) mod latency;
pub(crate) mod locks;
pub(crate) mod node_figures;
pub(crate) mod report;
pub(crate) mod runs;
pub(crate) mod thread_snapshot;
pub(crate) mod timeline;
pub(crate) mod tree;

pub use crate::base::registry::{SectionId, SectionInfo};
pub use args::{ArgValue, MAX_ARG_TEXT, MAX_ARGS};
pub use combine::combine;
#[allow(deprecated)]
#[doc(hidden)]
pub use combine::merge;
pub use counters::CounterStats;
pub use figures::CpuFigures;
pub use latency::Latency;
pub use locks::LockStats;
pub use report::{
    AllocTotal, AsyncTotal, CpuTotal, Merged, ProcessInfo, ProcessSpread, Report, RunInfo,
    SectionTotal, ThreadSummary,
};
pub use runs::MergeError;
pub use thread_snapshot::{RunningSection, ThreadGroup, ThreadSnapshot};
#[allow(deprecated)]
pub use tree::CpuTime;
pub use tree::{CallNode, CallTree};
