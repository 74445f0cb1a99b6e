//! Prometheus's `/metrics` against the truth: per section (every path and thread summed) the calls
//! exactly, the seconds within the tolerance, and the histogram counting every call.

use std::collections::HashMap;

use crate::common::truth::{Truth, Worst};
use crate::model::{self, decimal_ns};

/// The samples of the text: (metric name, `section` label or "") -> value as written.
pub fn samples(text: &str) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').unwrap();
        let (name, section) = match series.split_once('{') {
            Some((name, labels)) if !labels.contains("le=") => {
                let section = labels
                    .strip_prefix("section=\"")
                    .and_then(|l| l.strip_suffix("\"}"))
                    .unwrap_or_else(|| panic!("labels {labels}"));
                (name, section)
            }
            Some(_) => continue,
            None => (series, ""),
        };
        out.insert((name.to_owned(), section.to_owned()), value.to_owned());
    }
    out
}

/// The scrape of the held program against the truth.
pub fn check(w: &mut Worst, out: &str, text: &str, truth: &Truth) {
    let s = samples(text);
    let get = |metric: &str, section: &str| s.get(&(metric.to_owned(), section.to_owned()));
    let count =
        |metric: &str, section: &str| get(metric, section).map(|v| v.parse::<u64>().unwrap());
    for e in model::expected(truth) {
        let name = e.name;
        w.exact(
            out,
            &format!("{name} calls_total"),
            count("perfgraph_section_calls_total", name),
            Some(e.calls),
        );
        w.exact(
            out,
            &format!("{name} histogram _count"),
            count("perfgraph_section_duration_seconds_count", name),
            Some(e.calls),
        );
        let future = name == "truth_future";
        let secs = |metric: &str| get(metric, name).map_or(0, |v| decimal_ns(v));
        if !future {
            // (a future's seconds are its busy time; the program timed its life, the histogram's sum)
            w.time(
                out,
                &format!("{name} seconds_total"),
                secs("perfgraph_section_seconds_total"),
                e.total,
                0,
            );
            if let Some(own) = e.self_time {
                w.time(
                    out,
                    &format!("{name} self_seconds_total"),
                    secs("perfgraph_section_self_seconds_total"),
                    own,
                    0,
                );
            }
        }
        // The histogram's sum is of its buckets' midpoints (within 0.8% of each call).
        w.time(
            out,
            &format!("{name} histogram _sum"),
            secs("perfgraph_section_duration_seconds_sum"),
            e.wall(),
            0,
        );
    }
    let ticks: u64 = model::ticks(truth).iter().map(|t| t.1).sum();
    w.exact(
        out,
        "tick calls_total",
        count("perfgraph_section_calls_total", "tick"),
        Some(ticks),
    );
    w.exact(
        out,
        "tick histogram _count",
        count("perfgraph_section_duration_seconds_count", "tick"),
        Some(ticks),
    );
    // The live threads that recorded: main (the lockers were joined).
    w.exact(out, "threads", count("perfgraph_threads", ""), Some(1));
}
