//! The network wing: the control socket ([`listen`], `PERFGRAPH_LISTEN`), the Prometheus endpoint
//! ([`prometheus`], `PERFGRAPH_PROMETHEUS`) and the OTLP export ([`otlp`], `PERFGRAPH_OTLP`), each
//! behind the cargo feature of its name, and what they share: how often the background thread looks at a
//! listener, and the figures the metrics take. Their descriptors are listed for a forked child to close in
//! [`sockets`](super::sockets), below the trace and the files that write to a client's connection.
//!
//! None of them has a thread of its own or ever waits: the background thread looks at each between its
//! passes, non-blocking, as an [`Output`](super::output::Output). Built without any of the three, none of it is
//! compiled.

// The links name modules a build without their feature does not have.
#![cfg_attr(
    not(all(feature = "listen", feature = "prometheus", feature = "otlp")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "listen")]
pub(crate) mod listen;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
#[cfg(feature = "prometheus")]
pub(crate) mod prometheus;

#[cfg(any(feature = "listen", feature = "prometheus"))]
use std::time::Duration;

#[cfg(any(feature = "listen", feature = "prometheus", feature = "otlp"))]
pub(crate) use super::sockets::{track, untrack};
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use crate::base::{config::Config, heap, process};
#[cfg(any(feature = "prometheus", feature = "otlp"))]
use crate::local::snapshot;

/// Longest the background thread sleeps while listening: how late an idle process may answer. Each look
/// costs the idle thread a wake-up (about 19 µs of its time on the 2-core VM of docs/performance.md, where
/// 100 ms made 0.095% of a core); 200 ms keeps it near half the 0.1% bound.
#[cfg(any(feature = "listen", feature = "prometheus"))]
pub const LISTEN_POLL: Duration = Duration::from_millis(200);

/// Longest it sleeps while a client is connected, and for [`BUSY_TIME`] after one asked something (a
/// client such as `perfgraph top` asks again soon: `status`, then `dump`, every refresh).
#[cfg(any(feature = "listen", feature = "prometheus"))]
pub const BUSY_POLL: Duration = Duration::from_millis(5);

/// How long after a request the socket is looked at every [`BUSY_POLL`].
#[cfg(any(feature = "listen", feature = "prometheus"))]
pub const BUSY_TIME: Duration = Duration::from_secs(2);

/// How long the background thread may sleep before it looks at a listener again: [`LISTEN_POLL`] when
/// nobody is connected (`idle`) and nothing was asked for [`BUSY_TIME`] (the last request at `asked_ns`),
/// else [`BUSY_POLL`]. The control socket's and the Prometheus endpoint's rule.
#[cfg(any(feature = "listen", feature = "prometheus"))]
pub(crate) fn look_within(idle: bool, asked_ns: u64, mono: u64) -> Duration {
    let recent = mono.saturating_sub(asked_ns) < BUSY_TIME.as_nanos() as u64;
    if idle && !recent {
        LISTEN_POLL
    } else {
        BUSY_POLL
    }
}

/// Which of the clients (`(since, still reading its request)` each) makes room for a new one: the oldest
/// still reading; `None` if every one has its answer under way (the newcomer is then turned away).
#[cfg(any(feature = "listen", feature = "prometheus"))]
pub(crate) fn oldest_reading(clients: impl Iterator<Item = (u64, bool)>) -> Option<usize> {
    clients
        .enumerate()
        .filter(|(_, (_, reading))| *reading)
        .min_by_key(|(_, (since, _))| *since)
        .map(|(i, _)| i)
}

/// A report and the process's own figures, for the metrics exports. The threads are the report's own
/// (not the live list, which at exit has lost every thread folded by the final drains).
#[cfg(any(feature = "prometheus", feature = "otlp"))]
pub(crate) fn figures(
    config: &Config,
) -> (crate::data::Report, crate::export::by_section::Process) {
    let report = snapshot::report(config);
    let own = crate::export::by_section::Process {
        rss_bytes: u64::from(process::rss_kb()) * 1024,
        heap_bytes: heap::counting().then(heap::process_heap),
        threads: crate::export::by_section::live_threads(&report, process::shutting_down()),
    };
    (report, own)
}
