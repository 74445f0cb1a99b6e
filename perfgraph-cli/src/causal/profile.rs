//! Reading a causal profile (`profile.coz`, coz's format, as perfgraph writes it and coz does): its
//! experiments, each with its progress points' visits and its latency points. Lines of other types
//! (`startup`, `samples`) are skipped; a line that does not parse is an error naming it.

use std::io::{BufRead, Read};

use crate::failure::Failure;

/// The longest line read, bytes: a profile is untrusted input.
const MAX_LINE: usize = 64 * 1024;

/// The largest profile read, bytes: what it holds is kept, so this bounds the memory it takes (about
/// three times this at most). A run writes an experiment line (about 200 bytes) and one line (about 50)
/// per progress point, 32 at most by default, for each experiment, two a second at most at the default
/// length: 13 MB an hour at the most, so this holds 20 hours of profiling or more. (`examples/causal amdahl`, 4
/// sections, writes 5 kB in 10 s.)
const MAX_PROFILE: u64 = 256 * 1024 * 1024;

/// One experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub selected: String,
    /// Percent, rounded.
    pub speedup: u32,
    /// ns: what the program would have taken, the delay inserted taken off.
    pub duration: u64,
    /// Progress points: (name, visits).
    pub points: Vec<(String, u64)>,
    /// Latency points: (name, what they measured).
    pub latencies: Vec<(String, Latency)>,
}

/// A latency point of an experiment (coz's): the section's starts (`arrivals`) and ends (`departures`)
/// during it, and how many were under way at its end (`difference`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub arrivals: u64,
    pub departures: u64,
    pub difference: u64,
}

/// What a profile holds.
#[derive(Debug, Default)]
pub struct Profile {
    pub experiments: Vec<Experiment>,
    /// Experiments the runs could not report (too few visits, cut by the exit), from their last lines.
    pub unreported: u64,
}

/// `key=value` fields after the line's type.
fn fields(line: &str) -> impl Iterator<Item = (&str, &str)> {
    line.split('\t').skip(1).filter_map(|f| f.split_once('='))
}

fn number<T: std::str::FromStr>(v: Option<&str>, what: &str, at: &str) -> Result<T, String> {
    v.and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{at}: an experiment line without a valid {what}"))
}

/// Reads the profile `name` from `input`, adding to `into`.
pub fn read(input: impl BufRead, name: &str, into: &mut Profile) -> Result<(), Failure> {
    read_at_most(input, name, into, MAX_PROFILE)
}

