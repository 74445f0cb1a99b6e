//! The statistics of the gate: per section, the ratio of the sides' medians (head over base) with a
//! confidence interval and a p-value for "no change", Holm's correction across sections, and an estimate
//! of the runs per side that would decide.
//!
//! Everything is on the log scale: a section's effect is θ = ln(median(head) / median(base)), its
//! interval is symmetric in θ, and the ratio's interval is its exponential.
//!
//! The interval is θ ± t·se, with se a run-level bootstrap standard error and t Student's quantile with
//! Welch–Satterthwaite's degrees of freedom. Each side is bootstrapped on its own ([`RESAMPLES`]
//! resamples): the runs' logs are drawn with replacement, each with Gaussian kernel noise added (a
//! smoothed bootstrap, Silverman's normal-reference bandwidth h = 1.06·σ·n^(-1/5), σ = 1.4826·MAD of the
//! logs), and the median of the resample is taken. The variance of those medians is divided by
//! 1 + (h/σ)², which is what rescaling each draw to the sample's spread would do (Silverman and Young's
//! shrunk smoothed bootstrap): the kernel smooths the few values a bootstrapped median of a handful of
//! runs can take, without widening it. se² is the sum of the sides' variances. A side's degrees of
//! freedom are those of a sample variance, n − 1, less the Monte Carlo error of the bootstrap:
//! 1/ν = 1/(n − 1) + 1/(RESAMPLES − 1).
//!
//! The p-value is two-sided, from the same t statistic θ/se and degrees of freedom, so it is below
//! 1 − level exactly when the interval leaves out 1. It is not a count of resamples, so it has no floor at
//! 1/(RESAMPLES + 1): Holm over 1,000 sections asks for a p below 5e-5 of the strongest one, which no
//! count of a few thousand resamples can show.
//!
//! The method was chosen by simulation (lognormal runs, nominal 95% intervals):
//! - a plain percentile bootstrap of the medians (1,000 resamples) over-covered: 96.4–97.6% at n = 5,
//!   96.0–97.0% at 10, 96.3–96.9% at 20 runs per side (2,000 comparisons per configuration);
//! - the variance of the unsmoothed bootstrap's medians is 35% above the true variance of a median at
//!   n = 5, 20% at 10, 16% at 20 (10,000 samples each), and a t interval on it covered 97.4–98.2% at n = 5;
//! - the shrunk smoothed one is 7% below it at n = 5, 6% at 10 and 3% at 20, but much steadier (its
//!   variance, as a chi-square's degrees of freedom: 3.3, 6.2, 11.1 against 3.4, 4.4, 5.6 unsmoothed),
//!   and with n − 1 degrees of freedom per side its interval is calibrated: over 10,000 comparisons per n
//!   (CV 5%, +5%), 94.1–95.6% coverage for every n from 3 to 50 (97.2% at n = 2); 93.8–94.3% with
//!   unequal sides (5 against 10 or 20 runs, 20 against 5) and unequal CVs (1% to 8%);
//! - the number of resamples hardly matters to an interval built on a standard error: at n = 5, 10, 20,
//!   95.5%, 94.2%, 94.4% with 200 resamples and 95.2%, 94.4%, 94.7% with 2,000 (20,000 comparisons each).
//!   So [`RESAMPLES`] is set by cost; 1,000 sections of 20 runs per side take 0.29 s (optimised).
//!
//! The acceptance test (`coverage_*` in the tests): 1,000 simulated comparisons of lognormal runs per row,
//! the nominal 95% interval's coverage of the true ratio of the lognormal medians.
//!
//! | runs per side | CV  | shift | coverage |
//! |---------------|-----|-------|----------|
//! | 5             | 2%  | 0     | 95.1%    |
//! | 5             | 2%  | +5%   | 95.5%    |
//! | 5             | 10% | 0     | 95.9%    |
//! | 5             | 10% | +5%   | 93.8%    |
//! | 10            | 2%  | 0     | 93.8%    |
//! | 10            | 2%  | +5%   | 94.4%    |
//! | 10            | 10% | 0     | 94.9%    |
//! | 10            | 10% | +5%   | 93.9%    |
//! | 20            | 2%  | 0     | 94.7%    |
//! | 20            | 2%  | +5%   | 94.3%    |
//! | 20            | 10% | 0     | 93.7%    |
//! | 20            | 10% | +5%   | 96.0%    |
//!
//! [`runs_needed`] was checked the same way: at the runs it asked for (26 to 133 per side, from five runs
//! of 2–10% CV, shifts of 3–8%, 1 to 1,000 sections), the gate decided 79.8–84.0% of 2,000 simulated
//! comparisons, for the 80% aimed at.
//!
//! The inputs are nanoseconds, so every value must be positive and finite: the log of 0 has no place on
//! the scale.

