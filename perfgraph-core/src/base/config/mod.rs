//! Settings from `PERFGRAPH_*` environment variables, read once at first use.
//!
//! Parsing is a pure function of a variable lookup ([`Config::from_lookup`]) so it is tested without touching
//! the process environment. A bad value never stops the program: it yields one warning line naming the
//! variable, the value and what is accepted, and the default applies.
//!
//! Its parts: [`modes`], the settings that pick one of a few modes (`Verbosity`, `LiveMode`, ...);
//! [`report_selection`], which end-of-run reports to print and `PERFGRAPH_REPORT`'s list; [`variables`],
//! the table of `PERFGRAPH_*` variables and how each value is parsed ([`row`]: a row of it, and the
//! parsers its parts share); [`causal`], causal profiling's settings and their rows of that table;
//! [`unknown`], the warnings for `PERFGRAPH_*` names that are not settings.

mod causal;
mod modes;
mod report_selection;
mod row;
mod unknown;
mod variables;

use std::path::PathBuf;
use std::sync::OnceLock;

pub use causal::Causal;
pub use modes::{
    CaptureMode, LiveMode, MemExact, OtlpSpans, TraceCompress, TraceFormat, Verbosity,
};
pub use report_selection::ReportSelection;
pub use unknown::unknown_variables;
use variables::VARIABLES;

/// The settings in force, once the runtime's start has read them.
static IN_FORCE: OnceLock<Config> = OnceLock::new();

/// Puts `config` in force (the runtime's start, once); returns what is in force.
pub fn set_in_force(config: Config) -> &'static Config {
    IN_FORCE.get_or_init(|| config)
}

/// The settings in force, `None` before the runtime's start read them.
pub fn in_force() -> Option<&'static Config> {
    IN_FORCE.get()
}

/// Records in each thread's ring (40 bytes each: 320 KiB) without a trace.
pub(crate) const RING_CAPACITY: usize = 8192;

/// Records in each thread's ring while a trace is written (40 bytes each: 10 MiB, resident only as far as a
/// thread filled it): 131 ms of a thread recording 2 million sections a second, so a background thread
/// kept off the CPU by other work for a while loses nothing.
pub(crate) const TRACE_RING_CAPACITY: usize = 1 << 18;

/// Every setting, with its default.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// `PERFGRAPH_VERBOSITY`: highest recorded level (0..=3), `None` for `off`. Default 1.
    pub verbosity: Option<u8>,
    /// `PERFGRAPH_TIME_LIMIT` in seconds (default 1.0), as nanoseconds.
    pub time_limit_ns: u64,
    /// `PERFGRAPH_MEM_LIMIT` in MB (default 100), as bytes.
    pub mem_limit_bytes: u64,
    /// `PERFGRAPH_LIVE`: `on` (default), `off` or `all`.
    pub live: LiveMode,
    /// `PERFGRAPH_REPORT`: comma list of `graph`, `branch`, `sections[=N]`, `latency`, `threads`, `async`,
    /// `alloc`, `cpu`, `all`. Default none.
    pub report: ReportSelection,
    /// `PERFGRAPH_INTERVAL` in seconds: per-thread interval statistics. Default off.
    pub interval_ns: Option<u64>,
    /// `PERFGRAPH_INTERVAL_DEPTH`: the interval statistics' lines go down to sections at this depth (1:
    /// top-level sections only), 1..=64. Default 1.
    pub interval_depth: u32,
    /// `PERFGRAPH_TRACE`: the trace's path, streamed while the program runs: Perfetto protobuf when it ends
    /// in `.pftrace` or `.perfetto-trace`, Chrome trace JSON otherwise. Default off.
    pub trace: Option<PathBuf>,
    /// `PERFGRAPH_TRACE_LIMIT`: the trace file's largest size in bytes, `None` for unlimited (the default).
    pub trace_limit: Option<u64>,
    /// `PERFGRAPH_TRACE_COMPRESS`: `auto` (default), `on` or `off`.
    pub trace_compress: TraceCompress,
    /// `PERFGRAPH_FOLDED`: folded-stacks path. Default off.
    pub folded: Option<PathBuf>,
    /// `PERFGRAPH_JSON`: call-tree JSON path. Default off.
    pub json: Option<PathBuf>,
    /// `PERFGRAPH_HTML`: the self-contained HTML page's path, written at exit. Default off.
    pub html: Option<PathBuf>,
    /// `PERFGRAPH_CLOCK`: `auto` (default: the TSC when trustworthy) or `monotonic`.
    pub clock_monotonic: bool,
    /// `PERFGRAPH_MEM_INTERVAL` in milliseconds (default 20, 1..=1000): resident-memory sampling period.
    pub mem_interval_ns: u64,
    /// `PERFGRAPH_SIGNALS`: `on` (default) or `off`. On: SIGINT, SIGTERM and SIGHUP end the run with the
    /// reports and files written, and SIGABRT ends an open live line, for each of them whose disposition was
    /// the default when the runtime started.
    pub signals: bool,
    /// `PERFGRAPH_CAPTURE`: `auto` (default), `on` or `off`.
    pub capture: CaptureMode,
    /// `PERFGRAPH_MEM_EXACT`: `live` (default), `all` or `off`.
    pub mem_exact: MemExact,
    /// `PERFGRAPH_CPU`: `off` (default: only sections with the `cpu` option) or `all` (every recorded
    /// section reads the thread's CPU clock at its start and end).
    pub cpu_all: bool,
    /// `PERFGRAPH_SWITCHES`: `off` (default) or `on` (every section that reads its CPU clock also counts the
    /// thread's context switches: `voluntary_switches` and `involuntary_switches`).
    pub switches: bool,
    /// `PERFGRAPH_LISTEN`: `on` (default) or `off`. On: the background thread answers `perfgraph ps`, `dump`,
    /// `trace` and `top` on a private Unix socket (`$XDG_RUNTIME_DIR/perfgraph/<pid>.sock`, else
    /// `/tmp/perfgraph-<uid>/<pid>.sock`); only with the `listen` cargo feature.
    pub listen: bool,
    /// `PERFGRAPH_PROMETHEUS`: the address (`127.0.0.1:9464`) where the background thread serves `GET
    /// /metrics` in Prometheus's text format. Default off.
    pub prometheus: Option<std::net::SocketAddr>,
    /// `PERFGRAPH_OTLP`: an OpenTelemetry collector's base URL (`http://host:4318`), to which the
    /// background thread posts metrics (`/v1/metrics`) and spans (`/v1/traces`) in OTLP's protobuf
    /// encoding. Default off.
    pub otlp: Option<String>,
    /// `PERFGRAPH_OTLP_INTERVAL` in seconds (default 10, at least 0.1): how often the OTLP export posts;
    /// it also posts once at exit.
    pub otlp_interval_ns: u64,
    /// `PERFGRAPH_OTLP_SPANS`: `off`, `slow` (default) or `all`.
    pub otlp_spans: OtlpSpans,
    /// `PERFGRAPH_OTLP_SLOW` in seconds: the shortest call `PERFGRAPH_OTLP_SPANS=slow` sends; `None` (the
    /// default) for `PERFGRAPH_TIME_LIMIT`'s value, live print's own idea of slow.
    pub otlp_slow_ns: Option<u64>,
    /// `PERFGRAPH_CAUSAL` and its companions: causal profiling ([`Causal`]). Default off.
    pub causal: Causal,
}
impl Default for Config {
    fn default() -> Self {
        Config {
            verbosity: Some(1),
            time_limit_ns: 1_000_000_000,
            mem_limit_bytes: 100_000_000,
            live: LiveMode::On,
            report: ReportSelection::default(),
            interval_ns: None,
            interval_depth: 1,
            trace: None,
            trace_limit: None,
            trace_compress: TraceCompress::Auto,
            folded: None,
            html: None,
            json: None,
            clock_monotonic: false,
            mem_interval_ns: 20_000_000,
            signals: true,
            capture: CaptureMode::Auto,
            mem_exact: MemExact::Live,
            cpu_all: false,
            switches: false,
            listen: true,
            prometheus: None,
            otlp: None,
            otlp_interval_ns: 10_000_000_000,
            otlp_spans: OtlpSpans::Slow,
            otlp_slow_ns: None,
            causal: Causal::default(),
        }
    }
}

