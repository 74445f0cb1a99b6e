//! Change points found, and not found, in synthetic histories: 60 commits around 1.5 ms with lognormal
//! noise, each series from its own seed.

use super::*;

/// `n` values around 1.5 ms with lognormal noise of coefficient of variation `cv`, times `1 + step`
/// from each `(at, step)` on (steps compound): index `at` is the first value of the new level.
fn series(n: usize, cv: f64, steps: &[(usize, f64)], seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    let sigma = (1.0 + cv * cv).ln().sqrt();
    let uniform = |rng: &mut SplitMix64| ((rng.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    (0..n)
        .map(|i| {
            // Box–Muller.
            let (u, v) = (uniform(&mut rng), uniform(&mut rng));
            let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
            let level: f64 = steps
                .iter()
                .filter(|&&(at, _)| i >= at)
                .map(|&(_, s)| 1.0 + s)
                .product();
            1.5e6 * level * (sigma * z - sigma * sigma / 2.0).exp()
        })
        .collect()
}

/// The brute-force q̂ of splitting `x` at `t`, straight from the definition.
fn q_direct(x: &[f64], t: usize) -> f64 {
    let (a, b) = x.split_at(t);
    let (m, r) = (a.len() as f64, b.len() as f64);
    let pairs = |s: &[f64]| -> f64 {
        let mut total = 0.0;
        for i in 0..s.len() {
            for j in i + 1..s.len() {
                total += (s[i] - s[j]).abs();
            }
        }
        total
    };
    let across: f64 = a
        .iter()
        .map(|x| b.iter().map(|y| (x - y).abs()).sum::<f64>())
        .sum();
    let e = 2.0 * across / (m * r)
        - pairs(a) / (m * (m - 1.0) / 2.0)
        - pairs(b) / (r * (r - 1.0) / 2.0);
    m * r / (m + r) * e
}

/// The least-squares split of `x` into two levels (each of at least `min` values): where the data put
/// a single step, by the criterion that suits a shift of the mean in Gaussian noise best.
fn least_squares_split(x: &[f64], min: usize) -> usize {
    let (n, total) = (x.len(), x.iter().sum::<f64>());
    let mut best = (0, f64::NEG_INFINITY);
    let mut left = 0.0;
    for t in 1..n {
        left += x[t - 1];
        if t >= min && n - t >= min {
            let (m, r) = (t as f64, (n - t) as f64);
            let d = left / m - (total - left) / r;
            if m * r / (m + r) * d * d > best.1 {
                best = (t, m * r / (m + r) * d * d);
            }
        }
    }
    best.0
}

#[test]
fn statistic_matches_the_definition() {
    let x = series(40, 0.05, &[(15, 0.1), (30, -0.1)], 7);
    let (t, q) = Energy::new(x.len(), 3).best(&x).unwrap();
    let mut direct = (0, f64::NEG_INFINITY);
    for kappa in 6..=40 {
        for t in 3..=kappa - 3 {
            let q = q_direct(&x[..kappa], t);
            if q > direct.1 {
                direct = (t, q);
            }
        }
    }
    assert_eq!(t, direct.0);
    assert!(
        (q - direct.1).abs() <= 1e-9 * direct.1.abs(),
        "{q} vs {direct:?}"
    );
}

#[test]
fn running_sums_and_largest() {
    for n in 0..11 {
        let mut v: Vec<f64> = (0..n).map(|i| (i * i) as f64 * 0.5 + 1.0).collect();
        let expected: Vec<f64> = (0..n).map(|i| v[..i].iter().sum()).collect();
        let total: f64 = v.iter().sum();
        assert_eq!(running_sums(&mut v), total);
        assert_eq!(v, expected);
        let top = if n == 0 { f64::NEG_INFINITY } else { v[n - 1] };
        assert_eq!(largest(&v), top);
    }
    assert_eq!(largest(&[1.0, f64::NAN, 3.0, 2.0, f64::NAN]), 3.0);
}

/// The acceptance test: a +4% step at commit 37 ("commit 37" is index 37: values 37.. are 4%
/// higher) in 60 commits of 2% noise.
///
/// A step of twice the noise can't be placed to within one commit every time: even the least-squares
/// split lands at 37 ± 1 in 1697 of 2000 such series (measured with seeds 0..2000), E-Divisive's single
/// change in 1669; in 1916 E-Divisive finds a single change within one commit of the least-squares split. Of these 20 series, 15 have their
/// least-squares split at 37 ± 1 (the others at 32, 35, 35, 39 and 43), and E-Divisive follows it in
/// all 20.
#[test]
fn four_percent_step_at_commit_37_in_two_percent_noise() {
    let settings = Settings::default();
    let (mut one, mut follows, mut at_37) = (0, 0, 0);
    for seed in 0..20 {
        let x = series(60, 0.02, &[(37, 0.04)], seed);
        let changes = change_points(&x, &settings);
        if let [change] = changes.as_slice() {
            one += 1;
            follows += usize::from(change.index.abs_diff(least_squares_split(&x, 5)) <= 1);
            at_37 += usize::from(change.index.abs_diff(37) <= 1);
            assert!(change.after > change.before, "seed {seed}: {change:?}");
        } else {
            eprintln!("seed {seed}: {changes:?}");
        }
    }
    eprintln!(
        "of 20 series: {one} with one change, {follows} at the least-squares split ± 1, {at_37} at 37 ± 1"
    );
    assert_eq!((one, follows), (20, 20));
    assert!(at_37 >= 15);
}

/// No change in 60 commits of 2% noise: with the defaults, 90 of 10000 such series (seeds
/// 100000..110000) get one, near the 0.8% that 499 shuffles at p < 0.01 allow (p ≤ 4/500).
#[test]
fn flat_series_has_no_change() {
    let settings = Settings::default();
    let mut false_changes = 0;
    for seed in 1000..1050 {
        let changes = change_points(&series(60, 0.02, &[], seed), &settings);
        if !changes.is_empty() {
            eprintln!("seed {seed}: {changes:?}");
            false_changes += 1;
        }
    }
    eprintln!("false changes in {false_changes} of 50 flat series");
    assert!(false_changes <= 3);
}

/// +5% at 20, then -5% at 45 (back near the start's level, which a split against the series' end
/// alone would hardly see). Over 2000 series (seeds 2000..4000): both within ±1 in 1694, exactly two
/// changes, up then down, within ±2 in 1860.
#[test]
fn two_steps_are_both_found() {
    let settings = Settings::default();
    let (mut found, mut close) = (0, 0);
    for seed in 2000..2020 {
        let x = series(60, 0.02, &[(20, 0.05), (45, -0.05)], seed);
        let changes = change_points(&x, &settings);
        if let [up, down] = changes.as_slice()
            && up.index.abs_diff(20) <= 2
            && down.index.abs_diff(45) <= 2
            && up.after > up.before
            && down.after < down.before
        {
            found += 1;
            close += usize::from(up.index.abs_diff(20) <= 1 && down.index.abs_diff(45) <= 1);
            assert_eq!(up.after, down.before);
        } else {
            eprintln!("seed {seed}: {changes:?}");
        }
    }
    eprintln!("both steps found in {found} of 20 series, both within ±1 in {close}");
    assert_eq!(found, 20);
}

#[test]
fn the_change_reports_medians_and_p() {
    let x = series(60, 0.02, &[(37, 0.04)], 3);
    let changes = change_points(&x, &Settings::default());
    assert_eq!(changes.len(), 1);
    let c = &changes[0];
    assert_eq!(c.before, median(&x[..c.index]));
    assert_eq!(c.after, median(&x[c.index..]));
    assert!((c.after / c.before - 1.04).abs() < 0.02, "{c:?}");
    assert!(c.p > 0.0 && c.p < Settings::default().alpha);
}

#[test]
fn same_seed_same_answer_and_any_scale() {
    let x = series(60, 0.02, &[(37, 0.04)], 11);
    let settings = Settings::default();
    let changes = change_points(&x, &settings);
    assert_eq!(changes, change_points(&x, &settings));
    // A section a million times shorter: the same change, at the same p.
    let tiny: Vec<f64> = x.iter().map(|v| v * 1e-6).collect();
    let scaled = change_points(&tiny, &settings);
    assert_eq!(scaled.len(), changes.len());
    assert_eq!(scaled[0].index, changes[0].index);
    assert_eq!(scaled[0].p, changes[0].p);
}

#[test]
fn skipped_values_keep_the_series_indices() {
    let mut x = series(60, 0.02, &[(37, 0.04)], 5);
    x[10] = f64::NAN;
    x[30] = f64::INFINITY;
    x[50] = f64::NEG_INFINITY;
    let changes = change_points(&x, &Settings::default());
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].index.abs_diff(37) <= 1, "{changes:?}");
    assert!(changes[0].before.is_finite() && changes[0].after.is_finite());
}

