//! Settings from `PERFGRAPH_*` environment variables, read once at first use.
//!
//! Parsing is a pure function of a variable lookup ([`Config::from_lookup`]) so it is tested without touching
//! the process environment. A bad value never stops the program: it yields one warning line naming the
//! variable, the value and what is accepted, and the default applies.

use std::path::PathBuf;
use std::sync::OnceLock;

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

/// The highest level of section that is recorded (`PERFGRAPH_VERBOSITY`, or [`set_verbosity`](crate::set_verbosity)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Record nothing.
    Off,
    /// Record sections whose level is at most this (0..=3; higher values record every level).
    Level(u8),
}

/// How much live print shows (`PERFGRAPH_LIVE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LiveMode {
    /// No live print and no print thread work for it (`off`).
    Off,
    /// Sections that cross the time limit or the memory limit (`on`, the default).
    On,
    /// Every section's start and end, for debugging (`all`; MOOSE's live-all).
    All,
}

/// Whether perfgraph takes over the program's stdout and stderr once it shows its first live line
/// (`PERFGRAPH_CAPTURE`), so its own lines go only between the program's lines. A run that never shows a
/// live line has its descriptors left alone whatever the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CaptureMode {
    /// Capture fd 2 when it leads to a terminal, pipe, socket or file (where the program's writes and live
    /// lines can collide), and fd 1 too when it leads to the same place (`auto`, the default).
    Auto,
    /// Capture whenever fd 2 is open (fd 1 too when it leads to the same place) (`on`).
    On,
    /// Never: the program's descriptors stay as they are (`off`).
    Off,
}

/// Whether a Perfetto trace deflates its packets (`PERFGRAPH_TRACE_COMPRESS`; Chrome JSON never does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceCompress {
    /// While the background thread has time for it: up to a budget of CPU time a second, raw packets
    /// past it (`auto`, the default).
    Auto,
    /// Always, whatever it costs the background thread (`on`).
    On,
    /// Never: raw packets only (`off`).
    Off,
}

/// Which calls the OTLP export sends as spans (`PERFGRAPH_OTLP_SPANS`).
///
/// ```
/// use perfgraph_core::config::{Config, OtlpSpans};
///
/// let (config, _) = Config::from_lookup(|name| match name {
///     "PERFGRAPH_OTLP" => Some("http://127.0.0.1:4318".to_owned()),
///     "PERFGRAPH_OTLP_SPANS" => Some("all".to_owned()),
///     _ => None,
/// });
/// assert_eq!(config.otlp_spans, OtlpSpans::All);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpSpans {
    /// None: metrics only (`off`).
    Off,
    /// The calls that ran at least `PERFGRAPH_OTLP_SLOW` or printed a live line, and their callers on
    /// their thread (`slow`, the default).
    Slow,
    /// Every call, for short runs (`all`).
    All,
}

/// The format of a trace file, as `PERFGRAPH_TRACE`'s file name chooses it (and `perfgraph merge --trace`
/// reads it).
///
/// ```
/// use std::path::Path;
/// use perfgraph_core::config::TraceFormat;
///
/// assert_eq!(TraceFormat::of_path(Path::new("run.pftrace")), TraceFormat::Perfetto);
/// assert_eq!(TraceFormat::of_path(Path::new("run.trace.json")), TraceFormat::Chrome);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceFormat {
    /// Chrome's Trace Event JSON: any name but the Perfetto ones.
    Chrome,
    /// Perfetto's protobuf: a name ending in `.pftrace` or `.perfetto-trace`.
    Perfetto,
}

impl TraceFormat {
    /// The format a trace path asks for: Perfetto for a name ending in `.pftrace` or `.perfetto-trace`,
    /// Chrome JSON for any other.
    pub fn of_path(path: &std::path::Path) -> TraceFormat {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| n.ends_with(".pftrace") || n.ends_with(".perfetto-trace")) {
            TraceFormat::Perfetto
        } else {
            TraceFormat::Chrome
        }
    }
}