use std::f64::consts::{FRAC_PI_2, PI};

/// Bootstrap resamples per side of a comparison. The interval is built on a standard error, not on
/// percentiles, and 200 resamples is the classic figure for a standard error (Efron and Tibshirani); what
/// Monte Carlo error is left enters the degrees of freedom. Ten times as many gave the same coverage
/// (module documentation) at ten times the cost: the unit tests run 12,000 comparisons unoptimised.
pub const RESAMPLES: usize = 200;

pub use crate::rng::Rng;

/// One section's change, head against base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Effect {
    /// The head's median over the base's: above 1 is slower.
    pub ratio: f64,
    /// The lower end of the ratio's confidence interval.
    pub low: f64,
    /// The upper end of the ratio's confidence interval.
    pub high: f64,
    /// The two-sided p-value of "no change" (ratio 1), before any correction for the sections compared.
    pub p: f64,
}

/// The median of `xs` (the midpoint of the middle two for an even count, which cannot overflow); NaN
/// when `xs` is empty. NaNs sort after every number.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => v[n / 2 - 1].midpoint(v[n / 2]),
    }
}

/// The median of a non-empty slice of numbers (no NaN), which it reorders.
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    let k = n / 2;
    if n <= 32 {
        // Insertion sort: the fastest way to a few runs' median, optimised or not.
        for i in 1..n {
            let x = v[i];
            let mut j = i;
            while j > 0 && v[j - 1] > x {
                v[j] = v[j - 1];
                j -= 1;
            }
            v[j] = x;
        }
        return if n % 2 == 1 {
            v[k]
        } else {
            0.5 * (v[k - 1] + v[k])
        };
    }
    let (lower, mid, _) = v.select_nth_unstable_by(k, f64::total_cmp);
    let mid = *mid;
    if n % 2 == 1 {
        mid
    } else {
        let below = lower.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (below + mid)
    }
}

/// The side's logs, when it has at least two values, all positive and finite.
fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    let ok = xs.len() >= 2 && xs.iter().all(|x| x.is_finite() && *x > 0.0);
    ok.then(|| xs.iter().map(|x| x.ln()).collect())
}

/// A robust estimate of the standard deviation of `y`: 1.4826 times its median absolute deviation or,
/// when more than half the values are equal (MAD 0), 1.2533 times its mean absolute deviation from the
/// median. Both are consistent for normal data; 0 only when every value is the same.
fn spread(y: &[f64]) -> f64 {
    let m = median(y);
    let dev: Vec<f64> = y.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&dev);
    if mad > 0.0 {
        1.4826 * mad
    } else {
        1.2533 * dev.iter().sum::<f64>() / y.len() as f64
    }
}

/// The bootstrap variance of the median of `y` (logs, at least two): the shrunk smoothed bootstrap of the
/// module's documentation, with `resamples` resamples. 0 when every value is the same.
fn bootstrap_variance(y: &[f64], resamples: usize, rng: &mut Rng) -> f64 {
    let n = y.len();
    let sigma = spread(y);
    if sigma == 0.0 {
        return 0.0;
    }
    let width = 1.06 * (n as f64).powf(-0.2);
    let h = width * sigma;
    let centre = median(y);
    let mut draw = vec![0.0; n];
    let (mut sum, mut sum2) = (0.0, 0.0);
    for _ in 0..resamples {
        for v in draw.iter_mut() {
            *v = y[rng.below(n)] + h * rng.normal();
        }
        let d = median_in_place(&mut draw) - centre;
        sum += d;
        sum2 += d * d;
    }
    let b = resamples as f64;
    let var = ((sum2 - sum * sum / b) / (b - 1.0)).max(0.0);
    var / (1.0 + width * width)
}

