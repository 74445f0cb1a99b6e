//! The rows of the overhead table: which case of which process each shows, how it is labelled, how it is
//! set up, and what it measures (which decides the other tables it appears in).

use perfgraph_benches::ids::{Peer, case, peer, process};

/// What a row of the overhead table measures, which decides the other tables it appears in.
#[derive(Clone, Copy)]
pub enum Kind {
    /// No instrumentation: the empty call, a pair of clock reads.
    Floor,
    /// perfgraph.
    Perfgraph,
    /// A peer crate.
    Peer {
        /// The crate.
        peer: Peer,
        /// Whether the case records (not switched off, spans collected).
        recording: bool,
    },
}

/// One row of the overhead table.
pub struct Row {
    /// The bench process whose results it shows ([`process`]).
    pub process: &'static str,
    /// The case id ([`case`]).
    pub id: &'static str,
    /// What it measures.
    pub kind: Kind,
    /// The label; for a peer, what follows its name and version.
    pub label: &'static str,
    /// How the case is set up.
    pub setup: &'static str,
}

impl Row {
    /// The label as printed: a peer's name and version first.
    pub fn label(&self) -> String {
        match self.kind {
            Kind::Peer { peer, .. } => format!("{} {}{}", peer.name, peer.version, self.label),
            Kind::Floor | Kind::Perfgraph => self.label.to_owned(),
        }
    }
}

/// A floor, measured in the main process.
const fn floor_row(id: &'static str, label: &'static str, setup: &'static str) -> Row {
    Row {
        process: process::MAIN,
        id,
        kind: Kind::Floor,
        label,
        setup,
    }
}

/// A perfgraph row.
const fn perfgraph_row(
    process: &'static str,
    id: &'static str,
    label: &'static str,
    setup: &'static str,
) -> Row {
    Row {
        process,
        id,
        kind: Kind::Perfgraph,
        label,
        setup,
    }
}

/// A peer's row: the crate and whether the case records.
const fn peer_row(
    process: &'static str,
    id: &'static str,
    (peer, recording): (Peer, bool),
    label: &'static str,
    setup: &'static str,
) -> Row {
    Row {
        process,
        id,
        kind: Kind::Peer { peer, recording },
        label,
        setup,
    }
}

/// A peer that records / one that is switched off or collects nothing.
const ON: bool = true;
const OFF: bool = false;