/// Which end-of-run reports to print (`PERFGRAPH_REPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReportSelection {
    /// `graph`: the call-graph table.
    pub graph: bool,
    /// `branch`: the heaviest branch.
    pub branch: bool,
    /// `sections[=N]`: the N heaviest sections by self time.
    pub sections: Option<usize>,
    /// `threads`: per-thread summary.
    pub threads: bool,
    /// `async`: per async section (timed futures), calls, polls, busy and wall time, cancellations.
    pub asyncs: bool,
    /// `alloc`: per section, its allocations and bytes (self and inclusive) and its peak heap growth; shown
    /// only when the counting allocator (`perfgraph_core::CountingAllocator`) is installed.
    pub alloc: bool,
    /// `cpu`: per section measuring its CPU time (the `cpu` option, `PERFGRAPH_CPU=all`), its CPU and waiting
    /// time; shown only when some section measured it.
    pub cpu: bool,
    /// `latency`: per section, its calls' durations (minimum, p50, p90, p99, maximum); as many sections
    /// as `sections` shows (10 without it).
    pub latency: bool,
    /// `counters`: per `counter!`, its samples, last, minimum, maximum and mean; shown only when some
    /// counter was set.
    pub counters: bool,
    /// `locks`: per lock name (`perfgraph_core::sync`), its acquisitions, waits and holds; shown only when
    /// some lock was used.
    pub locks: bool,
}

impl ReportSelection {
    /// True when nothing is selected.
    pub fn is_empty(&self) -> bool {
        *self == ReportSelection::default()
    }

    /// Every table, as `PERFGRAPH_REPORT=all` selects them (the 10 heaviest sections; `Allocations:` and
    /// `CPU:` only for a run that has their figures). Start from it, or from `default()` (nothing), and
    /// set the tables with the methods named as the fields:
    ///
    /// ```
    /// use perfgraph_core::config::ReportSelection;
    ///
    /// let some = ReportSelection::default().graph(true).sections(Some(3)).latency(true);
    /// assert!(some.graph && some.latency && !some.threads);
    /// assert_eq!(some.sections, Some(3));
    /// assert!(ReportSelection::all().cpu);
    /// ```
    pub fn all() -> ReportSelection {
        ReportSelection {
            graph: true,
            branch: true,
            sections: Some(10),
            threads: true,
            asyncs: true,
            alloc: true,
            cpu: true,
            latency: true,
            counters: true,
            locks: true,
        }
    }

    /// With or without the `graph` table.
    pub fn graph(mut self, on: bool) -> ReportSelection {
        self.graph = on;
        self
    }

    /// With or without the `branch` table.
    pub fn branch(mut self, on: bool) -> ReportSelection {
        self.branch = on;
        self
    }

    /// With the `sections` table of the N heaviest sections, or without it (`None`).
    pub fn sections(mut self, n: Option<usize>) -> ReportSelection {
        self.sections = n;
        self
    }

    /// With or without the `threads` table.
    pub fn threads(mut self, on: bool) -> ReportSelection {
        self.threads = on;
        self
    }

    /// With or without the `async` table.
    pub fn asyncs(mut self, on: bool) -> ReportSelection {
        self.asyncs = on;
        self
    }

    /// With or without the `alloc` table.
    pub fn alloc(mut self, on: bool) -> ReportSelection {
        self.alloc = on;
        self
    }

    /// With or without the `cpu` table.
    pub fn cpu(mut self, on: bool) -> ReportSelection {
        self.cpu = on;
        self
    }

    /// With or without the `latency` table.
    pub fn latency(mut self, on: bool) -> ReportSelection {
        self.latency = on;
        self
    }

    /// With or without the `counters` table.
    pub fn counters(mut self, on: bool) -> ReportSelection {
        self.counters = on;
        self
    }

    /// With or without the `locks` table.
    pub fn locks(mut self, on: bool) -> ReportSelection {
        self.locks = on;
        self
    }
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
}

