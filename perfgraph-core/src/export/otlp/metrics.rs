//! The metrics request (`ExportMetricsServiceRequest`, posted to `/v1/metrics`): every section's figures by
//! name ([`by_section`](crate::export::by_section)), cumulative since the process started, and the process's
//! gauges.
//!
//! | metric | kind | unit |
//! |---|---|---|
//! | `perfgraph.section.calls` | monotonic sum (int) | `{call}` |
//! | `perfgraph.section.time` | monotonic sum, children included | `s` |
//! | `perfgraph.section.self_time` | monotonic sum | `s` |
//! | `perfgraph.section.duration` | histogram, explicit bounds ([`BOUNDS_NS`]), min and max | `s` |
//! | `perfgraph.section.allocations`, `perfgraph.section.allocated` | monotonic sums, with the counting allocator | `{allocation}`, `By` |
//! | `perfgraph.section.cpu_time` | monotonic sum, sections that measure it | `s` |
//! | `perfgraph.memory.resident`, `perfgraph.memory.heap` | gauges (heap with the counting allocator) | `By` |
//! | `perfgraph.threads` | gauge | `{thread}` |
//! | `perfgraph.sections.not_exported` | gauge, when more than [`MAX_SECTIONS`] | `{section}` |
//! | `perfgraph.spans.lost` | monotonic sum, with spans on | `{span}` |
//!
//! Every section's point has one attribute, `section` (its name), as the Prometheus endpoint's label.
//!
//! [`BOUNDS_NS`]: crate::export::by_section::BOUNDS_NS
//! [`MAX_SECTIONS`]: crate::export::by_section::MAX_SECTIONS

use super::{Attributes, Value, key_value, resource_field, scope_field};
use crate::export::by_section::{BOUNDS_NS, Process, Section};
use crate::export::protobuf::{double, fixed64, message, packed_fixed64, string, uint};

/// `AGGREGATION_TEMPORALITY_CUMULATIVE`.
const CUMULATIVE: u64 = 2;

/// The points' times: the start of the cumulative figures (the process's start) and now, ns since the
/// Unix epoch.
#[derive(Debug, Clone, Copy)]
pub struct Times {
    pub start_unix_ns: u64,
    pub now_unix_ns: u64,
}

/// A point's number.
#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Double(f64),
}

/// One metric's head: name, description, unit.
struct Head {
    name: &'static str,
    description: &'static str,
    unit: &'static str,
}

fn head(m: &mut Vec<u8>, h: &Head) {
    string(m, 1, h.name);
    string(m, 2, h.description);
    string(m, 3, h.unit);
}

/// A `NumberDataPoint` (field 1 of `Sum` and `Gauge`): the `section` attribute if any, the start time for
/// a sum, `now`, the number.
fn point(out: &mut Vec<u8>, section: Option<&str>, times: Option<Times>, n: Number, now: u64) {
    message(out, 1, |p| {
        if let Some(t) = times {
            fixed64(p, 2, t.start_unix_ns);
        }
        fixed64(p, 3, now);
        match n {
            Number::Double(v) => double(p, 4, v),
            Number::Int(v) => fixed64(p, 6, v as u64),
        }
        if let Some(name) = section {
            key_value(p, 7, "section", &Value::Str(name.to_owned()));
        }
    });
}

/// A cumulative monotonic `Sum` with one point per section (`value` gives it; `None` skips the section).
fn sum(
    out: &mut Vec<u8>,
    h: &Head,
    sections: &[Section],
    times: Times,
    value: impl Fn(&Section) -> Option<Number>,
) {
    message(out, 2, |m| {
        head(m, h);
        message(m, 7, |s| {
            for sec in sections {
                if let Some(n) = value(sec) {
                    point(s, Some(sec.name), Some(times), n, times.now_unix_ns);
                }
            }
            uint(s, 2, CUMULATIVE);
            uint(s, 3, 1);
        });
    });
}

/// A `Gauge` with one point and no attributes.
fn gauge(out: &mut Vec<u8>, h: &Head, n: Number, now: u64) {
    message(out, 2, |m| {
        head(m, h);
        message(m, 5, |g| point(g, None, None, n, now));
    });
}

