//! The recording side: what a thread executes when it enters and leaves a section, and the state it owns.
//!
//! * [`verbosity`]: the level threshold, the first thing every section checks;
//! * [`causal`]: causal profiling's delays and counts (`PERFGRAPH_CAUSAL`), reached only while it is on;
//! * [`guard`]: the guard a recorded section holds;
//! * [`pending`]: the timed futures with a live message still pending, for live print;
//! * [`thread`]: a thread's recording state and the enter/exit hot path;
//! * [`threads`]: the process-wide list of threads that recorded: registration, exit, retirement;
//! * [`frames`]: the open-frame table (what runs now), readable by any thread;
//! * [`ring`] and [`record`]: completed sections on their way to the background thread; [`ring_supply`]: where a
//!   new thread's ring comes from;
//! * [`marks`]: futures' lives and instant events, through the same rings, for the trace;
//! * [`retired`]: exited threads folded into one call tree per thread name;
//! * [`tree`]: the thread's call tree, aggregated as it runs;
//! * [`latency`]: a call path's latency histogram, next to its node;
//! * [`side_frames`]: what open sections keep out of line: how many have flags, their CPU clocks, and the
//!   heap counters at each one's start, for the counting allocator;
//! * [`cpu_frames`]: the CPU clock at each CPU-measuring open section's start;
//! * [`stack`]: the enter/exit steps on all of the above, and a consistent reading of them from any
//!   thread (the call-tree snapshot protocol);
//! * [`reading`]: what such a reading holds, as plain data;
//! * [`snapshot`]: every thread's reading as plain data (names, nanoseconds, totals).

pub(crate) mod args;
pub(crate) mod causal;
pub(crate) mod counter_slot;
pub(crate) mod counters;
pub(crate) mod cpu_frames;
pub(crate) mod frames;
pub(crate) mod guard;
pub(crate) mod latency;
#[cfg(test)]
mod latency_tests;
pub(crate) mod live_texts;
pub(crate) mod locks;
pub(crate) mod marks;
pub(crate) mod pending;
pub(crate) mod reading;
pub(crate) mod record;
pub(crate) mod retired;
pub(crate) mod ring;
pub(crate) mod ring_supply;
#[cfg(test)]
mod ring_tests;
pub(crate) mod samples;
pub(crate) mod sampling;
pub(crate) mod side_frames;
pub(crate) mod snapshot;
#[cfg(feature = "tracing")]
pub(crate) mod span_end;
pub(crate) mod stack;
pub(crate) mod thread;
pub(crate) mod threads;
pub(crate) mod tree;
#[cfg(test)]
mod tree_tests;
pub(crate) mod verbosity;
