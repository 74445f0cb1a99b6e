//! The metrics catalog: every metric the Prometheus endpoint ([`prometheus`](super::prometheus)) and the
//! OTLP export ([`otlp::metrics`](super::otlp::metrics)) give, listed once ([`METRICS`]): its names in
//! each, its kind, its unit, its help text and where its value comes from. Both renderers walk the list in
//! its order and write each metric their way; neither names a metric of its own.
//!
//! | Prometheus | OTLP | kind | OTLP unit | when |
//! |---|---|---|---|---|
//! | `perfgraph_section_calls_total` | `perfgraph.section.calls` | counter (monotonic sum, int) | `{call}` | |
//! | `perfgraph_section_seconds_total` | `perfgraph.section.time` | counter, children included | `s` | |
//! | `perfgraph_section_self_seconds_total` | `perfgraph.section.self_time` | counter | `s` | |
//! | `perfgraph_section_duration_seconds` | `perfgraph.section.duration` | histogram ([`BOUNDS_NS`]; OTLP: with min and max) | `s` | |
//! | | `perfgraph.section.allocations`, `perfgraph.section.allocated` | counters | `{allocation}`, `By` | the counting allocator |
//! | | `perfgraph.section.cpu_time` | counter | `s` | some section measured it |
//! | `perfgraph_resident_memory_bytes` | `perfgraph.memory.resident` | gauge | `By` | |
//! | `perfgraph_heap_bytes` | `perfgraph.memory.heap` | gauge | `By` | the counting allocator |
//! | `perfgraph_threads` | `perfgraph.threads` | gauge | `{thread}` | |
//! | | `perfgraph.sections.not_exported` | gauge | `{section}` | more than [`MAX_SECTIONS`] |
//! | | `perfgraph.spans.lost` | counter | `{span}` | spans on |
//!
//! A per-section metric has one series per section, labelled (Prometheus) or with the attribute (OTLP)
//! `section`, the section's name; a process metric has one and no label. Prometheus's names and units are
//! its own (the unit in the name, `_total` on a counter), kept as they were when each export was written:
//! both sets of names are a contract with the dashboards that read them. Where Prometheus has no name
//! for a metric, only OTLP gives it (Prometheus says how many sections it left out in a comment line).
//!
//! Adding a metric by section: its figure in [`Section`] (summed in `by_section::sections`), a row here,
//! the user guide's tables ("Many machines").
//!
//! [`BOUNDS_NS`]: super::by_section::BOUNDS_NS
//! [`MAX_SECTIONS`]: super::by_section::MAX_SECTIONS

use super::by_section::{Process, Section};

/// A metric's kind: Prometheus's `TYPE` and OTLP's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Prometheus `counter`; OTLP a cumulative monotonic `Sum` since the process started.
    Counter,
    /// Prometheus `gauge`; OTLP a `Gauge`.
    Gauge,
    /// The duration histogram ([`Source::Durations`]): Prometheus `histogram`; OTLP an explicit-bounds
    /// `Histogram`.
    Histogram,
}

impl Kind {
    /// Prometheus's word for it (`# TYPE`).
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn prometheus(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A point's value in the figure's own unit; each export writes it its way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// A count or a size in bytes: Prometheus's integer, OTLP's int.
    Count(u64),
    /// A figure that may be negative (the heap): the same.
    Signed(i64),
    /// A time, ns: seconds, Prometheus's float and OTLP's double.
    Ns(u64),
}

/// What the metrics are read from: the sections exported, how many more there were, the process's
/// figures and, with spans on (OTLP), the spans lost so far.
pub(crate) struct Figures<'a> {
    pub sections: &'a [Section<'a>],
    pub left_out: usize,
    pub process: Process,
    pub spans_lost: Option<u64>,
}

/// When a per-section metric is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// Always.
    Always,
    /// With the counting allocator (the process's heap is known).
    Heap,
    /// When some section has the figure.
    Measured,
}

/// Where a metric's value comes from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// A point per section that has the figure (`None`: the section has no point), given [`When`].
    Section(fn(&Section) -> Option<Number>, When),
    /// The completed calls' durations of each section ([`Section`]'s `counts`, `sum_ns`, `min_max_ns`),
    /// which each export lays out as its histogram.
    Durations,
    /// One point for the process; `None`: the metric is not given.
    Process(fn(&Figures) -> Option<Number>),
}

/// One metric, as both exports give it.
pub(crate) struct Metric {
    /// Its name in Prometheus's text (the histogram's adds `_bucket`, `_sum` and `_count`); `None`: OTLP
    /// only.
    pub prometheus: Option<&'static str>,
    /// Its name in OTLP.
    pub otlp: &'static str,
    pub kind: Kind,
    /// OTLP's unit (UCUM); Prometheus's name carries it.
    pub unit: &'static str,
    /// Prometheus's `# HELP`, OTLP's description.
    pub help: &'static str,
    pub source: Source,
}

