//! perfgraph: timed sections with live progress on stderr, call-graph reports and trace exports.
//!
//! Annotate functions with [`timed`] (or open a scope with [`time_section!`]), run the program, and read
//! what was recorded with [`threads`] and [`combined`]. Settings come from `PERFGRAPH_*` environment variables
//! (see the user guide in `docs/`), read once at the first recorded section; nothing needs initialising.
//!
//! ```
//! use perfgraph_core::{combined, time_section, timed};
//!
//! #[timed(live = "Solving nonlinear system", dots)]
//! fn solve(n: u64) -> u64 {
//!     (0..n).map(residual).sum()
//! }
//!
//! fn residual(i: u64) -> u64 {
//!     time_section!("residual", level = 2);
//!     i * i
//! }
//!
//! perfgraph_core::set_verbosity(perfgraph_core::Verbosity::Level(2));
//! assert_eq!(solve(10), 285);
//! let tree = combined();
//! let residual = tree.find(&["solve", "residual"]).unwrap();
//! assert_eq!(residual.calls, 10);
//! ```
//!
//! # Cargo features
//!
//! * `enabled` (default): record sections. Without it [`timed`], [`time_section!`] and [`time_future!`]
//!   still check their arguments, then expand to the plain code, and nothing is recorded.
//! * `capture` (default): from the first live line on, forward the program's own stdout and stderr so live
//!   lines never split its lines (`PERFGRAPH_CAPTURE`). Without it none of the capture's code is built (no
//!   pseudo-terminal, `tee`, `splice` or forked forwarder), and `PERFGRAPH_CAPTURE=on` only warns.
//! * `signals` (default): SIGINT, SIGTERM and SIGHUP write the reports and files before the process dies
//!   of them (`PERFGRAPH_SIGNALS`), and SIGABRT ends an open live line.
//! * `listen` (default): the background thread answers `perfgraph ps`, `dump`, `trace` and `top` on a
//!   private Unix socket (`PERFGRAPH_LISTEN`; the client side is [`attach`]).
//! * `prometheus` (default): the background thread serves `GET /metrics` in Prometheus's text format
//!   (`PERFGRAPH_PROMETHEUS`).
//! * `otlp` (default): the background thread posts metrics and spans to an OpenTelemetry collector
//!   (`PERFGRAPH_OTLP`).
//! * `tracing`: `TracingLayer`, a `tracing_subscriber` layer that makes every span the subscriber enables a
//!   section.
//! * `crossbeam`: `sync::crossbeam`, crossbeam-channel's channels named and recording their waits and
//!   wake-ups as `sync::channel` does (crossbeam-channel is a dependency already: the feature adds API
//!   only).
//!
//! `capture`, `signals`, `listen`, `prometheus` and `otlp` are process-wide, so they are the binary's
//! choice: a library depends with `default-features = false, features = ["enabled"]`, and a binary built
//! that way has none of the socket and HTTP code.

// The layers, from the bottom up; each imports only those before it (docs/design.md draws them). `data`
// is also the public module of the recorded data's types.
mod base;
mod collector;
pub mod data;
mod entry;
mod export;
mod future;
mod local;
mod report;
pub mod sync;
#[cfg(feature = "tracing")]
mod tracing_layer;
// The client of other processes' control sockets (entry-point level: it reads their reports back).
pub mod attach;

/// The settings: what [`config()`] returns, read from the `PERFGRAPH_*` variables (the user guide lists
/// them), and the values some of them take.
///
/// ```
/// use perfgraph_core::config::{Config, LiveMode};
///
/// let (config, warnings) = Config::from_lookup(|name| match name {
///     "PERFGRAPH_LIVE" => Some("all".to_owned()),
///     _ => None,
/// });
/// assert_eq!(config.live, LiveMode::All);
/// assert!(warnings.is_empty());
/// ```
pub mod config {
    pub use crate::base::config::{
        CaptureMode, Causal, Config, LiveMode, MemExact, OtlpSpans, ReportSelection, TraceCompress,
        TraceFormat,
    };
}

/// Reading the Chrome JSON traces perfgraph writes, one event at a time, for tools that merge or convert
/// them (what `perfgraph merge --trace` reads them with).
///
/// ```
/// let trace = br#"[{"name":"solve","ph":"X","pid":1,"tid":1,"ts":0,"dur":5}]"#;
/// let mut names = Vec::new();
/// perfgraph_core::trace::read_events(&trace[..], |e| {
///     names.push(e["name"].as_str().unwrap_or("").to_owned());
///     Ok(true)
/// })
/// .unwrap();
/// assert_eq!(names, ["solve"]);
/// ```
pub mod trace {
    pub use crate::export::chrome_read::{
        MAX_STRING_BYTES, MAX_TRACE_BYTES, TraceIdentity, read_events, read_identity,
    };
}