/// The change from `base` to `head` (one value per run, nanoseconds) with its interval at confidence
/// `level` (e.g. 0.95) and its p-value, by the method of the module's documentation.
///
/// None when a side has fewer than 2 values, or a value that is not positive and finite (so a median
/// <= 0, NaN or infinity), or when `level` is not strictly between 0 and 1. When neither side varies at
/// all, the interval is the ratio itself, and p is 1 for a ratio of 1 and 0 otherwise.
pub fn effect(base: &[f64], head: &[f64], level: f64, rng: &mut Rng) -> Option<Effect> {
    let (yb, yh) = (logs(base)?, logs(head)?);
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let ratio = median(head) / median(base);
    let theta = ratio.ln();
    let vb = bootstrap_variance(&yb, RESAMPLES, rng);
    let vh = bootstrap_variance(&yh, RESAMPLES, rng);
    let se = (vb + vh).sqrt();
    if se == 0.0 {
        let p = if theta == 0.0 { 1.0 } else { 0.0 };
        return Some(Effect {
            ratio,
            low: ratio,
            high: ratio,
            p,
        });
    }
    let df = (vb + vh).powi(2) / (vb * vb / dof(yb.len() as f64) + vh * vh / dof(yh.len() as f64));
    let half = t_critical(1.0 - level, df) * se;
    Some(Effect {
        ratio,
        low: (theta - half).exp(),
        high: (theta + half).exp(),
        p: t_two_sided(theta / se, df),
    })
}

/// Holm–Bonferroni adjusted p-values, in the order of `p`: the i-th smallest p is multiplied by the
/// number of p-values from it up (m − i + 1), capped at 1, and made no smaller than the one before it
/// (step-down), so a section fails at family-wise level α when its adjusted p is below α. A NaN counts as
/// 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let value = |i: usize| {
        if p[i].is_nan() {
            1.0
        } else {
            p[i].clamp(0.0, 1.0)
        }
    };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| value(a).total_cmp(&value(b)));
    let mut adjusted = vec![1.0; m];
    let mut floor: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        floor = floor.max(((m - rank) as f64 * value(i)).min(1.0));
        adjusted[i] = floor;
    }
    adjusted
}