/// The duration histogram: one `HistogramDataPoint` per section with completed calls.
fn histogram(out: &mut Vec<u8>, sections: &[Section], times: Times) {
    message(out, 2, |m| {
        head(
            m,
            &Head {
                name: "perfgraph.section.duration",
                description: "Durations of the section's completed calls.",
                unit: "s",
            },
        );
        message(m, 9, |h| {
            for s in sections.iter().filter(|s| s.completed() > 0) {
                message(h, 1, |p| {
                    fixed64(p, 2, times.start_unix_ns);
                    fixed64(p, 3, times.now_unix_ns);
                    fixed64(p, 4, s.completed());
                    double(p, 5, s.sum_ns as f64 / 1e9);
                    packed_fixed64(p, 6, s.counts.iter().copied());
                    packed_fixed64(p, 7, BOUNDS_NS.iter().map(|&b| (b as f64 / 1e9).to_bits()));
                    key_value(p, 9, "section", &Value::Str(s.name.to_owned()));
                    if let Some((min, max)) = s.min_max_ns {
                        double(p, 11, min as f64 / 1e9);
                        double(p, 12, max as f64 / 1e9);
                    }
                });
            }
            uint(h, 2, CUMULATIVE);
        });
    });
}

/// The request's bytes: `sections` (at most `MAX_SECTIONS`, `left_out` more not exported), the process's
/// figures, and the spans lost so far when spans are on.
pub fn request(
    resource: &Attributes,
    sections: &[Section],
    left_out: usize,
    process: Process,
    times: Times,
    spans_lost: Option<u64>,
) -> Vec<u8> {
    let now = times.now_unix_ns;
    let mut out = Vec::with_capacity(1024 + sections.len() * 700);
    message(&mut out, 1, |rm| {
        resource_field(rm, resource);
        message(rm, 2, |sm| {
            scope_field(sm);
            sum(
                sm,
                &Head {
                    name: "perfgraph.section.calls",
                    description: "Calls of the section started, every call path and thread summed.",
                    unit: "{call}",
                },
                sections,
                times,
                |s| Some(Number::Int(s.calls as i64)),
            );
            sum(
                sm,
                &Head {
                    name: "perfgraph.section.time",
                    description: "Time in the section, children included (outermost calls of a recursion only).",
                    unit: "s",
                },
                sections,
                times,
                |s| Some(Number::Double(s.total_ns as f64 / 1e9)),
            );
            sum(
                sm,
                &Head {
                    name: "perfgraph.section.self_time",
                    description: "Time in the section not in its children.",
                    unit: "s",
                },
                sections,
                times,
                |s| Some(Number::Double(s.self_ns as f64 / 1e9)),
            );
            histogram(sm, sections, times);
            if process.heap_bytes.is_some() {
                sum(
                    sm,
                    &Head {
                        name: "perfgraph.section.allocations",
                        description: "Heap allocations in the section's completed calls, children included.",
                        unit: "{allocation}",
                    },
                    sections,
                    times,
                    |s| Some(Number::Int(s.allocs as i64)),
                );
                sum(
                    sm,
                    &Head {
                        name: "perfgraph.section.allocated",
                        description: "Bytes those allocations asked for.",
                        unit: "By",
                    },
                    sections,
                    times,
                    |s| Some(Number::Int(s.alloc_bytes as i64)),
                );
            }
            if sections.iter().any(|s| s.cpu_ns.is_some()) {
                sum(
                    sm,
                    &Head {
                        name: "perfgraph.section.cpu_time",
                        description: "CPU time of the section's completed calls, children included (sections that measure it).",
                        unit: "s",
                    },
                    sections,
                    times,
                    |s| s.cpu_ns.map(|ns| Number::Double(ns as f64 / 1e9)),
                );
            }
            gauge(
                sm,
                &Head {
                    name: "perfgraph.memory.resident",
                    description: "The process's resident memory, as last sampled.",
                    unit: "By",
                },
                Number::Int(process.rss_bytes as i64),
                now,
            );
            if let Some(heap) = process.heap_bytes {
                gauge(
                    sm,
                    &Head {
                        name: "perfgraph.memory.heap",
                        description: "The process's heap: bytes allocated and not freed (perfgraph's counting allocator).",
                        unit: "By",
                    },
                    Number::Int(heap),
                    now,
                );
            }
            gauge(
                sm,
                &Head {
                    name: "perfgraph.threads",
                    description: "Live threads that recorded a section.",
                    unit: "{thread}",
                },
                Number::Int(process.threads as i64),
                now,
            );
            if left_out > 0 {
                gauge(
                    sm,
                    &Head {
                        name: "perfgraph.sections.not_exported",
                        description: "Sections past the export's cap (the heaviest are exported).",
                        unit: "{section}",
                    },
                    Number::Int(left_out as i64),
                    now,
                );
            }
            if let Some(lost) = spans_lost {
                message(sm, 2, |m| {
                    head(
                        m,
                        &Head {
                            name: "perfgraph.spans.lost",
                            description: "Calls not sent as spans: lost to ring overflow, or to a full buffer or a batch the collector did not take.",
                            unit: "{span}",
                        },
                    );
                    message(m, 7, |s| {
                        point(s, None, Some(times), Number::Int(lost as i64), now);
                        uint(s, 2, CUMULATIVE);
                        uint(s, 3, 1);
                    });
                });
            }
        });
    });
    out
}
