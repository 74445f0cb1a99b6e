//! The settings that pick one of a few modes: what is recorded, what live print shows, whether the
//! program's output is captured, how a trace is compressed and which format it is, which calls OTLP sends
//! as spans, which sections read resident memory themselves.

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