/// Runs per side that would likely decide whether head is slower than base by more than `noise` (a
/// fraction, 0.01 = 1%) at family-wise `alpha` over `tests` sections, given the spread seen so far.
///
/// "Decide" is the gate's rule for a slowdown: the interval at confidence 1 − `alpha` lies above
/// 1 + `noise`, and the p-value is below `alpha / tests` (Bonferroni, the bound of Holm's first step).
/// If the true change is the one seen, θ, and the spread of the logs is the one seen, each side's robust σ,
/// the estimate has variance V/m with V = π/2·(σb² + σh²) (the large-sample variance of a median of m
/// runs), and both hold with 80% power once θ − ln(1 + noise) ≥ (t(alpha) + t₈₀)·√(V/m) and
/// θ ≥ (t(alpha / tests) + t₈₀)·√(V/m): t(a) is Student's two-sided quantile at a and t₈₀ the one-sided
/// at 80%, with the degrees of freedom [`effect`] would use. The least such m, and never less than the
/// current runs per side (the larger side) + 1.
///
/// None when the data show no spread or no slowdown beyond `noise` (nothing to decide); and on the inputs
/// [`effect`] refuses, a negative or non-finite `noise`, or `alpha` not strictly between 0 and 1. A
/// `tests` of 0 counts as 1.
pub fn runs_needed(
    base: &[f64],
    head: &[f64],
    noise: f64,
    alpha: f64,
    tests: usize,
) -> Option<usize> {
    let (yb, yh) = (logs(base)?, logs(head)?);
    if !(noise >= 0.0 && noise.is_finite() && alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let theta = (median(head) / median(base)).ln();
    let excess = theta - noise.ln_1p();
    let (vb, vh) = (spread(&yb).powi(2), spread(&yh).powi(2));
    let var = FRAC_PI_2 * (vb + vh);
    if !(excess > 0.0 && var > 0.0) {
        return None;
    }
    let family = alpha / tests.max(1) as f64;
    // The runs that quantiles (beyond noise, against no change, of the power) ask for.
    let runs = |beyond: f64, against: f64, power: f64| {
        let m = (beyond + power).powi(2) * var / (excess * excess);
        m.max((against + power).powi(2) * var / (theta * theta))
            .ceil()
    };
    // Normal quantiles bound Student's from below: start there and step up to the fixed point.
    let z = |a: f64| -normal_quantile(a / 2.0);
    let mut m = runs(z(alpha), z(family), z(0.4)).max((base.len().max(head.len()) + 1) as f64);
    for _ in 0..100 {
        if m >= 1e9 {
            break;
        }
        let nu = dof(m);
        let df = (vb + vh).powi(2) / ((vb * vb + vh * vh) / nu);
        let t = |a: f64| t_critical(a, df);
        let need = runs(t(alpha), t(family), t(0.4));
        if need <= m {
            break;
        }
        m = need;
    }
    Some(m as usize)
}

/// A side's degrees of freedom with `runs` runs: those of a sample variance less the Monte Carlo error of
/// the bootstrap's, 1/ν = 1/(runs − 1) + 1/(RESAMPLES − 1).
fn dof(runs: f64) -> f64 {
    1.0 / (1.0 / (runs - 1.0) + 1.0 / (RESAMPLES as f64 - 1.0))
}

/// P(|T| >= |t|) for Student's T with `df` degrees of freedom.
fn t_two_sided(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let t2 = t * t;
    beta_regularized(0.5 * df, 0.5, df / (df + t2), t2 / (df + t2))
}

/// Student's quantile c > 0 with P(|T| >= c) = `alpha` (two-sided), `df` degrees of freedom: Newton's
/// method on [`t_two_sided`] from the Cornish–Fisher start, kept inside a bracket.
fn t_critical(alpha: f64, df: f64) -> f64 {
    let z = -normal_quantile(alpha / 2.0);
    let (z3, z5) = (z.powi(3), z.powi(5));
    let start = z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
    if df > 1e5 {
        return start;
    }
    let log_norm = ln_gamma(0.5 * (df + 1.0)) - ln_gamma(0.5 * df) - 0.5 * (df * PI).ln();
    let density = |t: f64| (log_norm - 0.5 * (df + 1.0) * (t * t / df).ln_1p()).exp();
    let (mut low, mut high) = (0.0, f64::INFINITY);
    let mut t = start.max(z);
    for _ in 0..200 {
        let f = t_two_sided(t, df) - alpha;
        if f > 0.0 {
            low = t;
        } else {
            high = t;
        }
        let mut next = t + f / (2.0 * density(t));
        if !(next > low && next < high) {
            next = if high.is_finite() {
                0.5 * (low + high)
            } else {
                2.0 * t
            };
        }
        if (next - t).abs() <= 1e-13 * t {
            return next;
        }
        t = next;
    }
    t
}

/// The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let poly = |c: &[f64], x: f64| c.iter().fold(0.0, |acc, k| acc * x + k);
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if p < 0.02425 {
        let q = (-2.0 * p.ln()).sqrt();
        poly(&C, q) / (poly(&D, q) * q + 1.0)
    } else if p <= 1.0 - 0.02425 {
        let q = p - 0.5;
        let r = q * q;
        poly(&A, r) * q / (poly(&B, r) * r + 1.0)
    } else {
        -normal_quantile(1.0 - p)
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms; reflection below 1/2).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |acc, (i, g)| acc + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b), with y = 1 − x given apart so that neither loses
/// digits near 1 (a continued fraction, by the modified Lentz method).
fn beta_regularized(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * y.ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * continued_fraction(a, b, x) / a
    } else {
        1.0 - front * continued_fraction(b, a, y) / b
    }
}

/// The continued fraction of I_x(a, b) (Numerical Recipes' `betacf`).
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..1000 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        h *= d * c;
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

mod rank;
pub use rank::rank_p;

#[cfg(test)]
mod tests;
