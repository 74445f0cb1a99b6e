//! The Mann–Whitney rank test of "no change" between two sides' runs: the p-value the gate corrects with
//! Holm's method. It is exact whatever the runs' distribution: when the two sides' runs come from one
//! distribution (the program compared with itself), every ordering of their ranks is as likely, so a p
//! below 0.05 happens at most 5% of the time, however skewed, heavy-tailed or bimodal the machine's noise
//! is. The bootstrap interval's own p ([`Effect::p`](super::Effect)) assumes more of the noise: on a VM
//! whose CPU runs at two speeds (a fixed loop's CPU time 13 or 21 ms from one run to the next), 2 of 20
//! real comparisons of a program with itself at 5 runs a side failed on it (docs/history.md, "The CI
//! gate").
//!
//! Exact for sides of up to [`EXACT_MAX`] runs without ties (the count of orderings by U, built up one
//! run at a time); otherwise the normal approximation with the ties' correction.

/// The largest product of the sides' sizes counted exactly (25 runs a side).
pub const EXACT_MAX: usize = 625;

/// The two-sided p-value of the Mann–Whitney test of `base` against `head`: 1 when a side is empty or a
/// value is not finite.
pub fn rank_p(base: &[f64], head: &[f64]) -> f64 {
    let (m, n) = (base.len(), head.len());
    if m == 0 || n == 0 || base.iter().chain(head).any(|x| !x.is_finite()) {
        return 1.0;
    }
    // U: pairs (b, h) with h > b, ties counting a half (in halves, to stay whole).
    let mut u2: usize = 0;
    for b in base {
        for h in head {
            u2 += match h.partial_cmp(b) {
                Some(std::cmp::Ordering::Greater) => 2,
                Some(std::cmp::Ordering::Equal) => 1,
                _ => 0,
            };
        }
    }
    let mut all: Vec<f64> = base.iter().chain(head).copied().collect();
    all.sort_by(f64::total_cmp);
    let ties: Vec<usize> = all
        .chunk_by(|a, b| a == b)
        .map(<[f64]>::len)
        .filter(|&t| t > 1)
        .collect();
    if ties.is_empty() && m * n <= EXACT_MAX {
        return exact(m, n, u2 / 2);
    }
    normal(m, n, u2 as f64 / 2.0, &ties)
}

/// The exact two-sided p of U = `u` for sides of `m` and `n`: twice the smaller tail, at most 1.
fn exact(m: usize, n: usize, u: usize) -> f64 {
    // counts[k][u]: orderings of k of the head's runs among the base's with that U, built by the
    // recurrence f(m, n, u) = f(m, n − 1, u − m) + f(m − 1, n, u), over a table indexed by (i, j).
    let max = m * n;
    let mut table: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); n + 1]; m + 1];
    for i in 0..=m {
        for j in 0..=n {
            let mut f = vec![0.0; i * j + 1];
            if i == 0 || j == 0 {
                f[0] = 1.0;
            } else {
                for (k, slot) in f.iter_mut().enumerate() {
                    let with_head_last = if k >= i {
                        table[i][j - 1].get(k - i).copied().unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    let with_base_last = table[i - 1][j].get(k).copied().unwrap_or(0.0);
                    *slot = with_head_last + with_base_last;
                }
            }
            table[i][j] = f;
        }
    }
    let f = &table[m][n];
    let total: f64 = f.iter().sum();
    let low: f64 = f[..=u.min(max)].iter().sum::<f64>() / total;
    let high: f64 = f[u.min(max)..].iter().sum::<f64>() / total;
    (2.0 * low.min(high)).min(1.0)
}

/// The normal approximation's two-sided p, with the ties' correction and a continuity correction.
fn normal(m: usize, n: usize, u: f64, ties: &[usize]) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let total = mf + nf;
    let mean = mf * nf / 2.0;
    let tie_term: f64 = ties
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let var = mf * nf / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * upper_normal(z)).min(1.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26 through erfc; error below 1.5e-7).
fn upper_normal(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_are_the_tables() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        // Complete separation of 5 and 5: 2 of the 252 orderings.
        assert!((rank_p(&a, &b) - 2.0 / 252.0).abs() < 1e-12);
        assert!((rank_p(&b, &a) - 2.0 / 252.0).abs() < 1e-12);
        // 3 and 3: 2 of 20.
        assert!((rank_p(&a[..3], &b[..3]) - 0.1).abs() < 1e-12);
        // U = 1 of 3 and 3: P(U <= 1) = 2/20, two-sided 0.2.
        assert!((rank_p(&[1.0, 2.0, 4.0], &[3.0, 5.0, 6.0]) - 0.2).abs() < 1e-12);
        // Interleaved: no evidence.
        assert!(rank_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]) > 0.6);
    }

    #[test]
    fn ties_and_large_sides_take_the_normal_approximation_and_agree_with_the_exact() {
        let a: Vec<f64> = (0..25).map(|i| f64::from(i) * 2.0).collect();
        let b: Vec<f64> = (0..25).map(|i| f64::from(i) * 2.0 + 11.0).collect();
        let exact = rank_p(&a, &b);
        let approx = normal(
            25,
            25,
            {
                let mut u = 0.0;
                for x in &a {
                    for y in &b {
                        if y > x {
                            u += 1.0;
                        }
                    }
                }
                u
            },
            &[],
        );
        assert!((exact - approx).abs() < 0.01, "{exact} {approx}");
        let p = rank_p(&[1.0, 1.0, 2.0, 2.0], &[2.0, 3.0, 3.0, 3.0]);
        assert!(p > 0.0 && p < 1.0, "{p}");
        assert_eq!(rank_p(&[5.0; 4], &[5.0; 4]), 1.0);
        assert_eq!(rank_p(&[], &[1.0]), 1.0);
        assert_eq!(rank_p(&[f64::NAN], &[1.0]), 1.0);
    }

    #[test]
    fn under_the_same_two_speed_noise_on_both_sides_it_rejects_at_most_its_level() {
        // Runs at one of two speeds 1.6 apart, as this VM's CPU: 2,000 comparisons of 5 and 5.
        let mut rng = super::super::Rng::new(7);
        let mut rejected = 0;
        for _ in 0..2000 {
            let mut side = || -> Vec<f64> {
                (0..5)
                    .map(|_| {
                        let speed = if rng.uniform() < 0.5 { 1.0 } else { 1.6 };
                        20.0 * speed * (1.0 + 0.02 * rng.normal())
                    })
                    .collect()
            };
            let (a, b) = (side(), side());
            if rank_p(&a, &b) < 0.05 {
                rejected += 1;
            }
        }
        // Exact at 5 and 5: P(p < 0.05) = P(p <= 0.0317) = 8/252 = 3.2%.
        assert!(rejected <= 2000 * 5 / 100, "{rejected} of 2000");
    }
}
