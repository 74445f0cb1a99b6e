//! The latency histogram's bucket scheme, the one place its arithmetic lives: log-linear buckets, as
//! HdrHistogram's, with 64 linear sub-buckets per power of two.
//!
//! Values below 128 have a bucket each (exact). Above, the power of two `[2^e, 2^(e+1))` (`e >= 7`) is cut
//! into 64 buckets of width `2^(e-6)`: a bucket is at most 1/64 of its values wide, so its midpoint is
//! within 1/128 (0.78%) of any value in it. Every `u64` has a bucket; there are [`BUCKETS`] of them.
//!
//! The recording threads index buckets by a duration in clock ticks ([`index`]: an `or`, a count of leading
//! zeros, two shifts and an add); the reports and the JSON use the same scheme over nanoseconds, to which a
//! snapshot re-buckets the ticks' buckets (each by its midpoint: at most 1/128 + 1/128 = 1.6% off in all).
//!
//! Pure arithmetic on `u64`, so the loom model (`tests/loom_snapshot.rs`) compiles this file too.

/// Sub-buckets per power of two, as a power of two.
pub const SUB_BITS: u32 = 6;
/// Sub-buckets per power of two (64).
pub const SUB: usize = 1 << SUB_BITS;
/// Buckets in all: every `u64` has one.
pub const BUCKETS: usize = (64 - SUB_BITS as usize) * SUB + SUB;

/// The bucket of `v`.
#[inline(always)]
pub fn index(v: u64) -> usize {
    // `v | SUB` only raises values below 2 * SUB to the same power of two as `SUB`, where the shift is 0.
    let shift = (63 - SUB_BITS) - (v | SUB as u64).leading_zeros();
    ((shift as usize) << SUB_BITS) + (v >> shift) as usize
}

/// The smallest value in bucket `i` (`i < BUCKETS`).
pub fn low(i: usize) -> u64 {
    if i < 2 * SUB {
        return i as u64;
    }
    let shift = (i >> SUB_BITS) - 1;
    ((SUB + (i & (SUB - 1))) as u64) << shift
}

/// How many values bucket `i` holds (`i < BUCKETS`).
pub fn width(i: usize) -> u64 {
    if i < 2 * SUB {
        1
    } else {
        1u64 << ((i >> SUB_BITS) - 1)
    }
}

/// The value a bucket stands for: its midpoint (the value itself for the exact buckets).
pub fn middle(i: usize) -> u64 {
    low(i) + width(i) / 2
}

/// Adds sparse bucket list `b` into `a` (both sorted by bucket, no bucket twice), keeping `a` sorted: in
/// place when `a` has every bucket of `b` (the usual case when one path's calls are merged again and again,
/// as each exited thread's are), else by growing `a` once and merging from the back. No other allocation.
pub fn add_sparse(a: &mut Vec<(u32, u64)>, b: &[(u32, u64)]) {
    // First pass: how many of `b`'s buckets `a` lacks.
    let (mut i, mut missing) = (0, 0);
    for &(bucket, _) in b {
        while i < a.len() && a[i].0 < bucket {
            i += 1;
        }
        if i < a.len() && a[i].0 == bucket {
            i += 1;
        } else {
            missing += 1;
        }
    }
    let old = a.len();
    a.resize(old + missing, (0, 0));
    // Second pass, from the back: `k` is the next slot to fill, at or after `i` (the unmerged part of `a`),
    // so nothing is overwritten before it is moved.
    let (mut i, mut j, mut k) = (old, b.len(), old + missing);
    while j > 0 {
        k -= 1;
        if i > 0 && a[i - 1].0 > b[j - 1].0 {
            a[k] = a[i - 1];
            i -= 1;
        } else if i > 0 && a[i - 1].0 == b[j - 1].0 {
            a[k] = (b[j - 1].0, a[i - 1].1 + b[j - 1].1);
            i -= 1;
            j -= 1;
        } else {
            a[k] = b[j - 1];
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_the_bucket_whose_bounds_hold_it() {
        let mut values: Vec<u64> = (0..5000).collect();
        for e in 0..64 {
            let p = 1u64 << e;
            values.extend([p - 1, p, p + 1, p.wrapping_mul(3) / 2, p | (p >> 3)]);
        }
        values.push(u64::MAX);
        for v in values {
            let i = index(v);
            assert!(i < BUCKETS, "{v}");
            assert!(low(i) <= v && v - low(i) < width(i), "{v} in bucket {i}");
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
        // Buckets tile the line: each starts where the one before ends.
        for i in 1..BUCKETS {
            assert_eq!(low(i), low(i - 1) + width(i - 1), "bucket {i}");
        }
    }

    #[test]
    fn sparse_lists_add_in_place_or_grown() {
        type Sparse = &'static [(u32, u64)];
        let cases: [(Sparse, Sparse); 6] = [
            (&[], &[]),
            (&[], &[(3, 1)]),
            (&[(3, 1)], &[]),
            (&[(1, 1), (3, 2), (5, 3)], &[(3, 10), (5, 10)]),
            (&[(2, 1), (4, 1)], &[(1, 5), (3, 5), (4, 5), (9, 5)]),
            (&[(7, 1)], &[(1, 1), (2, 2)]),
        ];
        for (a, b) in cases {
            let mut dense = std::collections::BTreeMap::new();
            for &(bucket, n) in a.iter().chain(b) {
                *dense.entry(bucket).or_insert(0) += n;
            }
            let want: Vec<(u32, u64)> = dense.into_iter().collect();
            let mut got = a.to_vec();
            add_sparse(&mut got, b);
            assert_eq!(got, want, "{a:?} + {b:?}");
        }
    }

    #[test]
    fn a_midpoint_is_within_one_in_128_of_its_bucket() {
        for i in 0..BUCKETS {
            let (lo, w) = (low(i), width(i));
            // The farthest value from the middle is the bucket's first one.
            let err = (middle(i) - lo) as f64 / lo.max(1) as f64;
            assert!(err <= 1.0 / 128.0 + 1e-12, "bucket {i}: {err}");
            assert!(w == 1 || w <= lo / SUB as u64);
        }
    }
}
