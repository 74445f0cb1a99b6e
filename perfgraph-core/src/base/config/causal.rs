//! Causal profiling's settings (`PERFGRAPH_CAUSAL` and its companions): what `perfgraph causal` sets for
//! the program it runs, and what a user may set by hand.

use std::path::PathBuf;

use super::Config;
use super::row::{Variable, path, set};

/// Causal profiling's settings: [`Config::causal`].
///
/// ```
/// use perfgraph_core::config::Config;
///
/// let (config, warnings) = Config::from_lookup(|name| match name {
///     "PERFGRAPH_CAUSAL" => Some("profile.coz".to_owned()),
///     "PERFGRAPH_CAUSAL_SPEEDUPS" => Some("0,25,50".to_owned()),
///     _ => None,
/// });
/// assert!(warnings.is_empty());
/// assert_eq!(config.causal.speedups, [0, 25, 50]);
/// assert_eq!(config.causal.experiment_ns, 500_000_000);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Causal {
    /// `PERFGRAPH_CAUSAL`: where the experiments go, one coz-format line each (`profile.coz`), written as
    /// they end. Default off: no experiment, and sections take their usual path.
    pub path: Option<PathBuf>,
    /// `PERFGRAPH_CAUSAL_PROGRESS`: comma list of the sections whose ends are the progress points. Default
    /// empty: every section's ends are reported, and `perfgraph causal` picks the steadiest.
    pub progress: Vec<String>,
    /// `PERFGRAPH_CAUSAL_SECTIONS`: comma list of the sections experiments may speed up. Default empty:
    /// any section that has ended.
    pub sections: Vec<String>,
    /// `PERFGRAPH_CAUSAL_SPEEDUPS`: comma list of speed-ups in percent (0 to 100), picked uniformly. Default
    /// empty: coz's, 0 to 100 in steps of 5 with 0 weighted as a quarter of the picks.
    pub speedups: Vec<u32>,
    /// `PERFGRAPH_CAUSAL_EXPERIMENT` in seconds (default 0.5): an experiment's shortest length.
    pub experiment_ns: u64,
}

impl Default for Causal {
    fn default() -> Causal {
        Causal {
            path: None,
            progress: Vec::new(),
            sections: Vec::new(),
            speedups: Vec::new(),
            experiment_ns: 500_000_000,
        }
    }
}

/// Their rows in the table of variables.
pub(super) const VARIABLES: [Variable; 5] = [
    Variable {
        name: "PERFGRAPH_CAUSAL",
        accepted: "a file path",
        default: "off",
        apply: |c, v| set(&mut c.causal.path, path(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CAUSAL_PROGRESS",
        accepted: "a comma list of section names",
        default: "every section",
        apply: |c, v| set(&mut c.causal.progress, names(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CAUSAL_SECTIONS",
        accepted: "a comma list of section names",
        default: "every section",
        apply: |c, v| set(&mut c.causal.sections, names(v)),
        list_refuses: None,
    },
    Variable {
        name: "PERFGRAPH_CAUSAL_SPEEDUPS",
        accepted: "a comma list of whole percentages from 0 to 100, e.g. 0,25,50",
        default: "0 to 100 by 5",
        apply: |c, v| set(&mut c.causal.speedups, speedups(v).0),
        list_refuses: Some(|v| speedups(v).1),
    },
    Variable {
        name: "PERFGRAPH_CAUSAL_EXPERIMENT",
        accepted: "a number of seconds from 0.05 to 60, e.g. 0.5",
        default: "0.5",
        apply: |c, v| set(&mut c.causal.experiment_ns, experiment_ns(v)),
        list_refuses: None,
    },
];

/// A comma list of section names (blanks around each trimmed), `None` if it names none.
fn names(v: &str) -> Option<Vec<String>> {
    let names: Vec<String> = v
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// The good entries of a comma list of percentages (`None` if there is none) and the bad ones.
fn speedups(v: &str) -> (Option<Vec<u32>>, Vec<String>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for item in v.split(',').map(str::trim) {
        match item.parse::<u32>() {
            Ok(p) if p <= 100 => {
                if !good.contains(&p) {
                    good.push(p);
                }
            }
            _ => bad.push(item.to_owned()),
        }
    }
    ((!good.is_empty()).then_some(good), bad)
}

/// An experiment's shortest length: 0.05 to 60 seconds, as nanoseconds.
fn experiment_ns(v: &str) -> Option<u64> {
    let s = v.parse::<f64>().ok()?;
    (s.is_finite() && (0.05..=60.0).contains(&s)).then_some((s * 1e9).round() as u64)
}

impl Config {
    /// Whether causal profiling is on (`PERFGRAPH_CAUSAL` names a file).
    pub(crate) fn causal_on(&self) -> bool {
        self.causal.path.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedups_keep_the_good_entries_once_and_name_the_bad() {
        assert_eq!(
            speedups("0, 25,50,25,101,x"),
            (
                Some(vec![0, 25, 50]),
                vec!["101".to_owned(), "x".to_owned()]
            )
        );
        assert_eq!(speedups("x").0, None);
    }

    #[test]
    fn names_and_lengths() {
        assert_eq!(
            names(" step , solve ,"),
            Some(vec!["step".into(), "solve".into()])
        );
        assert_eq!(names(" , "), None);
        assert_eq!(experiment_ns("0.25"), Some(250_000_000));
        assert_eq!(experiment_ns("0.01"), None);
        assert_eq!(experiment_ns("61"), None);
    }
}