/// Which sections read resident memory themselves at entry and exit (`PERFGRAPH_MEM_EXACT`), instead of
/// the figure the background thread samples every `PERFGRAPH_MEM_INTERVAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemExact {
    /// Sections with a `live` message (`live`, the default).
    Live,
    /// Every recorded section (`all`).
    All,
    /// None (`off`).
    Off,
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

/// One `PERFGRAPH_*` variable: its name, what the warning says is accepted and the default, and how a
/// (trimmed) value is applied. `apply` returns `false`, having changed nothing, for a value it refuses.
///
/// A comma list (`list_refuses` is `Some`) applies its good entries and leaves out the bad ones, one warning
/// each (`list_refuses` names them): one typo does not lose the rest. Only a list with no good entry at
/// all is refused whole.
struct Variable {
    name: &'static str,
    accepted: &'static str,
    default: &'static str,
    apply: fn(&mut Config, &str) -> bool,
    list_refuses: Option<fn(&str) -> Vec<String>>,
}

/// Every setting, in the order they are read (and warned about).
const VARIABLES: [Variable; 25] = [
    Variable {
        name: "PERFGRAPH_VERBOSITY",
        accepted: "off, 0, 1, 2, 3",
        default: "1",
        apply: |c, v| match v {
            "off" => {
                c.verbosity = None;
                true
            }
            "0" | "1" | "2" | "3" => {
                c.verbosity = v.parse().ok();
                true
            }
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_TIME_LIMIT",
        accepted: "a number of seconds >= 0.001, e.g. 1 or 0.5",
        default: "1.0",
        apply: |c, v| set(&mut c.time_limit_ns, seconds_ns(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_MEM_LIMIT",
        accepted: "a whole number of MB >= 1, e.g. 100",
        default: "100",
        apply: |c, v| {
            let mb = v
                .parse::<u64>()
                .ok()
                .filter(|mb| (1..=1_000_000_000).contains(mb));
            set(&mut c.mem_limit_bytes, mb.map(|mb| mb * 1_000_000))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_LIVE",
        accepted: "on, off, all",
        default: "on",
        apply: |c, v| {
            let mode = match v {
                "on" => LiveMode::On,
                "off" => LiveMode::Off,
                "all" => LiveMode::All,
                _ => return false,
            };
            set(&mut c.live, Some(mode))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_REPORT",
        accepted: "a comma list of graph, branch, sections[=N], latency, threads, async, alloc, cpu, counters, locks, all",
        default: "none",
        apply: |c, v| set(&mut c.report, parse_report(v).0),
        list_refuses: Some(|v| parse_report(v).1),
    },
    Variable {
        name: "PERFGRAPH_INTERVAL",
        accepted: "a number of seconds >= 0.001, or off",
        default: "off",
        apply: |c, v| v == "off" || set(&mut c.interval_ns, seconds_ns(v).map(Some)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_INTERVAL_DEPTH",
        accepted: "a whole number from 1 to 64",
        default: "1",
        apply: |c, v| {
            set(
                &mut c.interval_depth,
                v.parse::<u32>().ok().filter(|d| (1..=64).contains(d)),
            )
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_TRACE",
        accepted: "a file path",
        default: "off",
        apply: |c, v| set(&mut c.trace, path(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_FOLDED",
        accepted: "a file path",
        default: "off",
        apply: |c, v| set(&mut c.folded, path(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_JSON",
        accepted: "a file path",
        default: "off",
        apply: |c, v| set(&mut c.json, path(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_PROMETHEUS",
        accepted: "an address to listen on, IP:port (127.0.0.1:9464, [::1]:9464), or off",
        default: "off",
        apply: |c, v| v == "off" || set(&mut c.prometheus, v.parse().ok().map(Some)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_OTLP",
        accepted: "an OTLP/HTTP collector's base URL, http://host[:port][/path] (http://127.0.0.1:4318), or off",
        default: "off",
        apply: |c, v| {
            v == "off"
                || set(
                    &mut c.otlp,
                    super::endpoint::Endpoint::parse(v).map(|_| Some(v.to_owned())),
                )
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_OTLP_INTERVAL",
        accepted: "a number of seconds >= 0.1, e.g. 10 or 0.5",
        default: "10",
        apply: |c, v| {
            let ns = seconds_ns(v).filter(|&ns| ns >= 100_000_000);
            set(&mut c.otlp_interval_ns, ns)
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_OTLP_SPANS",
        accepted: "off, slow, all",
        default: "slow",
        apply: |c, v| {
            let spans = match v {
                "off" => OtlpSpans::Off,
                "slow" => OtlpSpans::Slow,
                "all" => OtlpSpans::All,
                _ => return false,
            };
            set(&mut c.otlp_spans, Some(spans))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_OTLP_SLOW",
        accepted: "a number of seconds >= 0.001, e.g. 0.1",
        default: "PERFGRAPH_TIME_LIMIT's value",
        apply: |c, v| set(&mut c.otlp_slow_ns, seconds_ns(v).map(Some)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_TRACE_LIMIT",
        accepted: "a file size in bytes >= 4096, with an optional K, M or G (1000, 1000000, 1000000000), or unlimited",
        default: "unlimited",
        apply: |c, v| v == "unlimited" || set(&mut c.trace_limit, file_size(v).map(Some)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_TRACE_COMPRESS",
        accepted: "auto, on, off",
        default: "auto",
        apply: |c, v| {
            let mode = match v {
                "auto" => TraceCompress::Auto,
                "on" => TraceCompress::On,
                "off" => TraceCompress::Off,
                _ => return false,
            };
            set(&mut c.trace_compress, Some(mode))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CLOCK",
        accepted: "auto, monotonic",
        default: "auto",
        apply: |c, v| match v {
            "auto" => true,
            "monotonic" => set(&mut c.clock_monotonic, Some(true)),
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_MEM_INTERVAL",
        accepted: "a whole number of milliseconds, 1 to 1000",
        default: "20",
        apply: |c, v| {
            let ms = v.parse::<u64>().ok().filter(|ms| (1..=1000).contains(ms));
            set(&mut c.mem_interval_ns, ms.map(|ms| ms * 1_000_000))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_MEM_EXACT",
        accepted: "live, all, off",
        default: "live",
        apply: |c, v| {
            let mode = match v {
                "live" => MemExact::Live,
                "all" => MemExact::All,
                "off" => MemExact::Off,
                _ => return false,
            };
            set(&mut c.mem_exact, Some(mode))
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CPU",
        accepted: "off, all",
        default: "off",
        apply: |c, v| match v {
            "off" => set(&mut c.cpu_all, Some(false)),
            "all" => set(&mut c.cpu_all, Some(true)),
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_SWITCHES",
        accepted: "off, on",
        default: "off",
        apply: |c, v| match v {
            "off" => set(&mut c.switches, Some(false)),
            "on" => set(&mut c.switches, Some(true)),
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_SIGNALS",
        accepted: "on, off",
        default: "on",
        apply: |c, v| match v {
            "on" => set(&mut c.signals, Some(true)),
            "off" => set(&mut c.signals, Some(false)),
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_LISTEN",
        accepted: "on, off",
        default: "on",
        apply: |c, v| match v {
            "on" => set(&mut c.listen, Some(true)),
            "off" => set(&mut c.listen, Some(false)),
            _ => false,
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CAPTURE",
        accepted: "auto, on, off",
        default: "auto",
        apply: |c, v| {
            let mode = match v {
                "auto" => CaptureMode::Auto,
                "on" => CaptureMode::On,
                "off" => CaptureMode::Off,
                _ => return false,
            };
            set(&mut c.capture, Some(mode))
        },
        list_refuses: None,
    },
];

/// One warning line for each `PERFGRAPH_*` name among `names` that is not a setting (a misspelling would
/// otherwise be ignored in silence), naming the closest setting when one is near: `PERFGRAPH_VERBOSE` gets
/// "did you mean PERFGRAPH_VERBOSITY?".
pub fn unknown_variables(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut unknown: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with("PERFGRAPH_") && !Config::VARIABLE_NAMES.contains(&n.as_str()))
        .collect();
    unknown.sort();
    unknown
        .iter()
        .map(|name| {
            let hint = closest(name)
                .map(|known| format!(" (did you mean {known}?)"))
                .unwrap_or_default();
            format!("perfgraph: warning: {name} is not a perfgraph setting{hint}; it is ignored")
        })
        .collect()
}

/// The setting whose name is nearest to `name` (edit distance of the part after `PERFGRAPH_`), if it is
/// near enough to be a misspelling: at most a third of the longer name's letters differ.
fn closest(name: &str) -> Option<&'static str> {
    let tail = |n: &str| n.trim_start_matches("PERFGRAPH_").to_ascii_uppercase();
    let wanted = tail(name);
    Config::VARIABLE_NAMES
        .iter()
        .map(|known| {
            let k = tail(known);
            (
                edit_distance(&wanted, &k),
                k.len().max(wanted.len()),
                *known,
            )
        })
        .filter(|&(d, len, _)| d > 0 && 3 * d <= len)
        .min_by_key(|&(d, _, _)| d)
        .map(|(_, _, known)| known)
}

/// Levenshtein distance between two ASCII-ish strings (by `char`).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Stores a parsed value; `false` (storing nothing) when there is none.
fn set<T>(slot: &mut T, value: Option<T>) -> bool {
    value.map(|v| *slot = v).is_some()
}

/// A file size: a whole number of bytes with an optional `K`, `M` or `G` (decimal multiples), at least
/// 4096 (room for the trace's header and closing lines).
fn file_size(v: &str) -> Option<u64> {
    let (digits, unit) = match v.as_bytes().last()? {
        b'K' | b'k' => (&v[..v.len() - 1], 1_000),
        b'M' => (&v[..v.len() - 1], 1_000_000),
        b'G' => (&v[..v.len() - 1], 1_000_000_000),
        _ => (v, 1),
    };
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(unit)
        .filter(|&n| n >= 4096)
}

/// A number of seconds from 1 ms to 1e9 s, as nanoseconds. Shorter limits are refused: a time limit of
/// `1e-12` would otherwise be a 0 ns limit that prints every section.
fn seconds_ns(v: &str) -> Option<u64> {
    let s = v.parse::<f64>().ok()?;
    (s.is_finite() && (0.001..1e9).contains(&s)).then_some((s * 1e9).round() as u64)
}

/// A non-empty file path.
fn path(v: &str) -> Option<Option<PathBuf>> {
    (!v.is_empty()).then(|| Some(PathBuf::from(v)))
}

/// The reports a comma list selects, and the entries that name none (left out). `None` when the list has
/// entries and none of them is good: the whole value is then refused.
fn parse_report(v: &str) -> (Option<ReportSelection>, Vec<String>) {
    let mut r = ReportSelection::default();
    let mut bad = Vec::new();
    let mut good = 0;
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "graph" => r.graph = true,
            "branch" => r.branch = true,
            "threads" => r.threads = true,
            "async" => r.asyncs = true,
            "alloc" => r.alloc = true,
            "cpu" => r.cpu = true,
            "latency" => r.latency = true,
            "counters" => r.counters = true,
            "locks" => r.locks = true,
            "sections" => r.sections = Some(10),
            // Every table; a `sections=N` given before keeps its N.
            "all" => r = ReportSelection::all().sections(r.sections.or(Some(10))),
            "off" | "none" => {}
            _ => match item
                .strip_prefix("sections=")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1)
            {
                Some(n) => r.sections = Some(n),
                None => {
                    bad.push(item.to_owned());
                    continue;
                }
            },
        }
        good += 1;
    }
    if good == 0 && !bad.is_empty() {
        return (None, bad);
    }
    (Some(r), bad)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
