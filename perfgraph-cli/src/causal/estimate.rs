//! From experiments to predictions: for a progress point, each section's program speed-up at each tested
//! speed-up, with a 95% interval.
//!
//! A cell (a section at a speed-up) holds experiments; its time per progress visit is its experiments'
//! durations summed over their visits summed (coz's estimate). The program speed-up is
//! `1 − cell / baseline`, the baseline being every experiment at 0%, whatever section it picked: at 0%
//! nothing is delayed, so they all measure the same program (coz's viewer takes each section's own 0%
//! experiments; pooling them gives each cell the same, tighter baseline, and leaves a section's own 0%
//! cell a real check: it must come out near 0). The interval is a bootstrap's: both the cell's and the
//! baseline's experiments resampled, 1,000 times, with a fixed seed (the same profile always prints the
//! same table).

use super::profile::Experiment;
use crate::rng::Rng;

/// Resamples of the bootstrap.
const RESAMPLES: usize = 1000;

/// One prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub section: String,
    /// Percent.
    pub speedup: u32,
    /// The program's speed-up, a fraction (0.1: 10% less time per progress visit).
    pub estimate: f64,
    /// The 95% interval's ends.
    pub low: f64,
    pub high: f64,
    pub experiments: usize,
}

/// A prediction for the tests: `estimate` ± 0.01, from 3 experiments.
#[cfg(test)]
pub fn test_cell(section: &str, speedup: u32, estimate: f64) -> Cell {
    Cell {
        section: section.into(),
        speedup,
        estimate,
        low: estimate - 0.01,
        high: estimate + 0.01,
        experiments: 3,
    }
}

/// A progress point's baseline: the experiments at 0%.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub experiments: usize,
    /// ns per completion (throughput), or the latency, ns.
    pub period_ns: f64,
}

/// What is predicted at the progress point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Its rate: time per completion, `Σ duration / Σ completions`.
    Throughput,
    /// Its latency, by Little's law as coz's viewer has it: the number under way (at each experiment's
    /// end, weighted by its duration) over the arrival rate, `Σ (under way × duration) / Σ arrivals`.
    Latency,
}

/// Per experiment that saw `point`: the two sums whose ratio is the measure (a time per completion, or a
/// latency).
fn runs<'a>(
    experiments: impl Iterator<Item = &'a Experiment>,
    point: &str,
    measure: Measure,
) -> Vec<(f64, f64)> {
    experiments
        .filter_map(|e| match measure {
            Measure::Throughput => {
                let visits = e.points.iter().find(|p| p.0 == point)?.1;
                Some((e.duration as f64, visits as f64))
            }
            Measure::Latency => {
                let l = e.latencies.iter().find(|p| p.0 == point)?.1;
                Some((l.difference as f64 * e.duration as f64, l.arrivals as f64))
            }
        })
        .collect()
}

/// The measure over `runs`: `Σ first / Σ second` (`NaN` when the second sums to 0).
fn period(runs: &[(f64, f64)]) -> f64 {
    let (d, v) = runs.iter().fold((0.0, 0.0), |(d, v), r| (d + r.0, v + r.1));
    if v > 0.0 { d / v } else { f64::NAN }
}

/// The baseline of `point`, `None` without an experiment at 0% that saw it visited.
pub fn baseline(experiments: &[Experiment], point: &str, measure: Measure) -> Option<Baseline> {
    let base = runs(
        experiments.iter().filter(|e| e.speedup == 0),
        point,
        measure,
    );
    let period_ns = period(&base);
    period_ns.is_finite().then_some(Baseline {
        experiments: base.len(),
        period_ns,
    })
}

/// Every cell's prediction for `point`, by section then speed-up (empty without a baseline).
pub fn cells(experiments: &[Experiment], point: &str, measure: Measure) -> Vec<Cell> {
    let base = runs(
        experiments.iter().filter(|e| e.speedup == 0),
        point,
        measure,
    );
    if !period(&base).is_finite() {
        return Vec::new();
    }
    let mut keys: Vec<(&str, u32)> = experiments
        .iter()
        .map(|e| (e.selected.as_str(), e.speedup))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // Seeded: the intervals are the same from run to run.
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    keys.into_iter()
        .filter_map(|(section, speedup)| {
            let of = experiments
                .iter()
                .filter(|e| e.selected == section && e.speedup == speedup);
            let cell = runs(of, point, measure);
            let estimate = 1.0 - period(&cell) / period(&base);
            if !estimate.is_finite() {
                return None;
            }
            let (low, high) = interval(&cell, &base, &mut rng);
            Some(Cell {
                section: section.to_owned(),
                speedup,
                estimate,
                low,
                high,
                experiments: cell.len(),
            })
        })
        .collect()
}

