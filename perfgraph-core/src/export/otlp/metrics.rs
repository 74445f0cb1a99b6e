//! The metrics request (`ExportMetricsServiceRequest`, posted to `/v1/metrics`): the metrics of
//! [`catalog`](crate::export::catalog), in its order, each under its OTLP name and unit: every section's
//! figures by name ([`by_section`](crate::export::by_section)), cumulative since the process started
//! (counters are monotonic sums; the duration histogram has explicit bounds, [`BOUNDS_NS`], with min and
//! max), and the process's gauges.
//!
//! Every section's point has one attribute, `section` (its name), as the Prometheus endpoint's label.
//!
//! [`BOUNDS_NS`]: crate::export::by_section::BOUNDS_NS

use super::{Attributes, Value, key_value, resource_field, scope_field};
use crate::export::by_section::{BOUNDS_NS, Process, Section};
use crate::export::catalog::{Figures, Kind, METRICS, Metric, Number, Source};
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

/// A metric's head: name, description, unit.
fn head(m: &mut Vec<u8>, metric: &Metric) {
    string(m, 1, metric.otlp);
    string(m, 2, metric.help);
    string(m, 3, metric.unit);
}

/// A `NumberDataPoint` (field 1 of `Sum` and `Gauge`): the `section` attribute if any, the start time for
/// a sum, `now`, the number (an int, or seconds as a double).
fn point(out: &mut Vec<u8>, section: Option<&str>, times: Option<Times>, n: Number, now: u64) {
    message(out, 1, |p| {
        if let Some(t) = times {
            fixed64(p, 2, t.start_unix_ns);
        }
        fixed64(p, 3, now);
        match n {
            Number::Ns(ns) => double(p, 4, ns as f64 / 1e9),
            Number::Count(v) => fixed64(p, 6, v),
            Number::Signed(v) => fixed64(p, 6, v as u64),
        }
        if let Some(name) = section {
            key_value(p, 7, "section", &Value::Str(name.to_owned()));
        }
    });
}

/// A metric of numbers: a cumulative monotonic `Sum` (a counter) or a `Gauge`, with `points` (the
/// section each is of, if any, and its number).
fn numbers<'a>(
    out: &mut Vec<u8>,
    metric: &Metric,
    points: impl Iterator<Item = (Option<&'a str>, Number)>,
    times: Times,
) {
    let now = times.now_unix_ns;
    message(out, 2, |m| {
        head(m, metric);
        if metric.kind == Kind::Gauge {
            message(m, 5, |g| {
                for (section, n) in points {
                    point(g, section, None, n, now);
                }
            });
        } else {
            message(m, 7, |s| {
                for (section, n) in points {
                    point(s, section, Some(times), n, now);
                }
                uint(s, 2, CUMULATIVE);
                uint(s, 3, 1);
            });
        }
    });
}

/// The duration histogram: one `HistogramDataPoint` per section with completed calls.
fn histogram(out: &mut Vec<u8>, metric: &Metric, sections: &[Section], times: Times) {
    message(out, 2, |m| {
        head(m, metric);
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
    let figures = Figures {
        sections,
        left_out,
        process,
        spans_lost,
    };
    let mut out = Vec::with_capacity(1024 + sections.len() * 700);
    message(&mut out, 1, |rm| {
        resource_field(rm, resource);
        message(rm, 2, |sm| {
            scope_field(sm);
            for m in METRICS.iter().filter(|m| m.given(&figures)) {
                match m.source {
                    Source::Section(value, _) => {
                        let points = sections
                            .iter()
                            .filter_map(|s| Some((Some(s.name), value(s)?)));
                        numbers(sm, m, points, times);
                    }
                    Source::Durations => histogram(sm, m, sections, times),
                    Source::Process(value) => {
                        numbers(sm, m, value(&figures).map(|n| (None, n)).into_iter(), times)
                    }
                }
            }
        });
    });
    out
}
