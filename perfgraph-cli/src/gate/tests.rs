//! The gate's decisions on simulated runs, seeded: a program compared with itself (lognormal noise, and a
//! CPU at two speeds) rarely fails; a section 5% slower is flagged, alone.

use std::collections::HashMap;

use super::samples::Samples;
use super::*;

/// Sides of `sections` sections, `runs` runs each, the section `slower` (if any) `shift` slower on the
/// head; each run's value drawn by `noise`.
fn sides(
    runs: usize,
    sections: u32,
    slower: Option<(u32, f64)>,
    rng: &mut stats::Rng,
    noise: &mut dyn FnMut(&mut stats::Rng) -> f64,
) -> (Samples, Samples) {
    let mut side = |head: bool| Samples {
        runs,
        order: (1..=sections).collect(),
        values: (1..=sections)
            .map(|k| {
                let factor = match slower {
                    Some((s, shift)) if head && s == k => 1.0 + shift,
                    _ => 1.0,
                };
                (k, (0..runs).map(|_| 1e7 * factor * noise(rng)).collect())
            })
            .collect::<HashMap<u32, Vec<f64>>>(),
        exact: HashMap::new(),
        failed: 0,
        missing: Vec::new(),
    };
    (side(false), side(true))
}

fn options() -> Options {
    Options {
        threshold: 0.0,
        min_ms: 0.0,
        metric: Metric::Total,
        metric_given: true,
        paths: false,
        fail_on_removed: false,
        noise: 0.01,
    }
}

fn fails(rows: &[Row]) -> bool {
    rows.iter().any(|r| r.verdict == Verdict::Regressed)
}

#[test]
fn a_program_compared_with_itself_fails_at_most_5_of_100_times_under_either_noise() {
    let mut rng = stats::Rng::new(41);
    let mut lognormal = |r: &mut stats::Rng| (0.03 * r.normal()).exp();
    let mut two_speeds = |r: &mut stats::Rng| {
        let speed = if r.uniform() < 0.5 { 1.0 } else { 1.6 };
        speed * (0.02 * r.normal()).exp()
    };
    for (name, noise) in [
        (
            "lognormal, CV 3%",
            &mut lognormal as &mut dyn FnMut(&mut stats::Rng) -> f64,
        ),
        ("two speeds 1.6 apart", &mut two_speeds),
    ] {
        let failed = (0..100)
            .filter(|_| {
                let (b, h) = sides(5, 5, None, &mut rng, noise);
                fails(&compare(&b, &h, &options()))
            })
            .count();
        // Measured (seed 41): 1 of 100 failed under each noise.
        eprintln!("{name}: {failed} of 100 failed");
        assert!(failed <= 5, "{name}: {failed} of 100 failed");
    }
}

#[test]
fn a_section_5_percent_slower_is_flagged_alone_in_9_of_10() {
    let mut rng = stats::Rng::new(43);
    let mut noise = |r: &mut stats::Rng| (0.02 * r.normal()).exp();
    let mut flagged = 0;
    for _ in 0..10 {
        let (b, h) = sides(10, 5, Some((3, 0.05)), &mut rng, &mut noise);
        let rows = compare(&b, &h, &options());
        for r in &rows {
            if r.key != 3 {
                assert_ne!(r.verdict, Verdict::Regressed, "section {}", r.key);
            }
        }
        flagged += usize::from(rows[2].verdict == Verdict::Regressed);
    }
    // Measured (seed 43): 10 of 10.
    eprintln!("flagged {flagged} of 10");
    assert!(flagged >= 9, "{flagged} of 10");
}

#[test]
fn calls_and_allocations_the_same_in_every_run_of_a_side_are_compared_exactly() {
    let mut paths = Paths::new();
    let (solve, step) = (paths.id(0, "solve"), paths.id(0, "step"));
    let side = |calls: [u64; 2], allocs: u64| Samples {
        runs: 3,
        order: vec![solve, step],
        values: [
            (solve, vec![3e7, 3.1e7, 2.9e7]),
            (step, vec![1e7, 1.1e7, 0.9e7]),
        ]
        .into_iter()
        .collect(),
        exact: [
            (solve, vec![(calls[0], allocs); 3]),
            // Calls that vary between runs are not exact: never listed.
            (step, vec![(calls[1], 0), (calls[1] + 1, 0), (calls[1], 0)]),
        ]
        .into_iter()
        .collect(),
        failed: 0,
        missing: Vec::new(),
    };
    let (b, h) = (side([100, 5], 7), side([120, 9], 7));
    let rows = compare(&b, &h, &options());
    let text = render::text(&rows, &b, &h, ["base", "head"], &options(), &paths);
    assert!(
        text.contains("Exact figures that changed (the same in every run of each side):\n  solve: calls 100 → 120\n"),
        "{text}"
    );
    assert!(!text.contains("  step:"), "{text}");
    let (b, h) = (side([100, 5], 7), side([100, 5], 8));
    let rows = compare(&b, &h, &options());
    let text = render::text(&rows, &b, &h, ["base", "head"], &options(), &paths);
    assert!(text.contains("  solve: allocations 7 → 8\n"), "{text}");
}

#[test]
fn the_runs_needed_are_at_least_what_the_rank_test_can_show_over_the_rows() {
    // 2 / C(2n, n) < 0.05 / rows: 4 a side for one row, 5 for up to 6 rows, 6 for 7, 9 for 1,000.
    assert_eq!(central_binomial(5), 252.0);
    let at = |rows: f64| {
        (2..)
            .find(|&n| 2.0 / central_binomial(n) < 0.05 / rows)
            .unwrap()
    };
    assert_eq!((at(1.0), at(6.0), at(7.0), at(1000.0)), (4, 5, 6, 9));
}

#[test]
fn instruction_counts_within_a_tenth_of_the_noise_decide_with_two_runs_a_side() {
    let mut paths = Paths::new();
    let (residual, update) = (paths.id(0, "residual"), paths.id(0, "update"));
    // As Callgrind counted them (2 runs a side): residual 10% slower, update the same, each varying by
    // a few hundred instructions between runs.
    let side = |r: [f64; 2], u: [f64; 2]| Samples {
        runs: 2,
        order: vec![residual, update],
        values: [(residual, r.to_vec()), (update, u.to_vec())]
            .into_iter()
            .collect(),
        exact: HashMap::new(),
        failed: 0,
        missing: Vec::new(),
    };
    let b = side([8_214_357.0, 8_215_090.0], [8_216_436.0, 8_216_524.0]);
    let h = side([9_035_090.0, 9_035_090.0], [8_216_524.0, 8_216_524.0]);
    let o = Options {
        metric: Metric::Instructions,
        ..options()
    };
    let rows = compare(&b, &h, &o);
    assert!(rows.iter().all(|r| r.counted && r.holm.is_none()));
    assert_eq!(rows[0].verdict, Verdict::Regressed);
    assert_eq!(rows[1].verdict, Verdict::Same);
    let e = rows[0].effect.unwrap();
    assert!(
        e.low <= e.ratio && e.ratio <= e.high && e.low > 1.09,
        "{e:?}"
    );
    let text = render::text(&rows, &b, &h, ["base", "head"], &o, &paths);
    assert!(text.contains("by 0.1% of"), "{text}");
    // A spread past a tenth of the noise is tested as wall time is; wall time is never counted.
    let wide = side([8.0e6, 8.1e6], [8.0e6, 8.0e6]);
    assert!(!compare(&wide, &h, &o)[0].counted);
    assert!(!compare(&b, &h, &options())[0].counted);
}
