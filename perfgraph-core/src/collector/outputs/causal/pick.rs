//! What an experiment speeds up and by how much, and which sections are its progress points: pure
//! functions of the sections' counts, names and a random number.

use crate::local::causal::Count;

/// coz's default pool: 0 to 100% in steps of 5, with 0 a quarter of the picks ("extra weight on 0": the
/// baseline every other speed-up is compared with).
const STEPS: u32 = 20;
/// The weight of 0 among the `STEPS + 1` speed-ups: 7 of 27, as coz's `ZeroSpeedupWeight`.
const ZERO_WEIGHT: u64 = 7;

/// The progress points listed at most, by default (the sections that ended most in the experiment).
pub(super) const MOST_POINTS: usize = 32;

/// A small, fast random number generator (xorshift64*): the picks must be random, not good.
#[derive(Debug, Clone)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A speed-up in percent: one of `pool` uniformly, or coz's pool when it is empty.
pub(super) fn speedup(pool: &[u32], rng: &mut Rng) -> u32 {
    if !pool.is_empty() {
        return pool[rng.below(pool.len() as u64) as usize];
    }
    let r = rng.below(ZERO_WEIGHT + STEPS as u64);
    if r < ZERO_WEIGHT {
        0
    } else {
        (r - ZERO_WEIGHT + 1) as u32 * (100 / STEPS)
    }
}

/// The sections an experiment may pick: those that have ended at least once (`counts` by id, 0 the root),
/// among `only` by name when it names any.
pub(super) fn candidates(
    counts: &[Count],
    name: impl Fn(u32) -> String,
    only: &[String],
) -> Vec<u32> {
    counts
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, c)| c.departures > 0)
        .map(|(id, _)| id as u32)
        .filter(|&id| only.is_empty() || only.contains(&name(id)))
        .collect()
}

/// The progress points of an experiment that counted `counts` (by id): the sections named in `named`
/// (their ends summed over the sites of one name, listed even when 0), or by default the [`MOST_POINTS`]
/// sections that ended most. `(name, ends)`, in the order listed.
pub(super) fn points(
    counts: &[Count],
    name: impl Fn(u32) -> String,
    named: &[String],
) -> Vec<(String, u64)> {
    let ended = counts
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, c)| c.departures > 0)
        .map(|(id, c)| (name(id as u32), c.departures));
    let mut by_name: Vec<(String, u64)> = Vec::new();
    for (n, ends) in ended {
        match by_name.iter_mut().find(|(m, _)| *m == n) {
            Some((_, e)) => *e += ends,
            None => by_name.push((n, ends)),
        }
    }
    if !named.is_empty() {
        return named
            .iter()
            .map(|n| {
                let ends = by_name.iter().find(|(m, _)| m == n).map_or(0, |p| p.1);
                (n.clone(), ends)
            })
            .collect();
    }
    by_name.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    by_name.truncate(MOST_POINTS);
    by_name
}

/// The latency points of an experiment, for the sections named in `named`: `(name, starts, ends, under
/// way at its end)`, the sites of one name summed (`counts` and `under_way` by id).
pub(super) fn latencies(
    counts: &[Count],
    under_way: &[u64],
    name: impl Fn(u32) -> String,
    named: &[String],
) -> Vec<(String, u64, u64, u64)> {
    named
        .iter()
        .map(|n| {
            let mut l = (n.clone(), 0, 0, 0);
            for (id, c) in counts.iter().enumerate().skip(1) {
                if name(id as u32) == *n {
                    l.1 += c.arrivals;
                    l.2 += c.departures;
                    l.3 += under_way.get(id).copied().unwrap_or(0);
                }
            }
            l
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(departures: &[u64]) -> Vec<Count> {
        departures
            .iter()
            .map(|&d| Count {
                arrivals: d,
                departures: d,
            })
            .collect()
    }

    fn name(id: u32) -> String {
        ["(root)", "step", "solve", "step", "io"][id as usize].to_owned()
    }

    #[test]
    fn coz_pool_weights_zero_and_steps_by_five() {
        let mut rng = Rng::new(42);
        let picks: Vec<u32> = (0..27_000).map(|_| speedup(&[], &mut rng)).collect();
        let zeros = picks.iter().filter(|&&p| p == 0).count();
        assert!((6_000..8_000).contains(&zeros), "{zeros}");
        assert!(picks.iter().all(|p| p % 5 == 0 && *p <= 100));
        assert!(picks.contains(&100) && picks.contains(&5));
        let pool = [0, 25, 50];
        assert!((0..100).all(|_| pool.contains(&speedup(&pool, &mut rng))));
    }

    #[test]
    fn candidates_have_ended_and_are_among_those_named() {
        let c = counts(&[9, 3, 0, 2, 1]);
        assert_eq!(candidates(&c, name, &[]), [1, 3, 4]);
        assert_eq!(candidates(&c, name, &["step".to_owned()]), [1, 3]);
    }

    #[test]
    fn latencies_sum_one_name() {
        let c = counts(&[9, 3, 0, 2, 1]);
        let under_way = [0, 1, 0, 2, 0];
        assert_eq!(
            latencies(&c, &under_way, name, &["step".to_owned()]),
            [("step".to_owned(), 5, 5, 3)]
        );
    }

    #[test]
    fn points_sum_one_name_and_list_a_named_one_that_did_not_end() {
        let c = counts(&[9, 3, 0, 2, 1]);
        assert_eq!(
            points(&c, name, &[]),
            [("step".to_owned(), 5), ("io".to_owned(), 1)]
        );
        assert_eq!(
            points(&c, name, &["solve".to_owned(), "io".to_owned()]),
            [("solve".to_owned(), 0), ("io".to_owned(), 1)]
        );
    }
}
