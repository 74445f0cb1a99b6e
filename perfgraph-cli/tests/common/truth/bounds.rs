//! What the program knows of a time perfgraph measured: bounds, from the inner and outer intervals it
//! timed each call with (`examples/truth.rs`).

use std::ops::{Add, Sub};

/// What the program knows of a time perfgraph measured: it lies between `low` and `high` (ns). For one
/// call's duration, `low` is the program's inner interval (read inside the `#[timed]` guard, so within
/// perfgraph's) and `high` its outer one (read by the caller around the call, so around perfgraph's);
/// sums add the bounds, differences subtract the other's opposite bound, so that they stay bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bounds {
    pub low: u64,
    pub high: u64,
}

impl Bounds {
    /// A figure the program knows by one reading only (a lock's wait or hold, the run's wall time).
    pub fn single(ns: u64) -> Bounds {
        Bounds { low: ns, high: ns }
    }

    /// Each bound divided by `n` (an average over `n` calls).
    pub fn per(self, n: u64) -> Bounds {
        Bounds {
            low: self.low / n,
            high: self.high / n,
        }
    }
}

impl Add for Bounds {
    type Output = Bounds;
    fn add(self, o: Bounds) -> Bounds {
        Bounds {
            low: self.low + o.low,
            high: self.high + o.high,
        }
    }
}

/// `a - b` lies between `a.low - b.high` and `a.high - b.low` (0 at the least).
impl Sub for Bounds {
    type Output = Bounds;
    fn sub(self, o: Bounds) -> Bounds {
        Bounds {
            low: self.low.saturating_sub(o.high),
            high: self.high.saturating_sub(o.low),
        }
    }
}

impl std::iter::Sum for Bounds {
    fn sum<I: Iterator<Item = Bounds>>(iter: I) -> Bounds {
        iter.fold(Bounds::default(), Add::add)
    }
}

/// Calls' durations as bounds: the inner ones and the outer ones, each sorted. Perfgraph's `k`th shortest
/// call lies between the `k`th shortest inner and the `k`th shortest outer duration (each of its calls
/// lies between its own two).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Durations {
    inner: Vec<u64>,
    outer: Vec<u64>,
}

impl Durations {
    pub fn of(calls: impl IntoIterator<Item = Bounds>) -> Durations {
        let mut d = Durations::default();
        d.extend(calls);
        d
    }

    pub fn extend(&mut self, calls: impl IntoIterator<Item = Bounds>) {
        for b in calls {
            self.inner.push(b.low);
            self.outer.push(b.high);
        }
        self.inner.sort_unstable();
        self.outer.sort_unstable();
    }

    /// Each call's bounds (the `k`th shortest inner with the `k`th shortest outer).
    pub fn iter(&self) -> impl Iterator<Item = Bounds> + '_ {
        self.inner
            .iter()
            .zip(&self.outer)
            .map(|(&low, &high)| Bounds { low, high })
    }

    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// The nearest-rank percentile `p` (0..=100): a bound for perfgraph's.
    pub fn percentile(&self, p: f64) -> Bounds {
        Bounds {
            low: percentile(&self.inner, p),
            high: percentile(&self.outer, p),
        }
    }

    pub fn min(&self) -> Bounds {
        self.percentile(0.0)
    }

    pub fn max(&self) -> Bounds {
        self.percentile(100.0)
    }

    /// The durations summed: the calls' wall time.
    pub fn sum(&self) -> Bounds {
        self.iter().sum()
    }
}

/// The nearest-rank percentile `p` (0..=100) of the sorted `values`.
fn percentile(values: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * values.len() as f64).ceil().max(1.0) as usize;
    values[rank.min(values.len()) - 1]
}