/// Rows of the overhead table, in order.
pub const ROWS: &[Row] = &[
    floor_row(
        case::EMPTY_CALL,
        "empty `#[inline(never)]` call",
        "the call every row includes",
    ),
    floor_row(case::INSTANT_PAIR, "pair of `Instant::now()`", "floor"),
    floor_row(
        case::RAW_CLOCK_PAIR,
        "pair of perfgraph raw clock reads",
        "floor (`rdtsc` or vDSO `CLOCK_MONOTONIC`)",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_ENABLED,
        "**perfgraph, enabled**",
        "`#[timed]`-style section, default settings",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_NO_HISTOGRAM,
        "perfgraph, on a path without a latency histogram",
        "the same leaf; bench hook `__test_hooks::without_latency_histograms`",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_DISABLED_BY_VERBOSITY,
        "perfgraph, off by verbosity",
        "`set_verbosity(Verbosity::Off)`",
    ),
    perfgraph_row(
        process::COMPILED_OUT,
        case::PERFGRAPH_COMPILED_OUT_TIMED,
        "perfgraph, compiled out (`#[timed]`)",
        "no `enabled` feature; separate binary",
    ),
    perfgraph_row(
        process::COMPILED_OUT,
        case::PERFGRAPH_COMPILED_OUT_SECTION,
        "perfgraph, compiled out (`time_section!`)",
        "no `enabled` feature; separate binary",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_LIVE_MESSAGE,
        "perfgraph, with a live message",
        "`live = \"…\", dots`",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_NESTED_3_DEEP,
        "perfgraph, nested three deep (per section)",
        "three nested sections per call",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_FUTURE_POLL,
        "perfgraph, a timed future's poll",
        "`time_future!` that stays pending, polled again (per poll)",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_ARGS,
        "perfgraph, two integer args, no trace",
        "`#[timed(args(a, b))]`, nothing wants them",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_ARGS_TRACED,
        "perfgraph, two integer args, recorded",
        "the same, recorded as a trace wants them",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_EVENT_TRACED,
        "perfgraph, an `event!` (in the leaf)",
        "`event!(\"tick\", args(n))` and an empty body, recorded as a trace wants it",
    ),
    floor_row(
        case::STD_MUTEX,
        "std's `Mutex`, lock and unlock",
        "uncontended (the thread's own), around the leaf's body",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_MUTEX,
        "perfgraph's `sync::Mutex`, lock and unlock",
        "the same, no trace",
    ),
    perfgraph_row(
        process::MAIN,
        case::PERFGRAPH_COUNTER,
        "perfgraph, a `counter!` (in the leaf)",
        "`counter!(\"depth\", n)` and an empty body, no trace",
    ),
    peer_row(
        process::MAIN,
        case::PUFFIN_ON,
        (peer::PUFFIN, ON),
        ", scopes on",
        "`profile_scope!`, `new_frame()` per batch, no sink",
    ),
    peer_row(
        process::MAIN,
        case::PUFFIN_OFF,
        (peer::PUFFIN, OFF),
        ", scopes off",
        "`set_scopes_on(false)`",
    ),
    peer_row(
        process::MAIN,
        case::FASTRACE_ROOT_SPAN,
        (peer::FASTRACE, ON),
        " (`enable`)",
        "`#[trace]`, root span per batch, no-op reporter",
    ),
    peer_row(
        process::MAIN,
        case::FASTRACE_NO_ROOT,
        (peer::FASTRACE, OFF),
        ", no root span",
        "spans not collected",
    ),
    peer_row(
        process::MAIN,
        case::FASTRACE_FUTURE_POLL,
        (peer::FASTRACE, ON),
        ", a traced future's poll",
        "`#[trace] async fn` that stays pending, root span (per poll)",
    ),
    peer_row(
        process::MAIN,
        case::TRACING_REGISTRY_NOOP_LAYER,
        (peer::TRACING, ON),
        " + `Registry`",
        "`#[instrument]`, global Registry + no-op layer",
    ),
    peer_row(
        process::MAIN,
        case::TRACING_SCOPED_REGISTRY,
        (peer::TRACING, ON),
        " + `Registry`, scoped",
        "the same as a scoped dispatcher (`with_default` per batch)",
    ),
    peer_row(
        process::MAIN,
        case::TRACING_SCOPED_PERFGRAPH_LAYER,
        (peer::TRACING, ON),
        " + `Registry` + perfgraph `TracingLayer`",
        "the same scoped, perfgraph's layer in place of the no-op one",
    ),
    peer_row(
        process::CHROME,
        case::TRACING_REGISTRY_CHROME,
        (peer::TRACING, ON),
        " + `Registry` + tracing-chrome",
        "writer `io::sink()`; separate process",
    ),
    peer_row(
        process::MAIN,
        case::TIME_GRAPH_ON,
        (peer::TIME_GRAPH, ON),
        "",
        "`#[instrument]`, collection on",
    ),
    peer_row(
        process::MAIN,
        case::TIME_GRAPH_OFF,
        (peer::TIME_GRAPH, OFF),
        ", collection off",
        "`enable_data_collection(false)`",
    ),
    peer_row(
        process::MAIN,
        case::HOTPATH_ON,
        (peer::HOTPATH, ON),
        " (`hotpath`)",
        "`#[measure]`, `HotpathGuard` alive (with its localhost metrics server)",
    ),
    peer_row(
        process::MAIN,
        case::HOTPATH_FUTURE_POLL,
        (peer::HOTPATH, ON),
        ", a measured future's poll",
        "`#[measure] async fn` that stays pending (per poll)",
    ),
    peer_row(
        process::MAIN,
        case::COARSE_PROF_ON,
        (peer::COARSE_PROF, ON),
        "",
        "`profile!`",
    ),
];
