//! The `TracingLayer` target measured side by side: what perfgraph's layer adds to tracing + `Registry`,
//! against what perfgraph's own section adds to an empty call, in rounds within one process.
//!
//! Two Criterion cases timed seconds apart differ by the machine's drift as much as by the layer (tracing +
//! `Registry` alone moved by 30 ns between runs, about what the layer adds), so the peers bench, with
//! [`ROUNDS_VAR`] set, runs rounds instead: each round times one batch of [`CALLS`] calls of each of the five
//! [`Cases`], one after the other, in an order rotated from round to round, and the round's ratio compares
//! figures measured within a few tens of milliseconds of each other. The figure is the median round by that
//! ratio ([`Summary`]). The bench prints one line per round ([`Round::line`]); `record` reads them back
//! ([`Round::parse`]) and summarizes them with the same [`Summary::of`].

use std::time::Duration;

use crate::Case;
use crate::stats::median;

/// The environment variable that puts the peers bench in this mode: the number of rounds (empty:
/// [`DEFAULT_ROUNDS`]).
pub const ROUNDS_VAR: &str = "PEERS_LAYER_ROUNDS";

/// Rounds when [`ROUNDS_VAR`] does not give a number.
pub const DEFAULT_ROUNDS: usize = 201;

/// Calls per batch: 1–2 ms for the tracing cases, which cost 100–200 ns a call. This machine moves between
/// a fast and a slow state (every case about 1.4× slower) within tens of milliseconds; a round whose
/// batches straddle such a move gives a ratio far off in either direction, and short batches straddle
/// fewer (batches of 100,000 calls gave process medians from 1.27× to 2.06× in four processes in a row,
/// batches of 10,000 in 201 rounds 1.55× to 1.85×).
pub const CALLS: u64 = 10_000;

/// Processes `record` runs the rounds in, pooled: a process's code and data layout moves its figures as
/// much as the rounds' spread does (see `record`'s layouts section).
pub const PROCESSES: usize = 3;

/// The target: the layer adds at most this many times perfgraph's section (a round's ratio, median round).
pub const TARGET_RATIO: f64 = 2.0;

/// The five cases a round times, each a [`Case`] of the peers bench.
pub struct Cases {
    /// The empty call (`floor/empty_call`), which perfgraph's section is measured over, as `added` is.
    pub floor: Case,
    /// perfgraph recording a `#[timed]` leaf (`perfgraph/enabled`).
    pub enabled: Case,
    /// tracing with a scoped `Registry` and a no-op layer: the baseline ("`Registry` alone": a `Registry`
    /// with no layer at all never frees closed spans).
    pub registry: Case,
    /// The same with perfgraph's `TracingLayer` in place of the no-op layer: the install line users write.
    pub layer: Case,
    /// The same with perfgraph's layer stacked on top of the no-op one: also pays tracing-subscriber's
    /// dispatch to a second layer, which every added layer pays (informational).
    pub stacked: Case,
}

/// One round's figures, ns per call of each case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// The empty call.
    pub floor: f64,
    /// perfgraph's `#[timed]` leaf.
    pub enabled: f64,
    /// tracing + `Registry` + a no-op layer.
    pub registry: f64,
    /// tracing + `Registry` + `TracingLayer`.
    pub layer: f64,
    /// tracing + `Registry` + a no-op layer + `TracingLayer`.
    pub stacked: f64,
}

/// The keys of a round's line, in the order [`Round::measure`] starts from (`floor` first in round 0).
const KEYS: [&str; 5] = ["floor", "enabled", "registry", "layer", "stacked"];

impl Round {
    /// Times one batch of `calls` calls of each case, starting with the `rotate`-th (mod 5) in `KEYS`
    /// order and wrapping around.
    pub fn measure(cases: &Cases, calls: u64, rotate: usize) -> Round {
        let all = [
            cases.floor,
            cases.enabled,
            cases.registry,
            cases.layer,
            cases.stacked,
        ];
        let mut ns = [0.0; 5];
        for i in 0..all.len() {
            let k = (i + rotate) % all.len();
            ns[k] = per_call(all[k].time(calls), calls);
        }
        Round::from_array(ns)
    }

    fn from_array([floor, enabled, registry, layer, stacked]: [f64; 5]) -> Round {
        Round {
            floor,
            enabled,
            registry,
            layer,
            stacked,
        }
    }

    fn to_array(self) -> [f64; 5] {
        [
            self.floor,
            self.enabled,
            self.registry,
            self.layer,
            self.stacked,
        ]
    }

    /// What perfgraph's section adds to the empty call (`added` of `perfgraph/enabled`).
    pub fn section(&self) -> f64 {
        self.enabled - self.floor
    }

