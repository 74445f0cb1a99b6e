//! The `PERFGRAPH_*` variables: one row each (its name, what is accepted, the default, how a value is
//! applied), in the order they are read, and the parsers the rows share.

use super::report_selection::parse_report;
use super::row::{Variable, path, set};
use super::{CaptureMode, LiveMode, MemExact, OtlpSpans, TraceCompress};

/// Every setting, in the order they are read (and warned about).
pub(super) const VARIABLES: [Variable; 31] = [
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
            set(
                &mut c.live,
                keyword(
                    v,
                    &[
                        ("on", LiveMode::On),
                        ("off", LiveMode::Off),
                        ("all", LiveMode::All),
                    ],
                ),
            )
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_REPORT",
        accepted: "a comma list of graph, branch, sections[=N], latency, threads, async, alloc, cpu, counters, locks, critical, all",
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
        name: "PERFGRAPH_HTML",
        accepted: "a file path",
        default: "off",
        apply: |c, v| set(&mut c.html, path(v)),
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
                    crate::base::endpoint::Endpoint::parse(v).map(|_| Some(v.to_owned())),
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
            set(
                &mut c.otlp_spans,
                keyword(
                    v,
                    &[
                        ("off", OtlpSpans::Off),
                        ("slow", OtlpSpans::Slow),
                        ("all", OtlpSpans::All),
                    ],
                ),
            )
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
            set(
                &mut c.trace_compress,
                keyword(
                    v,
                    &[
                        ("auto", TraceCompress::Auto),
                        ("on", TraceCompress::On),
                        ("off", TraceCompress::Off),
                    ],
                ),
            )
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
            set(
                &mut c.mem_exact,
                keyword(
                    v,
                    &[
                        ("live", MemExact::Live),
                        ("all", MemExact::All),
                        ("off", MemExact::Off),
                    ],
                ),
            )
        },
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CPU",
        accepted: "off, all",
        default: "off",
        apply: |c, v| set(&mut c.cpu_all, keyword(v, &[("off", false), ("all", true)])),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_SWITCHES",
        accepted: "off, on",
        default: "off",
        apply: |c, v| set(&mut c.switches, keyword(v, &[("off", false), ("on", true)])),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_SIGNALS",
        accepted: "on, off",
        default: "on",
        apply: |c, v| set(&mut c.signals, keyword(v, &[("on", true), ("off", false)])),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_LISTEN",
        accepted: "on, off",
        default: "on",
        apply: |c, v| set(&mut c.listen, keyword(v, &[("on", true), ("off", false)])),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CAPTURE",
        accepted: "auto, on, off",
        default: "auto",
        apply: |c, v| {
            set(
                &mut c.capture,
                keyword(
                    v,
                    &[
                        ("auto", CaptureMode::Auto),
                        ("on", CaptureMode::On),
                        ("off", CaptureMode::Off),
                    ],
                ),
            )
        },
        list_refuses: None,
    },
    super::causal::VARIABLES[0],
    super::causal::VARIABLES[1],
    super::causal::VARIABLES[2],
    super::causal::VARIABLES[3],
    super::causal::VARIABLES[4],
];

/// The value paired with the keyword `v` in `words`; `None` for a keyword not among them.
fn keyword<T: Copy>(v: &str, words: &[(&str, T)]) -> Option<T> {
    words
        .iter()
        .find(|&&(word, _)| word == v)
        .map(|&(_, value)| value)
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
