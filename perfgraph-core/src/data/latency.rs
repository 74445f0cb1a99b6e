//! A call path's latency distribution as plain values, in nanoseconds: what reports and the JSON show,
//! and what runs, threads, paths and processes combine by adding buckets.
//!
//! The buckets are [`crate::base::buckets`]'s log-linear scheme over nanoseconds (64 sub-buckets per power
//! of two), described for other tools in docs/json-schema.md. A percentile is the midpoint of the bucket
//! it falls in, kept within the exact minimum and maximum: at most 1.6% off (the recording threads count
//! in ticks, re-bucketed here to nanoseconds).

use crate::base::buckets;
use crate::base::clock::{Scale, Ticks};

/// Completed calls by duration.
///
/// Invariants: `buckets` is sorted by bucket, with no bucket twice and no zero count; `count` is the sum
/// of its counts; empty (`count == 0`) means `min_ns == max_ns == 0`.
///
/// ```
/// use perfgraph_core::Latency;
///
/// let mut a = Latency::default();
/// for ns in 1..=1000 {
///     a.record(ns * 1000, 1);
/// }
/// let p50 = a.percentile(50.0) as f64;
/// assert!((p50 - 500_000.0).abs() / 500_000.0 <= 0.02);
/// let mut b = a.clone();
/// b.add(&a);
/// assert_eq!(b.count, 2000);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Latency {
    /// Calls counted.
    pub count: u64,
    /// The shortest call, ns.
    pub min_ns: u64,
    /// The longest call, ns.
    pub max_ns: u64,
    /// `(bucket, calls)` for the buckets that have calls, by bucket (scheme: docs/json-schema.md).
    pub buckets: Vec<(u32, u64)>,
}

impl Latency {
    /// Counts `calls` calls of `ns` nanoseconds each.
    pub fn record(&mut self, ns: u64, calls: u64) {
        if calls == 0 {
            return;
        }
        let one = Latency {
            count: calls,
            min_ns: ns,
            max_ns: ns,
            buckets: vec![(buckets::index(ns) as u32, calls)],
        };
        self.add(&one);
    }

    /// Adds `other`'s calls to these.
    pub fn add(&mut self, other: &Latency) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.count += other.count;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        buckets::add_sparse(&mut self.buckets, &other.buckets);
    }

    /// [`add`](Self::add) that refuses (returning `false`, `self` unchanged) a count that would overflow:
    /// for histograms read from files.
    pub(crate) fn checked_add(&mut self, other: &Latency) -> bool {
        let total = self.count.checked_add(other.count);
        // Both in bucket order: one walk finds the buckets they share.
        let mut mine = self.buckets.iter().peekable();
        let buckets_fit = other.buckets.iter().all(|&(b, n)| {
            while mine.next_if(|x| x.0 < b).is_some() {}
            let have = mine.peek().filter(|x| x.0 == b).map_or(0, |x| x.1);
            have.checked_add(n).is_some()
        });
        if total.is_none() || !buckets_fit {
            return false;
        }
        self.add(other);
        true
    }

    /// The duration that `pct` percent of the calls do not exceed (0 < `pct` <= 100), ns: the midpoint of
    /// the bucket holding that call, within `min_ns..=max_ns`; 0 when empty.
    pub fn percentile(&self, pct: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((pct / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for &(i, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return buckets::middle(i as usize).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }

    /// A histogram in ticks (a reading's) in nanoseconds with `scale`: each tick bucket's calls go to the
    /// nanosecond bucket of its midpoint.
    pub(crate) fn from_ticks(
        min: u64,
        max: u64,
        tick_buckets: &[(u32, u64)],
        scale: Scale,
    ) -> Latency {
        if tick_buckets.is_empty() {
            return Latency::default();
        }
        let mut out: Vec<(u32, u64)> = Vec::with_capacity(tick_buckets.len());
        let mut count = 0;
        for &(i, n) in tick_buckets {
            let ns = scale.delta_ns(Ticks(buckets::middle(i as usize)));
            let b = buckets::index(ns) as u32;
            count += n;
            // Tick buckets come in order and the conversion keeps it: a bucket repeats only at the end.
            match out.last_mut() {
                Some(last) if last.0 == b => last.1 += n,
                _ => out.push((b, n)),
            }
        }
        Latency {
            count,
            min_ns: scale.delta_ns(Ticks(min)),
            max_ns: scale.delta_ns(Ticks(max)),
            buckets: out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact percentile of sorted `v`, nearest rank.
    fn exact(v: &[u64], pct: f64) -> u64 {
        let rank = ((pct / 100.0 * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    }

    #[test]
    fn percentiles_are_within_two_percent_through_ticks_and_back() {
        // A skewed spread over six orders of magnitude, counted in ticks of 1/3 ns and re-bucketed.
        let mut ticks: Vec<u64> = (0..20_000u64)
            .map(|i| 300 + (i * i * 7919) % 3_000_000_000 / (1 + i % 97))
            .collect();
        ticks.sort_unstable();
        let scale = Scale::fixed(Ticks(0), 1.0 / 3.0);
        let mut hist = vec![0u64; buckets::BUCKETS];
        for &t in &ticks {
            hist[buckets::index(t)] += 1;
        }
        let sparse: Vec<(u32, u64)> = hist
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, &n)| (i as u32, n))
            .collect();
        let l = Latency::from_ticks(ticks[0], *ticks.last().unwrap(), &sparse, scale);
        assert_eq!(l.count, ticks.len() as u64);
        let ns: Vec<u64> = ticks.iter().map(|&t| scale.delta_ns(Ticks(t))).collect();
        for pct in [1.0, 10.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let want = exact(&ns, pct) as f64;
            let got = l.percentile(pct) as f64;
            assert!(
                (got - want).abs() / want <= 0.02,
                "p{pct}: {got} against {want}"
            );
        }
        assert_eq!(l.percentile(100.0), l.max_ns);
    }

    #[test]
    fn merging_adds_buckets() {
        let mut a = Latency::default();
        let mut b = Latency::default();
        a.record(100, 3);
        a.record(5_000, 1);
        b.record(5_001, 2);
        b.record(7, 1);
        let mut ab = a.clone();
        ab.add(&b);
        let mut ba = b.clone();
        ba.add(&a);
        assert_eq!(ab, ba);
        assert_eq!((ab.count, ab.min_ns, ab.max_ns), (7, 7, 5_001));
        assert_eq!(ab.percentile(50.0), 100);
    }
}