    /// What `TracingLayer` adds to tracing + `Registry` (in place of the no-op layer).
    pub fn layer_added(&self) -> f64 {
        self.layer - self.registry
    }

    /// What `TracingLayer` stacked on the no-op layer adds to tracing + `Registry`.
    pub fn stacked_added(&self) -> f64 {
        self.stacked - self.registry
    }

    /// [`Round::layer_added`] over [`Round::section`]: the figure the target judges.
    pub fn ratio(&self) -> f64 {
        self.layer_added() / self.section()
    }

    /// [`Round::stacked_added`] over [`Round::section`].
    pub fn stacked_ratio(&self) -> f64 {
        self.stacked_added() / self.section()
    }

    /// The line the bench prints for round `i`: `round <i>`, the five cases' ns per call, then the
    /// figures made from them (which [`Round::parse`] does not read back).
    pub fn line(&self, i: usize) -> String {
        let cases: Vec<String> = KEYS
            .iter()
            .zip(self.to_array())
            .map(|(k, v)| format!("{k}={v:.3}"))
            .collect();
        format!(
            "round {i} {} section={:.3} layer_added={:.3} ratio={:.3} stacked_added={:.3} stacked_ratio={:.3}",
            cases.join(" "),
            self.section(),
            self.layer_added(),
            self.ratio(),
            self.stacked_added(),
            self.stacked_ratio(),
        )
    }

    /// A round from a line [`Round::line`] wrote; `None` for any other line.
    pub fn parse(line: &str) -> Option<Round> {
        let mut words = line.split_whitespace();
        if words.next() != Some("round") {
            return None;
        }
        words.next()?.parse::<usize>().ok()?;
        let pairs: Vec<(&str, &str)> = words.filter_map(|w| w.split_once('=')).collect();
        let mut ns = [0.0; 5];
        for (slot, key) in ns.iter_mut().zip(KEYS) {
            let (_, v) = pairs.iter().find(|(k, _)| *k == key)?;
            *slot = v.parse().ok()?;
        }
        Some(Round::from_array(ns))
    }
}

/// ns per call of `calls` calls that took `took`.
fn per_call(took: Duration, calls: u64) -> f64 {
    took.as_nanos() as f64 / calls as f64
}

/// What the rounds say.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// How many rounds.
    pub rounds: usize,
    /// The median round by [`Round::ratio`]: its figures are one round's, measured together.
    pub median: Round,
    /// The median over rounds of [`Round::stacked_ratio`].
    pub stacked_ratio: f64,
    /// Each case's median over rounds, on its own (not one round's).
    pub case_medians: Round,
}

impl Summary {
    /// The summary of `rounds`; `None` if there are none.
    pub fn of(rounds: &[Round]) -> Option<Summary> {
        let median_round = median(rounds.to_vec(), Round::ratio)?;
        let stacked_ratio = median(rounds.iter().map(Round::stacked_ratio).collect(), |&x| x)?;
        let mut case_medians = [0.0; 5];
        for (k, slot) in case_medians.iter_mut().enumerate() {
            *slot = median(rounds.iter().map(|r| r.to_array()[k]).collect(), |&x| x)?;
        }
        Some(Summary {
            rounds: rounds.len(),
            median: median_round,
            stacked_ratio,
            case_medians: Round::from_array(case_medians),
        })
    }

    /// Whether the target is met: the median round's ratio at most [`TARGET_RATIO`].
    pub fn met(&self) -> bool {
        self.median.ratio() <= TARGET_RATIO
    }

    /// The bench's last line: the median round's figures, the stacked ratio, each case's median.
    pub fn line(&self, calls: u64) -> String {
        let cases: Vec<String> = KEYS
            .iter()
            .zip(self.case_medians.to_array())
            .map(|(k, v)| format!("{k}={v:.3}"))
            .collect();
        let m = &self.median;
        format!(
            "summary rounds={} calls={calls} ratio={:.3} section={:.3} layer_added={:.3} stacked_ratio={:.3} median_ns: {}",
            self.rounds,
            m.ratio(),
            m.section(),
            m.layer_added(),
            self.stacked_ratio,
            cases.join(" "),
        )
    }
}

/// The rounds asked for by [`ROUNDS_VAR`]'s value `value`: a positive number, or (empty, or with one
/// warning line on stderr) [`DEFAULT_ROUNDS`].
pub fn rounds_from(value: &str) -> usize {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => n,
        _ if value.trim().is_empty() => DEFAULT_ROUNDS,
        _ => {
            eprintln!(
                "{ROUNDS_VAR}={value:?} is not a positive number of rounds; using {DEFAULT_ROUNDS}"
            );
            DEFAULT_ROUNDS
        }
    }
}

