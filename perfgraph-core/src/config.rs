//! Settings from `PERFGRAPH_*` environment variables, read once at first use.
//!
//! Parsing is a pure function of a variable lookup ([`Config::from_lookup`]) so it is tested without touching
//! the process environment. A bad value never stops the program: it yields one warning line naming the
//! variable, the value and what is accepted, and the default applies.

use std::path::PathBuf;

/// How much live print shows (`PERFGRAPH_LIVE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveMode {
    /// No live print and no print thread work for it (`off`).
    Off,
    /// Sections that cross the time limit or the memory limit (`on`, the default).
    On,
    /// Every section's start and end, for debugging (`all`; MOOSE's live-all).
    All,
}

/// Which end-of-run reports to print (`PERFGRAPH_REPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportSelection {
    /// `graph`: the call-graph table.
    pub graph: bool,
    /// `branch`: the heaviest branch.
    pub branch: bool,
    /// `sections[=N]`: the N heaviest sections by self time.
    pub sections: Option<usize>,
    /// `threads`: per-thread summary.
    pub threads: bool,
}

impl ReportSelection {
    /// True when nothing is selected.
    pub fn is_empty(&self) -> bool {
        *self == ReportSelection::default()
    }
}

/// Every setting, with its default.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `PERFGRAPH_VERBOSITY`: highest recorded level (0..=3), `None` for `off`. Default 1.
    pub verbosity: Option<u8>,
    /// `PERFGRAPH_TIME_LIMIT` in seconds (default 1.0), as nanoseconds.
    pub time_limit_ns: u64,
    /// `PERFGRAPH_MEM_LIMIT` in MB (default 100), as bytes.
    pub mem_limit_bytes: u64,
    /// `PERFGRAPH_LIVE`: `on` (default), `off` or `all`.
    pub live: LiveMode,
    /// `PERFGRAPH_REPORT`: comma list of `graph`, `branch`, `sections[=N]`, `threads`, `all`. Default none.
    pub report: ReportSelection,
    /// `PERFGRAPH_INTERVAL` in seconds: per-thread interval statistics. Default off.
    pub interval_ns: Option<u64>,
    /// `PERFGRAPH_TRACE`: Chrome trace JSON path. Default off.
    pub trace: Option<PathBuf>,
    /// `PERFGRAPH_TRACE_LIMIT`: most section events kept for the trace (default 1,000,000).
    pub trace_limit: usize,
    /// `PERFGRAPH_FOLDED`: folded-stacks path. Default off.
    pub folded: Option<PathBuf>,
    /// `PERFGRAPH_JSON`: call-tree JSON path. Default off.
    pub json: Option<PathBuf>,
    /// `PERFGRAPH_CLOCK`: `auto` (default: the TSC when trustworthy) or `monotonic`.
    pub clock_monotonic: bool,
    /// `PERFGRAPH_MEM_INTERVAL` in milliseconds (default 20, 1..=1000): resident-memory sampling period.
    pub mem_interval_ns: u64,
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
            trace: None,
            trace_limit: 1_000_000,
            folded: None,
            json: None,
            clock_monotonic: false,
            mem_interval_ns: 20_000_000,
        }
    }
}

impl Config {
    /// Whether an output needs every section record (the trace, interval statistics), so the background
    /// thread must drain the rings at every pass and records lost to overflow are missing from it.
    pub fn needs_every_record(&self) -> bool {
        self.trace.is_some() || self.interval_ns.is_some()
    }

