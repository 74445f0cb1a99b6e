//! The off-by-verbosity cost measured again in many short processes of the peers bench, with ASLR and
//! without: one process's figure need not hold for another, and these runs show how far it varies.

use std::path::Path;
use std::process::{Command, Stdio};

use perfgraph_benches::ids::{case, group};

/// The added ns (disabled − empty call) of each short process.
pub struct Layouts {
    /// One figure per process, ASLR as the system has it.
    pub aslr: Vec<f64>,
    /// The same with ASLR off (`setarch -R`), if `setarch` is there.
    pub fixed: Vec<f64>,
}

/// Processes per set: enough to see how often a process is slow, few enough to keep this step short.
const LAYOUT_RUNS: usize = 12;
const FIXED_RUNS: usize = 4;

/// Criterion's measurement time in each short process, in seconds.
pub const MEASUREMENT_SECS: &str = "1";

/// The `--bench` filter of the short processes: the empty call and the disabled section, one thread.
pub fn filter() -> String {
    format!(
        "^{}/({}|{})$",
        group::ONE_THREAD,
        case::EMPTY_CALL,
        case::PERFGRAPH_DISABLED_BY_VERBOSITY
    )
}

impl Layouts {
    /// Runs the peers bench `bench` in [`LAYOUT_RUNS`] processes with ASLR and [`FIXED_RUNS`] without.
    pub fn measure(bench: &Path) -> Layouts {
        let mut aslr = Vec::new();
        let mut fixed = Vec::new();
        for _ in 0..LAYOUT_RUNS {
            aslr.extend(one(bench, false));
        }
        for _ in 0..FIXED_RUNS {
            fixed.extend(one(bench, true));
        }
        Layouts { aslr, fixed }
    }
}

/// One short process: the empty call and the disabled section, one thread, wall time.
fn one(bench: &Path, no_aslr: bool) -> Option<f64> {
    let home = std::env::temp_dir().join(format!("perfgraph-layouts-{}", std::process::id()));
    let filter = filter();
    let args = [
        "--bench",
        &filter,
        "--warm-up-time",
        "0.3",
        "--measurement-time",
        MEASUREMENT_SECS,
        "--noplot",
    ];
    let mut cmd = if no_aslr {
        let mut c = Command::new("setarch");
        c.arg("-R").arg(bench);
        c
    } else {
        Command::new(bench)
    };
    let out = cmd
        .args(args)
        .env("CRITERION_HOME", &home)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let _ = std::fs::remove_dir_all(&home);
    match time_estimates(&String::from_utf8_lossy(&out.stdout))[..] {
        [empty, disabled] => Some(disabled - empty),
        _ => None,
    }
}

/// The middle estimates, in ns, of the `time:   [low mid high]` lines Criterion prints under each case.
fn time_estimates(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("time:")?;
            let fields: Vec<&str> = rest
                .trim()
                .trim_matches(['[', ']'])
                .split_whitespace()
                .collect();
            // [low unit mid unit high unit]
            let value: f64 = fields.get(2)?.parse().ok()?;
            let scale = match *fields.get(3)? {
                "ps" => 1e-3,
                "ns" => 1.0,
                "µs" | "us" => 1e3,
                _ => return None,
            };
            Some(value * scale)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{filter, time_estimates};

    #[test]
    fn the_filter_names_the_two_cases() {
        assert_eq!(
            filter(),
            "^one_thread/(floor/empty_call|perfgraph/disabled_by_verbosity)$"
        );
    }

    #[test]
    fn reads_the_middle_estimate_in_ns() {
        let stdout = "one_thread/floor/empty_call\n\
                      \x20                       time:   [1.2000 ns 1.2300 ns 1.2600 ns]\n\
                      one_thread/perfgraph/disabled_by_verbosity\n\
                      \x20                       time:   [1400.0 ps 1520.0 ps 1600.0 ps]\n\
                      \x20                       change: [-1.0% +0.2% +1.1%] (p = 0.70 > 0.05)\n\
                      slow\n\
                      \x20                       time:   [2.0 µs 2.5 µs 3.0 µs]\n\
                      odd\n\
                      \x20                       time:   [2.0 ms 2.5 ms 3.0 ms]\n";
        assert_eq!(time_estimates(stdout), [1.23, 1.52, 2500.0]);
    }
}