/// The bootstrap's 2.5th and 97.5th percentiles of `1 − period(cell) / period(base)`.
fn interval(cell: &[(f64, f64)], base: &[(f64, f64)], rng: &mut Rng) -> (f64, f64) {
    let mut draws: Vec<f64> = (0..RESAMPLES)
        .map(|_| 1.0 - period(&resample(cell, rng)) / period(&resample(base, rng)))
        .filter(|d| d.is_finite())
        .collect();
    if draws.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((draws.len() - 1) as f64 * q).round() as usize];
    (at(0.025), at(0.975))
}

fn resample(runs: &[(f64, f64)], rng: &mut Rng) -> Vec<(f64, f64)> {
    (0..runs.len())
        .map(|_| runs[rng.below(runs.len())])
        .collect()
}

/// The progress point by default: of those every experiment at 0% saw visited at least 5 times, the one
/// whose rate varied least between them (the smallest coefficient of variation of visits per second),
/// more visits breaking a tie. `None` if there is none.
pub fn steadiest(experiments: &[Experiment]) -> Option<String> {
    let base: Vec<&Experiment> = experiments.iter().filter(|e| e.speedup == 0).collect();
    let first = base.first()?;
    let mut best: Option<(f64, u64, &str)> = None;
    for (name, _) in &first.points {
        let rates: Option<Vec<(f64, u64)>> = base
            .iter()
            .map(|e| {
                let v = e.points.iter().find(|p| p.0 == *name)?.1;
                (v >= 5 && e.duration > 0).then(|| (v as f64 / e.duration as f64, v))
            })
            .collect();
        let Some(rates) = rates else { continue };
        let n = rates.len() as f64;
        let mean = rates.iter().map(|r| r.0).sum::<f64>() / n;
        let var = rates.iter().map(|r| (r.0 - mean).powi(2)).sum::<f64>() / n;
        let cv = var.sqrt() / mean;
        let visits = rates.iter().map(|r| r.1).sum::<u64>();
        let better = match best {
            None => true,
            Some((c, v, _)) => cv < c - 1e-9 || ((cv - c).abs() <= 1e-9 && visits > v),
        };
        if better {
            best = Some((cv, visits, name));
        }
    }
    best.map(|b| b.2.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(selected: &str, speedup: u32, duration: u64, visits: &[(&str, u64)]) -> Experiment {
        Experiment {
            selected: selected.into(),
            speedup,
            duration,
            points: visits.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            latencies: Vec::new(),
        }
    }

    #[test]
    fn a_cell_against_the_pooled_baseline() {
        let ex = [
            e("a", 0, 1000, &[("step", 10)]),
            e("b", 0, 1000, &[("step", 10)]),
            e("a", 25, 900, &[("step", 10)]),
            e("a", 25, 450, &[("step", 5)]),
        ];
        let cells = cells(&ex, "step", Measure::Throughput);
        let a25 = cells
            .iter()
            .find(|c| c.section == "a" && c.speedup == 25)
            .unwrap();
        assert!((a25.estimate - 0.1).abs() < 1e-12, "{a25:?}");
        assert_eq!(a25.experiments, 2);
        assert!(a25.low <= a25.estimate && a25.estimate <= a25.high);
        assert_eq!(
            baseline(&ex, "step", Measure::Throughput)
                .unwrap()
                .period_ns,
            100.0
        );
        assert!(super::cells(&ex, "nothing", Measure::Throughput).is_empty());
    }

    #[test]
    fn latency_by_littles_law() {
        use super::super::profile::Latency;
        let with = |speedup, duration, difference, arrivals| {
            let mut x = e("a", speedup, duration, &[]);
            let l = Latency {
                arrivals,
                departures: arrivals,
                difference,
            };
            x.latencies.push(("req".to_owned(), l));
            x
        };
        // 4 under way, 100 arrivals in 1000 ns: 40 ns each; then 2 under way at the same rate: 20 ns.
        let ex = [with(0, 1000, 4, 100), with(50, 1000, 2, 100)];
        let base = baseline(&ex, "req", Measure::Latency).unwrap();
        assert_eq!(base.period_ns, 40.0);
        let c = cells(&ex, "req", Measure::Latency);
        let a50 = c.iter().find(|c| c.speedup == 50).unwrap();
        assert!((a50.estimate - 0.5).abs() < 1e-12, "{a50:?}");
    }

    #[test]
    fn the_steadiest_point_is_the_default() {
        let ex = [
            e("a", 0, 1000, &[("noisy", 10), ("steady", 20), ("rare", 1)]),
            e("a", 0, 1000, &[("noisy", 30), ("steady", 21), ("rare", 2)]),
        ];
        assert_eq!(steadiest(&ex).as_deref(), Some("steady"));
    }
}