    /// Reads the process environment. Returns the settings and one warning line per bad value.
    pub fn from_env() -> (Config, Vec<String>) {
        Config::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Reads settings through `var` (a variable name to its value).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut c = Config::default();
        let mut warnings = Vec::new();
        let mut get = |name: &'static str,
                       accepted: &'static str,
                       default: &'static str,
                       ok: &mut dyn FnMut(&str) -> bool| {
            if let Some(value) = var(name)
                && !ok(value.trim())
            {
                warnings.push(format!(
                    "perfgraph: warning: {name}={value:?} is not valid (accepted: {accepted}); using the default, {default}"
                ));
            }
        };
        get(
            "PERFGRAPH_VERBOSITY",
            "off, 0, 1, 2, 3",
            "1",
            &mut |v| match v {
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
        );
        get(
            "PERFGRAPH_TIME_LIMIT",
            "a number of seconds > 0, e.g. 1 or 0.5",
            "1.0",
            &mut |v| match v.parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() && s < 1e9 => {
                    c.time_limit_ns = (s * 1e9) as u64;
                    true
                }
                _ => false,
            },
        );
        get(
            "PERFGRAPH_MEM_LIMIT",
            "a whole number of MB >= 1, e.g. 100",
            "100",
            &mut |v| match v.parse::<u64>() {
                Ok(mb) if (1..=1_000_000_000).contains(&mb) => {
                    c.mem_limit_bytes = mb * 1_000_000;
                    true
                }
                _ => false,
            },
        );
        get("PERFGRAPH_LIVE", "on, off, all", "on", &mut |v| {
            c.live = match v {
                "on" => LiveMode::On,
                "off" => LiveMode::Off,
                "all" => LiveMode::All,
                _ => return false,
            };
            true
        });
        get(
            "PERFGRAPH_REPORT",
            "a comma list of graph, branch, sections[=N], threads, all",
            "none",
            &mut |v| match parse_report(v) {
                Some(r) => {
                    c.report = r;
                    true
                }
                None => false,
            },
        );
        get(
            "PERFGRAPH_INTERVAL",
            "a number of seconds > 0, or off",
            "off",
            &mut |v| {
                if v == "off" {
                    return true;
                }
                match v.parse::<f64>() {
                    Ok(s) if s > 0.0 && s.is_finite() && s < 1e9 => {
                        c.interval_ns = Some(((s * 1e9) as u64).max(1_000_000));
                        true
                    }
                    _ => false,
                }
            },
        );
        for (name, slot) in [
            ("PERFGRAPH_TRACE", &mut c.trace),
            ("PERFGRAPH_FOLDED", &mut c.folded),
            ("PERFGRAPH_JSON", &mut c.json),
        ] {
            get(name, "a file path", "off", &mut |v| {
                if v.is_empty() {
                    return false;
                }
                *slot = Some(PathBuf::from(v));
                true
            });
        }
        get(
            "PERFGRAPH_TRACE_LIMIT",
            "a whole number of events >= 1",
            "1000000",
            &mut |v| match v.parse::<usize>() {
                Ok(n) if n >= 1 => {
                    c.trace_limit = n;
                    true
                }
                _ => false,
            },
        );
        get(
            "PERFGRAPH_CLOCK",
            "auto, monotonic",
            "auto",
            &mut |v| match v {
                "auto" => true,
                "monotonic" => {
                    c.clock_monotonic = true;
                    true
                }
                _ => false,
            },
        );
        get(
            "PERFGRAPH_MEM_INTERVAL",
            "a whole number of milliseconds, 1 to 1000",
            "20",
            &mut |v| match v.parse::<u64>() {
                Ok(ms) if (1..=1000).contains(&ms) => {
                    c.mem_interval_ns = ms * 1_000_000;
                    true
                }
                _ => false,
            },
        );
        (c, warnings)
    }
}

fn parse_report(v: &str) -> Option<ReportSelection> {
    let mut r = ReportSelection::default();
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "graph" => r.graph = true,
            "branch" => r.branch = true,
            "threads" => r.threads = true,
            "sections" => r.sections = Some(10),
            "all" => {
                r = ReportSelection {
                    graph: true,
                    branch: true,
                    sections: Some(r.sections.unwrap_or(10)),
                    threads: true,
                }
            }
            "off" | "none" => {}
            _ => {
                let n = item
                    .strip_prefix("sections=")?
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1)?;
                r.sections = Some(n);
            }
        }
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
        Config::from_lookup(|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn defaults() {
        let (c, w) = parse(&[]);
        assert_eq!(c, Config::default());
        assert!(w.is_empty());
    }

    #[test]
    fn good_values() {
        let (c, w) = parse(&[
            ("PERFGRAPH_VERBOSITY", "off"),
            ("PERFGRAPH_TIME_LIMIT", "0.2"),
            ("PERFGRAPH_MEM_LIMIT", "5"),
            ("PERFGRAPH_LIVE", "all"),
            ("PERFGRAPH_REPORT", "graph, sections=3"),
            ("PERFGRAPH_INTERVAL", "1"),
            ("PERFGRAPH_TRACE", "t.json"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.verbosity, None);
        assert_eq!(c.time_limit_ns, 200_000_000);
        assert_eq!(c.mem_limit_bytes, 5_000_000);
        assert_eq!(c.live, LiveMode::All);
        assert_eq!(
            c.report,
            ReportSelection {
                graph: true,
                sections: Some(3),
                ..Default::default()
            }
        );
        assert_eq!(c.interval_ns, Some(1_000_000_000));
        assert_eq!(c.trace, Some(PathBuf::from("t.json")));
        assert_eq!(
            parse(&[("PERFGRAPH_REPORT", "all")]).0.report.sections,
            Some(10)
        );
        assert_eq!(
            parse(&[("PERFGRAPH_VERBOSITY", " 3 ")]).0.verbosity,
            Some(3)
        );
    }

    #[test]
    fn bad_values_warn_once_each_and_keep_defaults() {
        let (c, w) = parse(&[
            ("PERFGRAPH_VERBOSITY", "high"),
            ("PERFGRAPH_TIME_LIMIT", "-1"),
            ("PERFGRAPH_LIVE", "maybe"),
            ("PERFGRAPH_REPORT", "graph,pie"),
        ]);
        assert_eq!(c, Config::default());
        assert_eq!(w.len(), 4);
        assert_eq!(
            w[0],
            "perfgraph: warning: PERFGRAPH_VERBOSITY=\"high\" is not valid (accepted: off, 0, 1, 2, 3); using the default, 1"
        );
        assert!(w.iter().all(|l| !l.contains('\n')));
        assert!(w[3].contains("PERFGRAPH_REPORT=\"graph,pie\""));
    }
}
