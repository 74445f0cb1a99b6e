//! `perfgraph diff` on bundles: each run is one sample. Per section the effect is the ratio of the sides'
//! medians with a run-level bootstrap interval ([`stats`]); a section fails only when its interval lies
//! wholly beyond `--noise` and its change is significant (the Mann–Whitney rank test, exact whatever the
//! noise: [`stats::rank_p`]) after Holm's correction across the sections compared. Where the runs cannot decide, the row says so with an estimate of the runs that would.
//! Calls and allocations, which are exact, are compared exactly; so are instruction counts, which vary
//! between runs by far less than the noise ([`counted_effect`]).

pub mod callgrind;
mod render;
pub mod samples;
pub mod stats;

use std::path::Path;

use crate::compare::{Metric, Options, Paths};
use crate::failure::Failure;
use stats::Effect;

/// The confidence of the intervals, and the family-wise level of Holm's correction.
pub const LEVEL: f64 = 0.95;
/// The seed of the bootstrap: the same runs give the same table.
const SEED: u64 = 0x7065_7266_6772_6170;

/// What the gate says of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No change beyond the noise shown (or none the runs can show).
    Same,
    /// Slower: the interval lies wholly above +noise and the corrected p is below 1 − LEVEL.
    Regressed,
    /// Faster, by the same rule.
    Improved,
    /// Slower, significantly after Holm's correction, by as much as the noise or more, but the interval
    /// also holds changes within the noise: more runs would tell whether it is past it.
    Undecided,
    /// Looks slower beyond the noise, but the runs show no change at all (the corrected p is not below
    /// 1 − LEVEL): it passes, with a note of the runs that would tell.
    Unshown,
    /// Not compared: below `--min-ms` on both sides, or no figure to compare (a median of 0).
    Untested,
    /// Only in the base.
    Removed,
    /// Only in the head.
    Added,
}

/// One row of the gated diff.
pub struct Row {
    /// The section or call path.
    pub key: u32,
    /// The sides' values, one per run.
    pub base: Option<Vec<f64>>,
    /// The head's.
    pub head: Option<Vec<f64>>,
    /// The change, where compared.
    pub effect: Option<Effect>,
    /// Its p after Holm's correction.
    pub holm: Option<f64>,
    /// What the gate says.
    pub verdict: Verdict,
    /// Runs per side that would likely decide an undecided row.
    pub needed: Option<usize>,
    /// Decided by the counts themselves ([`counted_effect`]), not by a test: no p, not in Holm's family.
    pub counted: bool,
}

/// Runs the gated diff; the exit code is 1 when a row regressed (or, with --fail-on-removed, is missing
/// from the head), else 3 when a row is undecided, else 0.
pub fn run(
    base: &Path,
    head: Option<&Path>,
    o: &Options,
    html: Option<&Path>,
) -> Result<u8, Failure> {
    let inputs: Vec<&Path> = std::iter::once(base).chain(head).collect();
    if let Some(gone) = inputs.iter().find(|p| !p.exists()) {
        return Err(Failure(format!("{}: no such file", gone.display())));
    }
    let manifests = samples::manifests(&inputs)?;
    if head.is_none() && manifests.is_empty() {
        return Err(Failure(format!(
            "{}: one run's file: give the run to compare it with",
            base.display()
        )));
    }
    let metric = if o.metric_given {
        o.metric
    } else {
        let recorded: Vec<_> = manifests.iter().map(|(_, m)| m.metric).collect();
        match recorded.first() {
            Some(first) if recorded.iter().any(|m| m != first) => {
                return Err(Failure(format!(
                    "{} and {} were recorded with different metrics: choose one with --metric",
                    base.display(),
                    head.unwrap_or(base).display()
                )));
            }
            Some(first) => first.metric(),
            None => Metric::Total,
        }
    };
    if metric == Metric::Instructions && o.paths {
        return Err(Failure(
            "--metric instructions compares sections, not call paths (--paths)".into(),
        ));
    }
    let o = Options {
        metric,
        metric_given: true,
        ..*o
    };
    let [(bs, bl), (hs, hl)] = samples::sources(base, head, &manifests)?;
    let mut paths = Paths::new();
    let (b, h) = (
        samples::load(&bs, o.metric, o.paths, &mut paths)?,
        samples::load(&hs, o.metric, o.paths, &mut paths)?,
    );
    for (s, label) in [(&b, &bl), (&h, &hl)] {
        if s.runs == 0 {
            return Err(Failure(format!("{label}: no run wrote a report")));
        }
    }
    let rows = compare(&b, &h, &o);
    if rows
        .iter()
        .all(|r| matches!(r.verdict, Verdict::Removed | Verdict::Added))
        && !b.order.is_empty()
        && !h.order.is_empty()
    {
        return Err(Failure(format!(
            "{bl} and {hl} have no {} in common: not runs of one program (renamed sections, or the \
             wrong file?)",
            if o.paths { "call path" } else { "section" }
        )));
    }
    let (header, cells) = render::grid(&rows, &o, &paths);
    let lines = render::lines(&rows, &b, &h, [&bl, &hl], &o, &paths);
    let marks: Vec<&str> = rows.iter().map(|r| render::mark(r.verdict)).collect();
    crate::html::show_diff(
        html,
        &format!("perfgraph diff: {bl} → {hl}"),
        (&header, &cells),
        &marks,
        &lines,
    )?;
    let regressed = rows.iter().any(|r| r.verdict == Verdict::Regressed);
    let removed = rows.iter().any(|r| r.verdict == Verdict::Removed);
    Ok(if regressed || (o.fail_on_removed && removed) {
        1
    } else if rows.iter().any(|r| r.verdict == Verdict::Undecided) {
        3
    } else {
        0
    })
}