/// The whole mode: one warm-up round (not printed), then `rounds` rounds, each printed as it ends, then the
/// summary line; every line goes to `out`.
pub fn run(cases: &Cases, rounds: usize, calls: u64, mut out: impl FnMut(&str)) {
    out(&format!("layer-rounds rounds={rounds} calls={calls}"));
    Round::measure(cases, calls, 0);
    let mut measured = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let round = Round::measure(cases, calls, i);
        out(&round.line(i));
        measured.push(round);
    }
    if let Some(summary) = Summary::of(&measured) {
        out(&summary.line(calls));
    }
}

/// The header line's `calls=` value, if `line` is the header [`run`] prints first.
pub fn header_calls(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("layer-rounds ")?;
    rest.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .find(|(k, _)| *k == "calls")?
        .1
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(floor: f64, enabled: f64, registry: f64, layer: f64, stacked: f64) -> Round {
        Round::from_array([floor, enabled, registry, layer, stacked])
    }

    #[test]
    fn a_round_gives_the_added_times_and_their_ratios() {
        let r = round(1.5, 21.5, 150.0, 180.0, 200.0);
        assert_eq!(r.section(), 20.0);
        assert_eq!(r.layer_added(), 30.0);
        assert_eq!(r.ratio(), 1.5);
        assert_eq!(r.stacked_added(), 50.0);
        assert_eq!(r.stacked_ratio(), 2.5);
    }

    #[test]
    fn a_line_reads_back_as_the_round() {
        let r = round(1.5, 21.25, 150.125, 180.0, 200.5);
        let line = r.line(7);
        assert_eq!(
            line,
            "round 7 floor=1.500 enabled=21.250 registry=150.125 layer=180.000 stacked=200.500 \
             section=19.750 layer_added=29.875 ratio=1.513 stacked_added=50.375 stacked_ratio=2.551"
        );
        assert_eq!(Round::parse(&line), Some(r));
        assert_eq!(Round::parse("round 1 floor=1.5 enabled=20"), None);
        assert_eq!(Round::parse("summary rounds=3 floor=1.5"), None);
        assert_eq!(
            header_calls("layer-rounds rounds=21 calls=100000"),
            Some(100_000)
        );
        assert_eq!(header_calls("round 1 calls=3"), None);
    }

    #[test]
    fn the_summary_is_the_median_round_by_ratio() {
        let rounds = [
            round(1.0, 21.0, 150.0, 250.0, 260.0), // 5.0: an outlier
            round(1.0, 21.0, 130.0, 160.0, 180.0), // 1.5
            round(2.0, 22.0, 140.0, 176.0, 190.0), // 1.8
        ];
        let s = Summary::of(&rounds).unwrap();
        assert_eq!(s.rounds, 3);
        assert_eq!(s.median, rounds[2]);
        assert!(s.met());
        // Stacked: 5.5, 2.5, 2.5.
        assert_eq!(s.stacked_ratio, 2.5);
        assert_eq!(s.case_medians, round(1.0, 21.0, 140.0, 176.0, 190.0));
        assert!(!Summary::of(&rounds[..1]).unwrap().met());
        assert_eq!(Summary::of(&[]), None);
        assert!(
            s.line(100_000)
                .starts_with("summary rounds=3 calls=100000 ratio=1.800 section=20.000")
        );
    }

    #[test]
    fn the_rounds_variable_falls_back_to_the_default() {
        assert_eq!(rounds_from("5"), 5);
        assert_eq!(rounds_from(""), DEFAULT_ROUNDS);
        assert_eq!(rounds_from("0"), DEFAULT_ROUNDS);
        assert_eq!(rounds_from("many"), DEFAULT_ROUNDS);
    }

    #[test]
    fn rounds_rotate_and_time_every_case() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Which case ran in which position: each case's batch appends its index.
        static ORDER: [AtomicUsize; 5] = [const { AtomicUsize::new(0) }; 5];
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        fn mark(k: usize) {
            ORDER[NEXT.fetch_add(1, Ordering::Relaxed)].store(k, Ordering::Relaxed);
        }
        let cases = Cases {
            floor: Case::new("a", |_| mark(0)),
            enabled: Case::new("b", |_| mark(1)),
            registry: Case::new("c", |_| mark(2)),
            layer: Case::new("d", |_| mark(3)),
            stacked: Case::new("e", |_| mark(4)),
        };
        // One call per batch, so each batch function runs once.
        Round::measure(&cases, 1, 2);
        let order: Vec<usize> = ORDER.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        assert_eq!(order, [2, 3, 4, 0, 1]);
    }
}