/// The critical path of a run, its wait chains and what-ifs (ThreadScope's question: which sections, if
/// faster, would make the program finish sooner?), from a [`Timeline`](critical::Timeline) of the threads'
/// calls, the intervals they were blocked and who woke them.
///
/// ```
/// use perfgraph_core::critical::{self, Blocked, Call, Options, Timeline, Wake};
///
/// // `main` waits 10..90 for a worker that computes `solve` 5..89 and then wakes it.
/// let mut t = Timeline::default();
/// let (main, worker) = (t.thread("main", 0, 100), t.thread("worker", 5, 89));
/// let (solve, done) = (t.name("solve"), t.name("done"));
/// t.threads[worker].calls.push(Call::new(solve, 5, 89));
/// t.threads[main].blocked.push(Blocked::new(done, 10, 90).woken_by(Wake { thread: 1, at_ns: 89 }));
/// t.settle();
/// let path = critical::analyse(&t, &Options::default()).unwrap();
/// assert_eq!(path.sections[0].name, "solve");
/// assert_eq!(path.sections[0].path_ns, 84);
/// ```
pub mod critical {
    pub use crate::data::timeline::{Blocked, Call, ThreadLine, Timeline, Wake};
    pub use crate::export::chrome_timeline::read_timeline;
    pub use crate::report::critical::{
        ChainLink, CriticalPath, Options, OtherTime, PathSection, Piece, PieceKind, Scope,
        WaitChain, WhatIf, analyse,
    };
}

/// The run as one self-contained HTML page (`PERFGRAPH_HTML=path` at exit, `perfgraph html`): a flame
/// graph, every table of the text report made of the same cells, latency histograms, series over time and
/// the critical path, with no network request and nothing outside the file.
///
/// ```
/// let mut html = Vec::new();
/// perfgraph_core::report()
///     .write_html(&mut html, &perfgraph_core::html::Page::default())
///     .unwrap();
/// let html = String::from_utf8(html).unwrap();
/// assert!(html.starts_with("<!doctype html>") && html.contains("Performance Graph"));
/// ```
pub mod html {
    pub use crate::report::html::{MAX_FRAMES, MAX_TABLE_ROWS, Page, Series, write_table_page};
}

/// Names made safe for a terminal, as the report's tables print them: a tool that prints another process's
/// names (an `attach::Status`'s program, threads and sections) puts them through [`escape`](text::escape).
pub mod text {
    pub use crate::base::text::escape;
}

pub use base::config::Verbosity;
pub use base::heap::CountingAllocator;
// Moved to `data` in 0.2.0; kept at the root for one release, out of the docs.
pub use collector::terminal::screen::{LiveStderr, suspend};
#[doc(hidden)]
pub use data::{SectionId, SectionInfo};

// The paths of 0.1.0, before the data and the settings had modules of their own: kept for one release,
// out of the docs.
#[doc(hidden)]
pub use config::{CaptureMode, Config, LiveMode, MemExact, ReportSelection, TraceCompress};
#[doc(hidden)]
#[allow(deprecated)]
pub use data::CpuTime;
/// The old name of [`data::combine`].
#[doc(hidden)]
#[allow(deprecated)]
pub use data::merge;
#[doc(hidden)]
pub use data::{
    AllocTotal, AsyncTotal, CallNode, CallTree, CpuTotal, Latency, MergeError, Merged, ProcessInfo,
    ProcessSpread, Report, RunInfo, RunningSection, SectionTotal, ThreadGroup, ThreadSnapshot,
    ThreadSummary,
};
/// The old name of [`ThreadGroup`](data::ThreadGroup).
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "renamed `data::ThreadGroup`: it holds exited threads of one name"
)]
pub type Group = data::ThreadGroup;
/// The old name of [`ProcessSpread`](data::ProcessSpread).
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "renamed `data::ProcessSpread`: it holds a call path's spread over processes"
)]
pub type Spread = data::ProcessSpread;
pub use future::Timed;
pub use local::guard::SectionGuard;
// Only for the compiler's note on a guard held across an `.await` (see `SectionGuard`): public because the
// `Send` impl that carries the note must name them, hidden because nobody uses them.
#[doc(hidden)]
pub use local::guard::{HeldAcrossAwait, NotHeldAcrossAwait};
pub use local::verbosity::set_verbosity;
pub use perfgraph_macros::{counter, event, time_future, time_section, timed};
pub use report::TABLE_DEPTH;
#[cfg(feature = "tracing")]
pub use tracing_layer::TracingLayer;