/// The rows, in the base's order then the head's, with their verdicts.
pub fn compare(b: &samples::Samples, h: &samples::Samples, o: &Options) -> Vec<Row> {
    let mut rng = stats::Rng::new(SEED);
    let floor = if o.metric == Metric::Instructions {
        0.0
    } else {
        o.min_ms * 1e6
    };
    // Instruction counts vary between runs only by the recording threads' interleaving (733 of 8.2
    // million measured): within a tenth of the noise, the counts decide. Other figures only when equal.
    let spread = if o.metric == Metric::Instructions {
        o.noise / 10.0
    } else {
        0.0
    };
    let mut rows: Vec<Row> = Vec::new();
    for &key in &b.order {
        let base = b.values[&key].clone();
        let Some(head) = h.values.get(&key).cloned() else {
            rows.push(row(key, Some(base), None, None, Verdict::Removed));
            continue;
        };
        let below = floor > 0.0 && stats::median(&base) < floor && stats::median(&head) < floor;
        let counted = if below {
            None
        } else {
            counted_effect(&base, &head, spread)
        };
        // Else the interval is the bootstrap's; the p that Holm corrects is the rank test's, exact
        // whatever the machine's noise (stats::rank_p).
        let effect = if below {
            None
        } else {
            counted.or_else(|| {
                stats::effect(&base, &head, LEVEL, &mut rng).map(|e| Effect {
                    p: stats::rank_p(&base, &head),
                    ..e
                })
            })
        };
        let verdict = match counted {
            Some(e) if e.low > 1.0 + o.noise => Verdict::Regressed,
            Some(e) if e.high < 1.0 - o.noise => Verdict::Improved,
            _ if effect.is_some() => Verdict::Same,
            _ => Verdict::Untested,
        };
        let mut r = row(key, Some(base), Some(head), effect, verdict);
        r.counted = counted.is_some();
        rows.push(r);
    }
    for &key in &h.order {
        if !b.values.contains_key(&key) {
            let head = h.values[&key].clone();
            rows.push(row(key, None, Some(head), None, Verdict::Added));
        }
    }
    let tested: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].effect.is_some() && !rows[i].counted)
        .collect();
    let ps: Vec<f64> = tested
        .iter()
        .map(|&i| rows[i].effect.expect("tested").p)
        .collect();
    let alpha = 1.0 - LEVEL;
    for (&i, p) in tested.iter().zip(stats::holm(&ps)) {
        let r = &mut rows[i];
        let e = r.effect.expect("tested");
        r.holm = Some(p);
        r.verdict = if e.low > 1.0 + o.noise && p < alpha {
            Verdict::Regressed
        } else if e.high < 1.0 - o.noise && p < alpha {
            Verdict::Improved
        } else if e.ratio > 1.0 + o.noise && p < alpha {
            Verdict::Undecided
        } else if e.ratio > 1.0 + o.noise {
            Verdict::Unshown
        } else {
            Verdict::Same
        };
        if matches!(r.verdict, Verdict::Undecided | Verdict::Unshown) {
            let (base, head) = (r.base.as_deref().unwrap(), r.head.as_deref().unwrap());
            // The rank test can show no p below 2 / C(2n, n) with n runs a side: enough runs for Holm's
            // first step over these rows is a floor to the estimate.
            let floor = (2..)
                .find(|&n| 2.0 / central_binomial(n) < alpha / tested.len() as f64)
                .unwrap_or(2);
            r.needed =
                stats::runs_needed(base, head, o.noise, alpha, tested.len()).map(|n| n.max(floor));
        }
    }
    rows
}

/// C(2n, n), as a float (exact to 2^53, far past what is asked).
fn central_binomial(n: usize) -> f64 {
    (1..=n).fold(1.0, |c, k| c * (n + k) as f64 / k as f64)
}

fn row(
    key: u32,
    base: Option<Vec<f64>>,
    head: Option<Vec<f64>>,
    effect: Option<Effect>,
    verdict: Verdict,
) -> Row {
    Row {
        key,
        base,
        head,
        effect,
        holm: None,
        verdict,
        needed: None,
        counted: false,
    }
}

/// Sides of counts (instructions, calls), at least two runs each, each within `spread` of its median
/// (0 for figures that must be equal): the counts decide. The ratio is of the medians, and the interval
/// holds every head run over every base run, so the row fails only when every pair of runs says so.
pub fn counted_effect(base: &[f64], head: &[f64], spread: f64) -> Option<Effect> {
    let range = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                (l.min(*x), h.max(*x))
            });
        let m = stats::median(v);
        (v.len() >= 2 && lo > 0.0 && hi - lo <= spread * m).then_some((lo, m, hi))
    };
    let ((bl, bm, bh), (hl, hm, hh)) = (range(base)?, range(head)?);
    let (low, high) = (hl / bh, hh / bl);
    Some(Effect {
        ratio: hm / bm,
        low,
        high,
        p: if low > 1.0 || high < 1.0 { 0.0 } else { 1.0 },
    })
}

#[cfg(test)]
mod tests;