/// [`read`], refusing a profile longer than `max` bytes.
fn read_at_most(
    mut input: impl BufRead,
    name: &str,
    into: &mut Profile,
    max: u64,
) -> Result<(), Failure> {
    let mut buf = Vec::new();
    let mut number_of = 0usize;
    let mut total = 0u64;
    loop {
        buf.clear();
        let n = input
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| Failure(format!("{name}: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        number_of += 1;
        let at = format!("{name}:{number_of}");
        if buf.len() > MAX_LINE {
            return Err(Failure(format!(
                "{at}: a line longer than {MAX_LINE} bytes"
            )));
        }
        total += n as u64;
        if total > max {
            return Err(Failure(format!(
                "{at}: the profile is larger than {} MiB, the most read (20 hours of profiling or more): split it",
                max >> 20
            )));
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        line_into(line, &at, into).map_err(Failure)?;
    }
}

/// The experiment a `what` line (at `at`) belongs to: the one before it.
fn last<'a>(into: &'a mut Profile, at: &str, what: &str) -> Result<&'a mut Experiment, String> {
    let e = into.experiments.last_mut();
    e.ok_or_else(|| format!("{at}: a {what} before any experiment"))
}

fn line_into(line: &str, at: &str, into: &mut Profile) -> Result<(), String> {
    let kind = line.split('\t').next().unwrap_or("");
    let get = |k: &str| fields(line).find(|(f, _)| *f == k).map(|(_, v)| v);
    match kind {
        "experiment" => {
            let selected = get("selected")
                .ok_or_else(|| format!("{at}: an experiment line without `selected`"))?;
            let speedup: f64 = number(get("speedup"), "speedup", at)?;
            if !(0.0..=1.0).contains(&speedup) {
                return Err(format!("{at}: a speedup outside 0..1"));
            }
            into.experiments.push(Experiment {
                selected: selected.to_owned(),
                speedup: (speedup * 100.0).round() as u32,
                duration: number(get("duration"), "duration", at)?,
                points: Vec::new(),
                latencies: Vec::new(),
            });
        }
        "throughput-point" | "progress-point" => {
            let name =
                get("name").ok_or_else(|| format!("{at}: a progress point without `name`"))?;
            let delta: u64 = number(get("delta"), "delta", at)?;
            last(into, at, "progress point")?
                .points
                .push((name.to_owned(), delta));
        }
        "latency-point" => {
            let name =
                get("name").ok_or_else(|| format!("{at}: a latency point without `name`"))?;
            let l = Latency {
                arrivals: number(get("arrivals"), "arrivals", at)?,
                departures: number(get("departures"), "departures", at)?,
                difference: number(get("difference"), "difference", at)?,
            };
            last(into, at, "latency point")?
                .latencies
                .push((name.to_owned(), l));
        }
        "runtime" => {
            into.unreported += get("unreported-experiments")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
        "startup" | "shutdown" | "samples" | "" => {}
        other => return Err(format!("{at}: an unknown line type {other:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experiments_with_their_points_and_the_unreported() {
        let text = "startup\ttime=1\nexperiment\tselected=a\tspeedup=0.25\tduration=400\textra=1\n\
                    throughput-point\tname=step\tdelta=7\n\
                    latency-point\tname=step\tarrivals=8\tdepartures=7\tdifference=1\nruntime\ttime=9\tunreported-experiments=2\n";
        let mut p = Profile::default();
        read(text.as_bytes(), "p", &mut p).unwrap();
        assert_eq!(
            p.experiments,
            [Experiment {
                selected: "a".into(),
                speedup: 25,
                duration: 400,
                points: vec![("step".into(), 7)],
                latencies: vec![(
                    "step".into(),
                    Latency {
                        arrivals: 8,
                        departures: 7,
                        difference: 1
                    }
                )],
            }]
        );
        assert_eq!(p.unreported, 2);
    }

    #[test]
    fn bad_lines_are_named() {
        let bad = |text: &str| {
            let mut p = Profile::default();
            read(text.as_bytes(), "p", &mut p).unwrap_err().0
        };
        assert_eq!(
            bad("throughput-point\tname=a\tdelta=1\n"),
            "p:1: a progress point before any experiment"
        );
        assert_eq!(
            bad("experiment\tselected=a\tspeedup=2\tduration=1\n"),
            "p:1: a speedup outside 0..1"
        );
        assert_eq!(bad("x\n"), "p:1: an unknown line type \"x\"");
        let long = format!("startup\t{}\n", "x".repeat(MAX_LINE));
        assert!(bad(&long).contains("longer than"));
    }

    #[test]
    fn a_profile_past_its_bound_is_refused_where_it_passes_it() {
        let line = "experiment\tselected=a\tspeedup=0\tduration=1\n";
        let text = line.repeat(3);
        let mut p = Profile::default();
        let at_most = |max: u64, p: &mut Profile| read_at_most(text.as_bytes(), "p", p, max);
        assert!(at_most(3 * line.len() as u64, &mut p).is_ok());
        assert_eq!(p.experiments.len(), 3);
        let e = at_most(2 * line.len() as u64 + 1, &mut Profile::default()).unwrap_err();
        assert!(
            e.0.starts_with("p:3: the profile is larger than"),
            "{}",
            e.0
        );
    }
}
