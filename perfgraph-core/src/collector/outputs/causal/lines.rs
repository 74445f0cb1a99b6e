//! The profile's lines, in coz's format (`profile.coz`), so `coz plot` reads them: tab-separated
//! `key=value` fields after the line's type. perfgraph adds fields of its own to the experiment line,
//! which coz's viewer ignores.

use std::fmt::Write;

/// What one experiment measured, in the profile's words.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Experiment {
    pub selected: String,
    /// Percent.
    pub speedup: u32,
    /// ns: the length less the delay inserted (the sleeps' overshoot included).
    pub duration: u64,
    pub selected_ends: u64,
    /// ns.
    pub elapsed: u64,
    pub inserted: u64,
    pub paid: u64,
    pub skipped: u64,
    pub unwoken: u64,
    pub ticked: u64,
    /// Of `paid`, what the sleeps overslept.
    pub overshoot: u64,
    pub points: Vec<(String, u64)>,
    /// (name, arrivals, departures, under way at the end).
    pub latencies: Vec<(String, u64, u64, u64)>,
}

/// A section name as one field: no tab or line break (coz's fields are split on them).
fn field(name: &str) -> String {
    name.replace(['\t', '\n', '\r'], " ")
}

/// The experiment's lines: `experiment`, one `throughput-point` per progress point, and one
/// `latency-point` per progress point named.
pub(super) fn experiment(e: &Experiment) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "experiment\tselected={}\tspeedup={}\tduration={}\tselected-samples={}\telapsed={}\tinserted={}\tpaid={}\tskipped={}\tunwoken={}\tticked={}\tovershoot={}",
        field(&e.selected),
        e.speedup as f64 / 100.0,
        e.duration,
        e.selected_ends,
        e.elapsed,
        e.inserted,
        e.paid,
        e.skipped,
        e.unwoken,
        e.ticked,
        e.overshoot,
    );
    for (name, delta) in &e.points {
        let _ = writeln!(s, "throughput-point\tname={}\tdelta={delta}", field(name));
    }
    for (name, arrivals, departures, difference) in &e.latencies {
        let _ = writeln!(
            s,
            "latency-point\tname={}\tarrivals={arrivals}\tdepartures={departures}\tdifference={difference}",
            field(name)
        );
    }
    s
}

/// The profile's first line: `startup`, at `unix_ns`.
pub(super) fn startup(unix_ns: u128) -> String {
    format!("startup\ttime={unix_ns}\n")
}

/// The profile's last line: `runtime`, the run's length (ns), and the experiments that could not be
/// reported (too few progress visits, or cut by the exit).
pub(super) fn runtime(ns: u64, unreported: u64) -> String {
    format!("runtime\ttime={ns}\tunreported-experiments={unreported}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_experiment_as_coz_writes_it() {
        let e = Experiment {
            selected: "a\tb".to_owned(),
            speedup: 25,
            duration: 400,
            selected_ends: 3,
            elapsed: 500,
            inserted: 100,
            paid: 90,
            skipped: 10,
            unwoken: 5,
            ticked: 3,
            overshoot: 2,
            points: vec![("step".to_owned(), 7)],
            latencies: vec![("step".to_owned(), 8, 7, 1)],
        };
        assert_eq!(
            experiment(&e),
            "experiment\tselected=a b\tspeedup=0.25\tduration=400\tselected-samples=3\telapsed=500\t\
             inserted=100\tpaid=90\tskipped=10\tunwoken=5\tticked=3\tovershoot=2\nthroughput-point\tname=step\tdelta=7\n\
             latency-point\tname=step\tarrivals=8\tdepartures=7\tdifference=1\n"
        );
        assert_eq!(startup(5), "startup\ttime=5\n");
    }
}