impl Metric {
    /// Whether the metric is given for `figures`.
    pub(crate) fn given(&self, figures: &Figures) -> bool {
        match self.source {
            Source::Section(_, When::Always) | Source::Durations => true,
            Source::Section(_, When::Heap) => figures.process.heap_bytes.is_some(),
            Source::Section(value, When::Measured) => {
                figures.sections.iter().any(|s| value(s).is_some())
            }
            Source::Process(value) => value(figures).is_some(),
        }
    }
}

/// Every metric, in the order both exports write them.
pub(crate) const METRICS: &[Metric] = &[
    Metric {
        prometheus: Some("perfgraph_section_calls_total"),
        otlp: "perfgraph.section.calls",
        kind: Kind::Counter,
        unit: "{call}",
        help: "Calls of the section started, every call path and thread summed.",
        source: Source::Section(|s| Some(Number::Count(s.calls)), When::Always),
    },
    Metric {
        prometheus: Some("perfgraph_section_seconds_total"),
        otlp: "perfgraph.section.time",
        kind: Kind::Counter,
        unit: "s",
        help: "Time in the section, children included (outermost calls of a recursion only).",
        source: Source::Section(|s| Some(Number::Ns(s.total_ns)), When::Always),
    },
    Metric {
        prometheus: Some("perfgraph_section_self_seconds_total"),
        otlp: "perfgraph.section.self_time",
        kind: Kind::Counter,
        unit: "s",
        help: "Time in the section not in its children.",
        source: Source::Section(|s| Some(Number::Ns(s.self_ns)), When::Always),
    },
    Metric {
        prometheus: Some("perfgraph_section_duration_seconds"),
        otlp: "perfgraph.section.duration",
        kind: Kind::Histogram,
        unit: "s",
        help: "Durations of the section's completed calls.",
        source: Source::Durations,
    },
    Metric {
        prometheus: None,
        otlp: "perfgraph.section.allocations",
        kind: Kind::Counter,
        unit: "{allocation}",
        help: "Heap allocations in the section's completed calls, children included.",
        source: Source::Section(|s| Some(Number::Count(s.allocs)), When::Heap),
    },
    Metric {
        prometheus: None,
        otlp: "perfgraph.section.allocated",
        kind: Kind::Counter,
        unit: "By",
        help: "Bytes those allocations asked for.",
        source: Source::Section(|s| Some(Number::Count(s.alloc_bytes)), When::Heap),
    },
    Metric {
        prometheus: None,
        otlp: "perfgraph.section.cpu_time",
        kind: Kind::Counter,
        unit: "s",
        help: "CPU time of the section's completed calls, children included (sections that measure it).",
        source: Source::Section(|s| s.cpu_ns.map(Number::Ns), When::Measured),
    },
    Metric {
        prometheus: Some("perfgraph_resident_memory_bytes"),
        otlp: "perfgraph.memory.resident",
        kind: Kind::Gauge,
        unit: "By",
        help: "The process's resident memory, as last sampled.",
        source: Source::Process(|f| Some(Number::Count(f.process.rss_bytes))),
    },
    Metric {
        prometheus: Some("perfgraph_heap_bytes"),
        otlp: "perfgraph.memory.heap",
        kind: Kind::Gauge,
        unit: "By",
        help: "The process's heap: bytes allocated and not freed (perfgraph's counting allocator).",
        source: Source::Process(|f| f.process.heap_bytes.map(Number::Signed)),
    },
    Metric {
        prometheus: Some("perfgraph_threads"),
        otlp: "perfgraph.threads",
        kind: Kind::Gauge,
        unit: "{thread}",
        help: "Live threads that recorded a section.",
        source: Source::Process(|f| Some(Number::Count(f.process.threads as u64))),
    },
    Metric {
        prometheus: None,
        otlp: "perfgraph.sections.not_exported",
        kind: Kind::Gauge,
        unit: "{section}",
        help: "Sections past the export's cap (the heaviest are exported).",
        source: Source::Process(|f| (f.left_out > 0).then_some(Number::Count(f.left_out as u64))),
    },
    Metric {
        prometheus: None,
        otlp: "perfgraph.spans.lost",
        kind: Kind::Counter,
        unit: "{span}",
        help: "Calls not sent as spans: lost to ring overflow, or to a full buffer or a batch the collector did not take.",
        source: Source::Process(|f| f.spans_lost.map(Number::Count)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_in_each_exports_style() {
        for (i, m) in METRICS.iter().enumerate() {
            assert!(
                m.otlp.starts_with("perfgraph.") && !m.otlp.contains(' '),
                "{}",
                m.otlp
            );
            if let Some(p) = m.prometheus {
                assert!(p.starts_with("perfgraph_") && !p.contains('.'), "{p}");
                assert_eq!(m.kind == Kind::Counter, p.ends_with("_total"), "{p}");
            }
            assert!(m.help.ends_with('.'), "{}", m.otlp);
            assert_eq!(
                m.kind == Kind::Histogram,
                matches!(m.source, Source::Durations)
            );
            for n in &METRICS[i + 1..] {
                assert_ne!(m.otlp, n.otlp);
                assert!(m.prometheus.is_none() || m.prometheus != n.prometheus);
            }
        }
    }
}