impl Config {
    /// Whether an output needs every section record (the trace, interval statistics), so the background
    /// thread must drain the rings at every pass and records lost to overflow are missing from it.
    pub fn needs_every_record(&self) -> bool {
        self.trace.is_some() || self.interval_ns.is_some() || self.otlp_spans_on()
    }

    /// Whether the OTLP export sends spans (so it reads every record, as the trace does).
    pub(crate) fn otlp_spans_on(&self) -> bool {
        self.otlp.is_some() && self.otlp_spans != OtlpSpans::Off
    }

    /// Records in each thread's ring: [`TRACE_RING_CAPACITY`] while a trace is written or every call is a
    /// span (`PERFGRAPH_OTLP_SPANS=all`: they keep every record, and the rings must hold what threads
    /// record between two drains), else [`RING_CAPACITY`].
    pub(crate) fn ring_capacity(&self) -> usize {
        if self.trace.is_some() || self.otlp.is_some() && self.otlp_spans == OtlpSpans::All {
            TRACE_RING_CAPACITY
        } else {
            RING_CAPACITY
        }
    }

    /// Reads the process environment. Returns the settings and one warning line per bad value and per
    /// `PERFGRAPH_*` variable that is not a setting. (The runtime itself reads them so only where the
    /// program is not in secure-execution mode: `base::secure`.)
    pub fn from_env() -> (Config, Vec<String>) {
        let (config, mut warnings) = Config::from_lookup(|name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        });
        let names = std::env::vars_os().map(|(name, _)| name.to_string_lossy().into_owned());
        warnings.extend(unknown_variables(names));
        (config, warnings)
    }

    /// Reads settings through `var` (a variable name to its value).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut c = Config::default();
        let mut warnings = Vec::new();
        for v in VARIABLES {
            let Some(value) = var(v.name) else {
                continue;
            };
            if !(v.apply)(&mut c, value.trim()) {
                warnings.push(format!(
                    "perfgraph: warning: {}={value:?} is not valid (accepted: {}); using the default, {}",
                    v.name, v.accepted, v.default
                ));
            } else if let Some(bad) = v.list_refuses {
                // A list that was applied: its good entries are in force; each bad one gets its own line.
                for item in bad(value.trim()) {
                    warnings.push(format!(
                        "perfgraph: warning: {}={value:?}: {item:?} is not valid (accepted: {}); it is left \
                         out, the rest applies",
                        v.name, v.accepted
                    ));
                }
            }
        }
        (c, warnings)
    }

    /// The name of every setting's variable (`PERFGRAPH_VERBOSITY`, ...), in the order they are read: what
    /// a test that runs a child process scrubs from its environment.
    pub const VARIABLE_NAMES: [&'static str; VARIABLES.len()] = {
        let mut names = [""; VARIABLES.len()];
        let mut i = 0;
        while i < VARIABLES.len() {
            names[i] = VARIABLES[i].name;
            i += 1;
        }
        names
    };
}

#[cfg(test)]
mod tests;