/// An `io::Write` to stderr that cooperates with live print: each write ends an open dots line first (as
/// [`suspend`] does), and live print then says `Still` / `Currently` / `Finished` as MOOSE does after other
/// output. Use it for the program's own logging: as a `tracing-subscriber` writer
/// (`tracing_subscriber::fmt().with_writer(perfgraph_core::stderr)`: any `Fn() -> impl io::Write` is a
/// `MakeWriter`), or with `env_logger` (`.target(env_logger::Target::Pipe(Box::new(perfgraph_core::stderr())))`).
/// Each `write` call goes out whole, so a logger that writes one record per call never has a live line cut
/// into it.
///
/// ```
/// use std::io::Write;
/// use perfgraph_core::timed;
///
/// // What `with_writer` and `Target::Pipe` take.
/// let make_writer: fn() -> perfgraph_core::LiveStderr = perfgraph_core::stderr;
/// let mut pipe: Box<dyn Write + Send> = Box::new(make_writer());
///
/// #[timed(live = "Solving", dots)]
/// fn solve(log: &mut dyn Write) {
///     writeln!(log, "INFO step 3 converged").unwrap();
/// }
///
/// solve(&mut pipe);
/// ```
pub fn stderr() -> LiveStderr {
    LiveStderr
}

/// Information about section `id`, if registered.
pub fn section_info(id: data::SectionId) -> Option<data::SectionInfo> {
    base::registry::info(id)
}

/// Every registered section, by id.
pub fn sections() -> Vec<data::SectionInfo> {
    base::registry::all()
}

/// The clock in use: `"tsc"` (the invariant timestamp counter) or `"CLOCK_MONOTONIC"` (`"manual"` only in
/// this crate's deterministic tests).
pub fn clock_source() -> &'static str {
    entry::start();
    base::clock::source().name()
}

/// The settings in force, read from the environment at first use.
pub fn config() -> &'static Config {
    entry::config()
}

/// The verbosity in force (reading `PERFGRAPH_VERBOSITY` if nothing has yet).
pub fn verbosity() -> Verbosity {
    if let Some(v) = local::verbosity::current() {
        return v;
    }
    entry::start();
    local::verbosity::current().unwrap_or(Verbosity::Off)
}

/// A snapshot of every thread that recorded, in order of first section.
///
/// ```
/// use perfgraph_core::{threads, timed};
///
/// #[timed]
/// fn work() -> u32 { 42 }
///
/// work();
/// let me = threads().into_iter().find(|t| t.name == std::thread::current().name().unwrap()).unwrap();
/// let node = me.tree.nodes.iter().find(|n| n.name == "work").unwrap();
/// assert_eq!(node.calls, 1);
/// ```
pub fn threads() -> Vec<ThreadSnapshot> {
    entry::start();
    local::snapshot::all().0
}

/// The call tree of all threads combined by call path (a section under two parents stays two nodes).
///
/// ```
/// #[perfgraph_core::timed]
/// fn step() {}
///
/// std::thread::scope(|s| {
///     s.spawn(step);
///     s.spawn(step);
/// });
/// assert_eq!(perfgraph_core::combined().find(&["step"]).unwrap().calls, 2);
/// ```
pub fn combined() -> CallTree {
    data::combine(threads().iter().map(|t| &t.tree))
}

/// The old name of [`combined`]: "merge" now names only the merge of many processes' runs.
#[doc(hidden)]
#[deprecated(
    since = "0.2.0",
    note = "renamed `combined`: threads are combined, processes merged"
)]
pub fn merged() -> CallTree {
    combined()
}

/// Takes a report of everything recorded so far, while threads keep running: counts are exact, and running
/// sections count with their time so far.
///
/// ```
/// use perfgraph_core::{report, timed};
///
/// #[timed]
/// fn assemble() {}
///
/// for _ in 0..3 {
///     assemble();
/// }
/// let r = report();
/// assert_eq!(r.tree.find(&["assemble"]).unwrap().calls, 3);
/// assert_eq!(r.tree.root().total_ns, r.run.wall_ns);
/// let table = r.to_string();
/// assert!(table.starts_with("Performance Graph:\n"));
/// assert!(table.lines().any(|l| l.starts_with("|   assemble ")));
/// ```
pub fn report() -> Report {
    local::snapshot::report(entry::config())
}

/// What the macros' expansions name: the call sites' statics, the calls they make and the types those
/// return. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::base::registry::{Name, Section, SectionMeta};
    pub use crate::data::args::ArgValue;
    pub use crate::entry::{counter, enter, event, with_args};
    pub use crate::future::{FutureArgs, future_args};
    pub use crate::local::args::{ViaDisplay, ViaPrimitive, Wrap};
    pub use crate::local::counters::{CounterSite, CounterValue};
    pub use crate::local::guard::{ArgsGuard, Guard};
    pub use crate::local::marks::EventSite;
}