#[test]
fn degenerate_series_have_no_change() {
    let settings = Settings::default();
    assert!(change_points(&[], &settings).is_empty());
    assert!(change_points(&[1.0], &settings).is_empty());
    assert!(change_points(&[1.0; 9], &settings).is_empty());
    assert!(change_points(&[1.0; 60], &settings).is_empty());
    assert!(change_points(&[0.0; 60], &settings).is_empty());
    assert!(change_points(&[f64::NAN; 60], &settings).is_empty());
    let mixed = [f64::INFINITY, f64::NAN, 1.0, f64::NEG_INFINITY, 2.0];
    assert!(change_points(&mixed, &settings).is_empty());
    // Huge values overflow the statistic to NaN or ∞: no panic, whatever is reported.
    let mut huge = vec![1e308; 30];
    huge.extend([-1e308; 30]);
    let _ = change_points(&huge, &settings);
    // Settings that can never reach significance, or a min_size below 2.
    let x = series(60, 0.02, &[(37, 0.04)], 1);
    assert!(
        change_points(
            &x,
            &Settings {
                permutations: 0,
                ..settings
            }
        )
        .is_empty()
    );
    assert!(
        change_points(
            &x,
            &Settings {
                alpha: 0.0,
                ..settings
            }
        )
        .is_empty()
    );
    let small = change_points(
        &x,
        &Settings {
            min_size: 0,
            ..settings
        },
    );
    assert!(small.iter().all(|c| c.index >= 2 && c.index <= 58));
}
