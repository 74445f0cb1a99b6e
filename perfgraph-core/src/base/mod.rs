//! The base layer: what every other layer reads, importing nothing above itself.
//!
//! * [`atomics`]: the atomics the lock-free code uses (swapped for loom's in the model checks);
//! * [`buckets`]: the latency histograms' bucket scheme;
//! * [`budget`]: the memory budget of perfgraph's own output buffers ([`budget::OutBuf`]);
//! * [`clock`]: ticks, and their one conversion to nanoseconds ([`clock::Scale`]);
//! * [`registry`]: the call sites and their dense ids; [`site_table`]: the lock-free table `counter!`'s
//!   and `event!`'s sites register in;
//! * [`identity`]: which process this is (pid, rank, host, wall-clock anchor), and output paths'
//!   placeholders;
//! * [`config`]: the `PERFGRAPH_*` settings; [`secure`]: the few a privileged program (`AT_SECURE`) takes;
//! * [`control`]: the control socket's protocol (requests, where the sockets are);
//! * [`endpoint`]: an OTLP collector's URL (`PERFGRAPH_OTLP`);
//! * [`heap`]: the counting allocator and its per-thread counters;
//! * [`poison`]: taking a lock a panic poisoned ([`poison::lock`]);
//! * [`process`]: the process-wide state (started, the background thread's inbox, exit progress, the
//!   resident-set figure);
//! * [`sys`]: every call into the operating system;
//! * [`text`]: names made safe for a terminal and a table.

pub(crate) mod atomics;
pub(crate) mod buckets;
pub(crate) mod budget;
pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod control;
pub(crate) mod endpoint;
pub(crate) mod heap;
pub(crate) mod identity;
pub(crate) mod poison;
pub(crate) mod process;
pub(crate) mod registry;
pub(crate) mod secure;
pub(crate) mod site_table;
pub(crate) mod sys;
pub(crate) mod text;