/// Hooks for perfgraph's own tests, benchmarks and truth harness: a fake or drifting clock, a fake resident
/// set, a paused drain, the background thread's passes, single reads of what a section reads. Not a public
/// API: it changes without notice.
#[doc(hidden)]
pub mod __test_hooks {
    pub use crate::base::process::passes;

    /// For tests, examples and benchmarks, not a public API: a small seeded generator (xorshift), so a
    /// random program, timeline or workload is the same for the same seed and a failure reproduces.
    #[derive(Debug, Clone)]
    pub struct Rng(pub u64);

    impl Rng {
        /// The next number below `n` (0 for `n` of 0).
        pub fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }
    /// For tests, not a public API: rings the background thread's doorbell (a pass soon).
    pub use crate::base::process::wake as wake_background;
    pub use crate::collector::pause_draining;

    /// For the benchmark of the latency histogram's cost, not a public API: runs `f`, and the call paths
    /// this thread makes during it get no latency histogram (as paths past a thread's first 1,023). The
    /// same leaf section can then be timed on a path with a histogram and on one without, in one process.
    pub fn without_latency_histograms<R>(f: impl FnOnce() -> R) -> R {
        crate::local::latency::without_blocks(f)
    }

    /// For benchmarks, not a public API: one exact resident-memory read, bytes (a `pread` of
    /// `/proc/self/statm` on Linux), as a section with exact memory (`PERFGRAPH_MEM_EXACT`) makes at each
    /// boundary; `None` where it cannot be read.
    pub fn read_rss_bytes() -> Option<u64> {
        crate::base::sys::rss_bytes()
    }

    /// For benchmarks, not a public API: one read of the calling thread's CPU clock, ns
    /// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), as a section with the `cpu` option makes at each
    /// boundary; `None` where it cannot be read.
    pub fn read_thread_cpu_ns() -> Option<u64> {
        crate::base::sys::own_cpu_ns()
    }

    /// For benchmarks, not a public API: one read of the calling thread's context switches
    /// (`getrusage(RUSAGE_THREAD)`), as a CPU-measuring section makes at each boundary with
    /// `PERFGRAPH_SWITCHES=on`; `None` where it cannot be read.
    pub fn read_thread_switches() -> Option<(u64, u64)> {
        crate::base::sys::own_switches()
    }

    /// For benchmarks, not a public API: from now on the recording threads push what a trace wants (a
    /// call's args, events, counter values) as if one were being written (`on`), or not, though none is:
    /// what recording them costs the thread, without the background thread's writing.
    pub fn record_as_if_tracing(on: bool) {
        crate::entry::start();
        crate::local::marks::set_wanted(on);
    }

    /// The clock's raw ticks now (for benchmarks of the clock itself).
    #[inline(always)]
    pub fn clock_now() -> u64 {
        crate::base::clock::now().0
    }

    /// For deterministic tests, not a public API: makes the clock a manual one that reads `start_ticks`
    /// and moves only by [`advance_clock`]. Its ticks are nanoseconds (the tick length stays exactly 1 ns)
    /// and its name in reports and exports is `"manual"`. Call it before the runtime starts (before the
    /// first recorded section and before anything that reads the settings); it panics after.
    pub fn fake_clock(start_ticks: u64) {
        crate::base::clock::select_manual(start_ticks);
    }

    /// For the truth harness, not a public API: makes the clock a counter whose frequency drifts during the
    /// run (its rate rises by 0.4% from 0.7 s to 2.2 s after this call), so that the calibration moves and
    /// every figure must follow it; its name in reports and exports is `"drifting"`. Call it before the
    /// runtime starts, as [`fake_clock`]; it panics after.
    pub fn drifting_clock() {
        crate::base::clock::select_drifting();
    }

    /// For deterministic tests, not a public API: moves the clock of [`fake_clock`] forward by `ns`
    /// nanoseconds, for every thread. Panics without [`fake_clock`].
    pub fn advance_clock(ns: u64) {
        crate::base::clock::advance_manual(ns);
    }

    /// For deterministic tests, not a public API: sets the resident-set figure sections read (KiB); the
    /// background thread then never reads the system's figure, and its samples return this one. The first
    /// call must come before the runtime starts (it panics after); later calls change the figure.
    pub fn set_fake_rss_kb(kb: u32) {
        crate::collector::memory::set_fake_kb(kb);
    }
}
