//! Ticks to the trace's nanoseconds: one function of the ticks for every event of a trace, so calls keep
//! their order and nesting, that follows the clock's calibration as the run goes on and stays on
//! `CLOCK_MONOTONIC`'s time, from the run's first microsecond to its last.
//!
//! A piecewise-linear map, continuous and increasing. The first piece is the clock's scale as calibrated
//! when the map is made (exact at that moment: the scale is measured from the runtime's start to then). A
//! new piece starts at a reading of both clocks taken 10 ms later, then at twice the last gap, up to every
//! [`REMAP_NS`]: it starts where the map already is at that tick (so no event moves past another), and its
//! slope is the tick length measured over the last piece, corrected by at most [`MAX_CORRECTION`] so
//! that the map closes on the true time within the next piece. No tick converted before a piece was added
//! can lie in it (it had been read already), so every tick maps through one piece, whenever it is
//! converted. 48 bytes a second of run once the pieces are half a second apart: 2 MB in 12 hours.
//!
//! Where ticks are nanoseconds (`CLOCK_MONOTONIC`, the manual clock of tests) the map is the identity from
//! the runtime's start, exactly.

use crate::base::clock::{self, Reading, Scale, Ticks};

/// The longest gap between two pieces.
const REMAP_NS: u64 = 500_000_000;

/// The gap before the second piece (it doubles up to [`REMAP_NS`]): the first piece's scale was measured
/// over as little as 50 µs, so its error is soon closed.
const FIRST_REMAP_NS: u64 = 10_000_000;

/// The most a piece's slope departs from the measured tick length to close the gap to the true time: a
/// duration read from the trace is then within this fraction (and the drift of the tick length over one
/// piece) of the true one.
const MAX_CORRECTION: f64 = 0.002;

/// One piece: from tick `first` on, `ns + (ticks - first) * ns_per_tick`.
#[derive(Debug, Clone, Copy)]
struct Piece {
    first: u64,
    ns: u64,
    ns_per_tick: f64,
}

/// See the module's documentation.
pub(super) struct TickMap {
    /// By first tick; the first starts at the runtime's first tick.
    pieces: Vec<Piece>,
    /// The reading the last piece started at (or the map was made at).
    last: Reading,
    /// The gap to the next piece.
    gap_ns: u64,
    /// Whether ticks are nanoseconds: the map is then the identity, and never takes a piece.
    exact: bool,
}

impl TickMap {
    /// A map from now on, with the clock calibrated first.
    pub(super) fn new() -> TickMap {
        clock::calibrate();
        let scale = clock::scale();
        let now = clock::reading().unwrap_or_else(|| {
            let ticks = clock::now();
            Reading {
                ticks,
                ns: scale.to_ns(ticks),
            }
        });
        TickMap::starting(scale, now, !clock::is_calibrated())
    }

    /// A map whose first piece is `scale`, made at `now`.
    fn starting(scale: Scale, now: Reading, exact: bool) -> TickMap {
        TickMap {
            pieces: vec![Piece {
                first: scale.base().0,
                ns: 0,
                ns_per_tick: scale.ns_per_tick(),
            }],
            last: now,
            gap_ns: FIRST_REMAP_NS,
            exact,
        }
    }

    /// The trace's nanoseconds (since the runtime's start) at `ticks`.
    #[inline]
    pub(super) fn to_ns(&self, ticks: u64) -> u64 {
        // Nearly every tick is in the newest piece.
        let last = self.pieces.len() - 1;
        let i = if ticks >= self.pieces[last].first {
            last
        } else {
            self.pieces.partition_point(|p| p.first <= ticks).max(1) - 1
        };
        let p = self.pieces[i];
        // Ticks before the first piece (read before the runtime started) saturate at its start.
        p.ns + Scale::fixed(Ticks(p.first), p.ns_per_tick).to_ns(Ticks(ticks))
    }

    /// A new piece from now, if the last one is old enough.
    pub(super) fn follow(&mut self) {
        if self.exact {
            return;
        }
        if let Some(now) = clock::reading() {
            self.follow_to(now);
        }
    }

