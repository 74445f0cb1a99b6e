//! Prometheus's text exposition format (version 0.0.4) of a report: what `PERFGRAPH_PROMETHEUS` serves
//! at `GET /metrics`. Pure: the report and the process's figures in, the text out.
//!
//! The metrics of [`catalog`](super::catalog) that have a Prometheus name, in its order: per section, by
//! name (every call path and thread summed), the calls, the time with and without children (a counter; a
//! section that recurses counts its outermost calls only, so no second is counted twice) and a histogram of
//! the completed calls' durations with the bounds of [`BOUNDS_NS`] (`_bucket`, `_sum`, `_count`), as
//! [`by_section`] places them; then the process's resident memory, heap (with the counting allocator) and
//! live threads that recorded. At most [`MAX_SECTIONS`] sections are exported ([`by_section`]), the
//! heaviest by total time; a comment line says how many more there were.

use std::fmt::Write as _;

use super::by_section::{self, BOUNDS_NS, MAX_SECTIONS, Process, Section};
use super::catalog::{Figures, METRICS, Number, Source};
use crate::base::text;
use crate::data::Report;

/// A label value escaped as the format wants (`\`, `"` and newlines).
fn label(value: &str) -> String {
    text::replace_chars(value, &[('\\', "\\\\"), ('"', "\\\""), ('\n', "\\n")])
}

/// Seconds from ns, as the format writes a float.
fn seconds(ns: u128) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// A number as the format writes it: an integer, or seconds as a float.
fn number(n: Number) -> String {
    match n {
        Number::Count(v) => v.to_string(),
        Number::Signed(v) => v.to_string(),
        Number::Ns(ns) => seconds(ns as u128),
    }
}

/// The text served at `/metrics`.
pub fn render(report: &Report, process: Process) -> String {
    let (all, left_out) = by_section::sections(report);
    let figures = Figures {
        sections: &all,
        left_out,
        process,
        spans_lost: None,
    };
    let mut out = String::new();
    for m in METRICS {
        let Some(name) = m.prometheus.filter(|_| m.given(&figures)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "# HELP {name} {}\n# TYPE {name} {}",
            m.help,
            m.kind.prometheus()
        );
        match m.source {
            Source::Section(value, _) => {
                for s in &all {
                    if let Some(n) = value(s) {
                        let _ =
                            writeln!(out, "{name}{{section=\"{}\"}} {}", label(s.name), number(n));
                    }
                }
            }
            Source::Durations => histogram(&mut out, name, &all),
            Source::Process(value) => {
                if let Some(n) = value(&figures) {
                    let _ = writeln!(out, "{name} {}", number(n));
                }
            }
        }
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "# perfgraph: {left_out} more {} not exported (at most {MAX_SECTIONS}, the heaviest)",
            if left_out == 1 { "section" } else { "sections" }
        );
    }
    out
}

/// The histogram `name`'s samples: per section, the cumulative `_bucket`s, `_sum` and `_count`.
fn histogram(out: &mut String, name: &str, sections: &[Section]) {
    for s in sections {
        let section = label(s.name);
        let mut cumulative = 0;
        for (i, bound) in BOUNDS_NS.iter().enumerate() {
            cumulative += s.counts[i];
            let _ = writeln!(
                out,
                "{name}_bucket{{section=\"{section}\",le=\"{}\"}} {cumulative}",
                seconds(*bound as u128)
            );
        }
        cumulative += s.counts[BOUNDS_NS.len()];
        let _ = writeln!(
            out,
            "{name}_bucket{{section=\"{section}\",le=\"+Inf\"}} {cumulative}\n\
             {name}_sum{{section=\"{section}\"}} {}\n\
             {name}_count{{section=\"{section}\"}} {cumulative}",
            seconds(s.sum_ns)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CallNode, CallTree, RunInfo, ThreadSnapshot};

    fn report() -> Report {
        let mut root = CallNode::new(0, "(root)", 0, 0, None);
        root.children = vec![1];
        let mut solve = CallNode::new(1, "solve \"x\"", 1, 1, Some(0));
        solve.calls = 2;
        solve.total_ns = 3_000_000_000;
        solve.self_ns = 1_000_000_000;
        solve.children = vec![2];
        // A recursion: `solve` inside `solve` counts its calls, not its time again.
        let mut inner = CallNode::new(1, "solve \"x\"", 1, 2, Some(1));
        inner.calls = 3;
        inner.total_ns = 2_000_000_000;
        inner.self_ns = 2_000_000_000;
        for (ns, calls) in [(800, 1), (3_000, 2), (20_000_000_000, 1)] {
            solve.latency.record(ns, calls);
        }
        let tree = CallTree::new(vec![root, solve, inner]);
        Report::build(
            RunInfo::new("demo", "tsc", 4_000_000_000),
            &[ThreadSnapshot::new(0, "main", tree)],
        )
    }

    #[test]
    fn the_text_counts_calls_times_and_buckets() {
        let text = render(
            &report(),
            Process {
                rss_bytes: 1 << 20,
                heap_bytes: None,
                threads: 1,
            },
        );
        let line = |start: &str| {
            text.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no {start} in\n{text}"))
                .to_owned()
        };
        let section = "section=\"solve \\\"x\\\"\"";
        assert_eq!(
            line(&format!("perfgraph_section_calls_total{{{section}}}")),
            format!("perfgraph_section_calls_total{{{section}}} 5")
        );
        let family = |name: &str| format!("perfgraph_section_{name}{{{section}}}");
        let bucket = |le: &str| {
            format!("perfgraph_section_duration_seconds_bucket{{{section},le=\"{le}\"}}")
        };
        // 800 ns under 1 µs; 3 µs under 5 µs; 20 s only under +Inf.
        for (start, value) in [
            (family("seconds_total"), " 3"),
            (family("self_seconds_total"), " 3"),
            (bucket("0.000001"), " 1"),
            (bucket("0.0000025"), " 1"),
            (bucket("0.000005"), " 3"),
            (bucket("10"), " 3"),
            (bucket("+Inf"), " 4"),
            (family("duration_seconds_count"), " 4"),
        ] {
            assert!(line(&start).ends_with(value), "{start}");
        }
        assert_eq!(
            line("perfgraph_resident_memory_bytes "),
            "perfgraph_resident_memory_bytes 1048576"
        );
        assert!(!text.contains("perfgraph_heap_bytes"));
        assert_eq!(line("perfgraph_threads "), "perfgraph_threads 1");
        // Every family has its HELP and TYPE before its samples.
        assert!(
            text.find("# TYPE perfgraph_section_calls_total counter")
                .unwrap()
                < text.find("perfgraph_section_calls_total{").unwrap()
        );
    }
}