    /// A new piece from `now`, if the last one is old enough (see the module's documentation).
    fn follow_to(&mut self, now: Reading) {
        let since = now.ns.saturating_sub(self.last.ns);
        let ticks = now.ticks.since(self.last.ticks).0;
        if since < self.gap_ns || ticks == 0 {
            return;
        }
        let at = self.to_ns(now.ticks.0);
        let measured = since as f64 / ticks as f64;
        self.gap_ns = (self.gap_ns * 2).min(REMAP_NS);
        // Behind the true time (a positive error): a little steeper, to catch up over the next gap.
        let error = now.ns as f64 - at as f64;
        let correction = (error / self.gap_ns as f64).clamp(-MAX_CORRECTION, MAX_CORRECTION);
        self.pieces.push(Piece {
            first: now.ticks.0,
            ns: at,
            ns_per_tick: measured * (1.0 + correction),
        });
        self.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter whose rate (ticks per ns) is `rate(ns)`: its ticks at `ns`, by small steps.
    fn ticks_at(ns: u64, rate: impl Fn(f64) -> f64) -> u64 {
        let step = 100_000u64;
        let mut ticks = 0.0;
        let mut t = 0;
        while t < ns {
            let dt = step.min(ns - t);
            ticks += rate(t as f64) * dt as f64;
            t += dt;
        }
        1_000_000 + ticks as u64
    }

    /// A rate that rises 0.5% over seconds 1..3 (far more than any invariant TSC drifts).
    fn drifting(t: f64) -> f64 {
        2.5 * (1.0 + 0.005 * ((t - 1e9) / 2e9).clamp(0.0, 1.0))
    }

    #[test]
    fn follows_a_drifting_counter_without_reordering() {
        // Calibrated at 50 µs, to 0.1%, as a run's first calibration may be.
        let start = Reading {
            ticks: Ticks(ticks_at(50_000, drifting)),
            ns: 50_000,
        };
        let scale = Scale::fixed(Ticks(1_000_000), 1.0 / 2.5 * 1.001);
        let mut map = TickMap::starting(scale, start, false);
        let mut last_ns = 0;
        let mut worst = 0f64;
        // A pass every 20 ms for 6 s; between passes, events every ms mapped after the pass that follows.
        for pass in 1..=300u64 {
            let ns = pass * 20_000_000;
            map.follow_to(Reading {
                ticks: Ticks(ticks_at(ns, drifting)),
                ns,
            });
            for ms in 0..20 {
                let truth = ns + ms * 1_000_000;
                let mapped = map.to_ns(ticks_at(truth, drifting));
                assert!(mapped >= last_ns, "reordered at {truth}");
                last_ns = mapped;
                worst = worst.max((mapped as f64 - truth as f64).abs());
            }
        }
        // Never further than the drift over about one piece: well under the 2 ms of the harness's
        // tolerance.
        assert!(worst < 1_000_000.0, "{worst} ns off");
        assert!(map.pieces.len() < 20, "{} pieces", map.pieces.len());
    }

    #[test]
    fn a_first_scale_that_was_never_calibrated_is_soon_corrected() {
        // The old fault: a first piece of 1 ns per tick on a 2.5 GHz counter.
        let rate = |_| 2.5;
        let scale = Scale::fixed(Ticks(1_000_000), 0.4);
        let start = Reading {
            ticks: Ticks(ticks_at(100_000, rate)),
            ns: 100_000,
        };
        let mut map = TickMap::starting(scale, start, false);
        for pass in 1..=100u64 {
            let ns = pass * 10_000_000;
            map.follow_to(Reading {
                ticks: Ticks(ticks_at(ns, rate)),
                ns,
            });
            let mapped = map.to_ns(ticks_at(ns + 5_000_000, rate));
            assert!(mapped.abs_diff(ns + 5_000_000) < 1_000, "{mapped} at {ns}");
        }
    }

    #[test]
    fn nanosecond_ticks_map_exactly() {
        let scale = Scale::fixed(Ticks(1_000), 1.0);
        let mut map = TickMap::starting(
            scale,
            Reading {
                ticks: Ticks(1_000),
                ns: 0,
            },
            true,
        );
        map.follow();
        assert_eq!(map.to_ns(999), 0);
        assert_eq!(map.to_ns(1_000 + 123_456_789_012), 123_456_789_012);
    }
}
