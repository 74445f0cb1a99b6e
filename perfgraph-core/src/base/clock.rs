//! The clock: the CPU's invariant timestamp counter where it can be trusted, `CLOCK_MONOTONIC` otherwise.
//!
//! The hot path reads raw [`Ticks`] ([`now`]): one `rdtsc` or one vDSO `clock_gettime` (their cost is in
//! `docs/performance.md`). Ticks become nanoseconds only off the hot path, and only through a [`Scale`],
//! a ratio measured against `CLOCK_MONOTONIC` over the whole run so far ([`calibrate`], called by the
//! background thread and the reports), so it gets more exact the longer the program runs and costs nothing
//! up front.
//!
//! The TSC is used when all of these hold: the CPU is x86-64 and says its TSC is invariant (CPUID leaf
//! 0x8000_0007, EDX bit 8); on Linux, the kernel itself chose `tsc` as its clocksource (it checks that the
//! counters of all cores agree); and `PERFGRAPH_CLOCK` is not `monotonic`.
//!
//! Deterministic tests can select a manual clock instead ([`select_manual`], before the runtime starts): its
//! ticks are nanoseconds that move only when the test calls [`advance_manual`]. The truth harness can select
//! a drifting one ([`select_drifting`]): ticks of a counter whose frequency changes during the run, so
//! that the calibration moves and every conversion must follow it. Neither is a public API (both are
//! reached through `__test_hooks`), and they cost the TSC path nothing: [`now`] tests for the TSC first, and
//! reads a test clock only where it would otherwise call `clock_gettime`.
//!
//! Why not quanta or fastant: both calibrate on first use, synchronously; quanta spends up to 200 ms in
//! `Clock::new()`, which would land on the first timed section of every program (and on its exit latency).

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use super::{poison, sys};

/// Which source [`now`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The invariant timestamp counter (`rdtsc`).
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)`, in nanoseconds.
    Monotonic,
    /// The manual clock of deterministic tests ([`select_manual`]), in nanoseconds.
    Manual,
    /// The truth harness's counter whose frequency drifts ([`select_drifting`]); calibrated as the TSC is.
    Drifting,
}

impl Source {
    /// Name used in docs, benchmark records, the reports' and the exports' clock field.
    pub fn name(self) -> &'static str {
        match self {
            Source::Tsc => "tsc",
            Source::Monotonic => "CLOCK_MONOTONIC",
            Source::Manual => "manual",
            Source::Drifting => "drifting",
        }
    }
}

/// [`MODE`] values.
const MODE_MONOTONIC: u8 = 0;
const MODE_TSC: u8 = 1;
const MODE_MANUAL: u8 = 2;
const MODE_DRIFTING: u8 = 3;

/// The source [`now`] reads (`MODE_*`). Set once by [`init`] (or by [`select_manual`] before it) before any
/// thread records; read Relaxed on the hot path (a thread records only after the runtime's `Once` finished,
/// which orders it after that store).
static MODE: AtomicU8 = AtomicU8::new(MODE_MONOTONIC);

/// The manual clock's ticks (nanoseconds), read by [`now`] only in `MODE_MANUAL`.
static MANUAL_TICKS: AtomicU64 = AtomicU64::new(0);

/// A reading of [`now`], or a difference of two: raw ticks of the source in use. Only a [`Scale`] turns
/// ticks into nanoseconds (or back), so no tick count is ever mistaken for a duration. Stored raw (`.0`)
/// where a layout packs it into words (ring records, open frames).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Ticks(pub u64);

impl Ticks {
    /// The ticks from `earlier` to `self`, 0 if `earlier` is later.
    #[inline(always)]
    pub fn since(self, earlier: Ticks) -> Ticks {
        Ticks(self.0.saturating_sub(earlier.0))
    }
}

/// Ticks now.
#[inline(always)]
pub fn now() -> Ticks {
    let mode = MODE.load(Ordering::Relaxed);
    // The TSC is tested first, so its path stays one load, one compare and `rdtsc`.
    #[cfg(target_arch = "x86_64")]
    if mode == MODE_TSC {
        // SAFETY: `rdtsc` is available on every x86-64 CPU and has no preconditions.
        return Ticks(unsafe { core::arch::x86_64::_rdtsc() });
    }
    if mode >= MODE_MANUAL {
        return Ticks(test_now(mode));
    }
    Ticks(monotonic_ns())
}

/// A test clock's ticks; out of line so the inlined [`now`] stays as small as it was.
#[cold]
#[inline(never)]
fn test_now(mode: u8) -> u64 {
    if mode == MODE_MANUAL {
        manual_now()
    } else {
        drifting_now()
    }
}

/// The manual clock's ticks.
fn manual_now() -> u64 {
    // Relaxed: tests order the threads that advance and read it themselves (spawn, join).
    MANUAL_TICKS.load(Ordering::Relaxed)
}

/// Selects the manual clock, starting at `start_ticks`, for deterministic tests; not a public API. Its ticks
/// are nanoseconds and move only by [`advance_manual`]. Must come before the runtime starts (the first
/// recorded section or settings read); the runtime then keeps it, and [`calibrate`] leaves the tick length at
/// exactly 1 ns.
///
/// # Panics
/// If the runtime has already chosen its clock.
pub fn select_manual(start_ticks: u64) {
    // Under the lock `init` holds while it chooses the source: either it has chosen, or it will see this.
    let _choosing = poison::lock(&CHOOSING);
    assert!(
        BASE.get().is_none(),
        "perfgraph: the manual clock must be selected before the runtime starts"
    );
    MANUAL_TICKS.store(start_ticks, Ordering::Relaxed);
    MODE.store(MODE_MANUAL, Ordering::Relaxed);
}

/// Moves the manual clock forward by `ns` nanoseconds (= ticks); not a public API.
///
/// # Panics
/// If the manual clock is not selected.
pub fn advance_manual(ns: u64) {
    assert_eq!(
        MODE.load(Ordering::Relaxed),
        MODE_MANUAL,
        "perfgraph: advance_clock without fake_clock"
    );
    // Relaxed: tests order the threads that advance and read it themselves (spawn, join).
    MANUAL_TICKS.fetch_add(ns, Ordering::Relaxed);
}

/// Selects the drifting clock for the truth harness; not a public API. Its ticks count at
/// [`DRIFT_START_GHZ`] per nanosecond of `CLOCK_MONOTONIC` for the first [`DRIFT_FROM_NS`] after this call,
/// then the rate rises steadily by [`DRIFT`] (a fraction) over the next [`DRIFT_OVER_NS`] and stays there:
/// what calibration measures moves during the run, as it would on a TSC whose frequency drifts, and every
/// conversion of ticks must follow it. Must come before the runtime starts, as [`select_manual`].
///
/// # Panics
/// If the runtime has already chosen its clock.
pub fn select_drifting() {
    let _choosing = poison::lock(&CHOOSING);
    assert!(
        BASE.get().is_none(),
        "perfgraph: the drifting clock must be selected before the runtime starts"
    );
    DRIFT_ZERO_NS.store(monotonic_ns(), Ordering::Relaxed);
    MODE.store(MODE_DRIFTING, Ordering::Relaxed);
}

/// The drifting clock's ticks per nanosecond at first.
pub const DRIFT_START_GHZ: f64 = 2.5;
/// How long the drifting clock keeps its first rate.
pub const DRIFT_FROM_NS: f64 = 0.7e9;
/// How much its rate then rises, as a fraction of the first rate...
pub const DRIFT: f64 = 0.004;
/// ...over this long.
pub const DRIFT_OVER_NS: f64 = 1.5e9;

/// `CLOCK_MONOTONIC` when [`select_drifting`] was called.
static DRIFT_ZERO_NS: AtomicU64 = AtomicU64::new(0);

/// The drifting clock's ticks: the integral of its rate from [`DRIFT_ZERO_NS`] to now, plus an offset (a
/// real counter does not start at 0).
fn drifting_now() -> u64 {
    let t = monotonic_ns().saturating_sub(DRIFT_ZERO_NS.load(Ordering::Relaxed)) as f64;
    let ramp = (t - DRIFT_FROM_NS).clamp(0.0, DRIFT_OVER_NS);
    // The extra rate grows linearly over the ramp (its integral is quadratic), then stays at DRIFT.
    let extra = DRIFT
        * (ramp * ramp / (2.0 * DRIFT_OVER_NS) + (t - DRIFT_FROM_NS - DRIFT_OVER_NS).max(0.0));
    (1e12 + DRIFT_START_GHZ * (t + extra)) as u64
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    sys::monotonic_ns()
}

/// The base pair: ticks and monotonic nanoseconds at [`init`]. [`Scale::to_ns`] measures from it.
struct Base {
    ticks: u64,
    mono_ns: u64,
}

/// Set once by [`init`]; read without a lock afterwards, so [`calibrate`] (the background thread, every
/// report) takes none: a process forked while another thread calibrates cannot inherit a lock held for good.
static BASE: OnceLock<Base> = OnceLock::new();
/// Held while the source is chosen ([`init`]) or the manual clock selected ([`select_manual`]): only ever
/// during the runtime's start, never after it.
static CHOOSING: Mutex<()> = Mutex::new(());
/// Base ticks (copy of `BASE.ticks`), written once in `init`.
static BASE_TICKS: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds per tick as `f64` bits; 1.0 until the first calibration (exact for the monotonic source).
static NS_PER_TICK: AtomicU64 = AtomicU64::new(0x3FF0_0000_0000_0000);

/// Chooses the source and takes the base pair. Idempotent; called by the runtime's one-time init. Keeps the
/// manual clock if a test selected it ([`select_manual`]), whatever `prefer_monotonic` says.
pub fn init(prefer_monotonic: bool) -> Source {
    let _choosing = poison::lock(&CHOOSING);
    if BASE.get().is_none() {
        let mode = MODE.load(Ordering::Relaxed);
        let (ticks, mono_ns) = if mode == MODE_MANUAL {
            // Exactly the manual clock's reading: `pair` would average two equal readings, rounding odd ones.
            (manual_now(), monotonic_ns())
        } else if mode == MODE_DRIFTING {
            pair()
        } else {
            let tsc = !prefer_monotonic && sys::tsc_is_trustworthy();
            let mode = if tsc { MODE_TSC } else { MODE_MONOTONIC };
            MODE.store(mode, Ordering::Relaxed);
            pair()
        };
        BASE_TICKS.store(ticks, Ordering::Relaxed);
        let _ = BASE.set(Base { ticks, mono_ns });
    }
    source()
}

/// The source in use.
pub fn source() -> Source {
    match MODE.load(Ordering::Relaxed) {
        MODE_TSC => Source::Tsc,
        MODE_MANUAL => Source::Manual,
        MODE_DRIFTING => Source::Drifting,
        _ => Source::Monotonic,
    }
}

/// Whether ticks are not nanoseconds, so [`calibrate`] measures their length (the TSC, the drifting clock);
/// otherwise a tick is exactly a nanosecond, always.
pub fn is_calibrated() -> bool {
    matches!(source(), Source::Tsc | Source::Drifting)
}

/// A reading of both clocks at once ([`reading`]): ticks, and the nanoseconds since the runtime started
/// by `CLOCK_MONOTONIC`, the truth the ticks are mapped onto.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// [`now`]'s ticks.
    pub ticks: Ticks,
    /// `CLOCK_MONOTONIC` nanoseconds since the runtime's start (its base pair); for the manual clock, its
    /// ticks since then (they are nanoseconds).
    pub ns: u64,
}

/// Both clocks now, as close together as we can (see [`Reading`]); `None` before the runtime starts.
pub fn reading() -> Option<Reading> {
    let base = BASE.get()?;
    if source() == Source::Manual {
        let ticks = manual_now();
        return Some(Reading {
            ticks: Ticks(ticks),
            ns: ticks.saturating_sub(base.ticks),
        });
    }
    let (ticks, mono) = pair();
    Some(Reading {
        ticks: Ticks(ticks),
        ns: mono.saturating_sub(base.mono_ns),
    })
}

/// A (ticks, monotonic ns) pair taken as close together as we can: the monotonic reading between two
/// tick readings, whose middle stands for it. A thread preempted between them (a busy machine) would pair
/// readings milliseconds apart, and a calibration a second into the run would then be off by a part in a
/// thousand: the pair is taken again, up to [`PAIR_TRIES`] times, until the tick readings are at most
/// [`PAIR_GAP_TICKS`] apart, and the closest one is kept.
fn pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..PAIR_TRIES {
        let t0 = now().0;
        let mono = monotonic_ns();
        let t1 = now().0;
        let gap = t1.saturating_sub(t0);
        if gap < best.0 {
            best = (gap, t0 / 2 + t1 / 2, mono);
        }
        if gap <= PAIR_GAP_TICKS {
            break;
        }
    }
    (best.1, best.2)
}

/// Most tries [`pair`] makes.
const PAIR_TRIES: usize = 16;

/// Tick readings this close make a good pair: 150 ns on a 2.6 GHz TSC, where a vDSO `clock_gettime`
/// between them takes some 20 ns (a pair's error is then under a part in 10^7 a second into the run, well
/// below [`RECALIBRATE_ABOVE`]). Where none is this close (a `clock_gettime` that is a system call), the
/// closest of [`PAIR_TRIES`] is kept.
const PAIR_GAP_TICKS: u64 = 400;

/// Re-measures nanoseconds per tick over the run so far, and takes the new figure if it moved by more than
/// [`RECALIBRATE_ABOVE`] (no-op for the monotonic and manual sources, whose ticks are nanoseconds: the
/// ratio stays exactly 1.0). If the run is younger than [`MIN_CALIBRATION_NS`],
/// first spins until it is that old so the ratio is sound. Takes no lock: two threads calibrating at once
/// both store a sound ratio.
pub fn calibrate() {
    if !is_calibrated() {
        return;
    }
    let Some(base) = BASE.get() else { return };
    let (mut ticks, mut mono) = pair();
    // A spin, not a sleep: at most 50 µs, and only in runs that short; a sleep's granularity would add up
    // to a millisecond to the exit of every short program.
    while mono.saturating_sub(base.mono_ns) < MIN_CALIBRATION_NS {
        std::hint::spin_loop();
        (ticks, mono) = pair();
    }
    if ticks > base.ticks {
        let ratio = (mono - base.mono_ns) as f64 / (ticks - base.ticks) as f64;
        if moved(ns_per_tick(), ratio) {
            NS_PER_TICK.store(ratio.to_bits(), Ordering::Relaxed);
        }
    }
}

/// How far (a fraction) a new measurement of the tick length must be from the one in force to replace it:
/// 1 ppm, a microsecond a second. Two readings of the same figures (a dump, then a scrape, of calls that
/// have ended) then give the same nanoseconds, as they must: a measurement over the whole run moves by
/// tens of ns between passes (a few parts in 10^8 seconds into a run), which below this never shows. The
/// measurement's own noise is under it once the run is about 100 ms old; a tick rate that really drifts
/// (`CLOCK_MONOTONIC` slewed by NTP, at most 500 ppm) is followed in steps of 1 ppm.
pub const RECALIBRATE_ABOVE: f64 = 1e-6;

/// Whether a new measurement `ratio` replaces the one in force, `now` (see [`RECALIBRATE_ABOVE`]).
fn moved(now: f64, ratio: f64) -> bool {
    (ratio / now - 1.0).abs() > RECALIBRATE_ABOVE
}

/// Shortest interval a calibration measures over. Each end of the interval is exact to about the time one
/// [`pair`] takes (tens of ns), so over 50 µs the ratio is within about 0.1%, i.e. 50 ns on the longest
/// time such a short run can report; longer runs calibrate over their whole length.
pub const MIN_CALIBRATION_NS: u64 = 50_000;

/// Nanoseconds per tick, as last calibrated.
fn ns_per_tick() -> f64 {
    f64::from_bits(NS_PER_TICK.load(Ordering::Relaxed))
}

/// The conversion as calibrated now, read once: the one way ticks become nanoseconds and back. Figures that
/// are compared with each other (a thread's time alive and its time in sections, a trace's events) must
/// come from one `Scale`: the background thread re-calibrates meanwhile, and a ratio that moves by 1e-4
/// between two conversions of times a few seconds into the run shifts one against the other by hundreds of
/// microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    base_ticks: u64,
    ns_per_tick: f64,
}

/// Reads the current conversion (see [`Scale`]).
pub fn scale() -> Scale {
    Scale {
        base_ticks: BASE_TICKS.load(Ordering::Relaxed),
        ns_per_tick: ns_per_tick(),
    }
}

impl Scale {
    /// A fixed conversion: `ns_per_tick`, with tick `base` as time zero (for pure code's tests).
    pub const fn fixed(base: Ticks, ns_per_tick: f64) -> Scale {
        Scale {
            base_ticks: base.0,
            ns_per_tick,
        }
    }

    /// Nanoseconds per tick.
    pub fn ns_per_tick(self) -> f64 {
        self.ns_per_tick
    }

    /// The first tick: the runtime's start, time zero.
    pub fn base(self) -> Ticks {
        Ticks(self.base_ticks)
    }

    /// Ticks to nanoseconds since the runtime started (saturating at 0 for ticks read before it).
    pub fn to_ns(self, ticks: Ticks) -> u64 {
        self.delta_ns(ticks.since(Ticks(self.base_ticks)))
    }

    /// A tick difference in nanoseconds.
    pub fn delta_ns(self, ticks: Ticks) -> u64 {
        (ticks.0 as f64 * self.ns_per_tick) as u64
    }

    /// Nanoseconds as a tick difference (the inverse of [`delta_ns`](Scale::delta_ns)).
    pub fn ticks(self, ns: u64) -> Ticks {
        Ticks((ns as f64 / self.ns_per_tick) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_convert_to_plausible_nanoseconds() {
        init(false);
        let t0 = now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let t1 = now();
        calibrate();
        let ns = scale().delta_ns(t1.since(t0));
        // Generous: catches a wrong scale (x1000), not scheduling noise.
        assert!(
            (15_000_000..2_000_000_000).contains(&ns),
            "{ns} ns for a 20 ms sleep"
        );
        assert!(scale().to_ns(t1) >= scale().to_ns(t0));
    }

    #[test]
    fn a_calibration_stands_while_a_new_one_is_within_a_ppm() {
        init(false);
        std::thread::sleep(std::time::Duration::from_millis(5));
        calibrate();
        let before = ns_per_tick();
        // A measurement 0.5 ppm away is noise (the figures stay as they are); 2 ppm away is taken; the
        // first, from 1.0, always.
        assert!(!moved(before, before * (1.0 + 0.5e-6)));
        assert!(!moved(before, before * (1.0 - 0.5e-6)));
        assert!(moved(before, before * (1.0 + 2e-6)));
        assert!(moved(1.0, 0.385));
        // Pairs are close: two taken back to back, a few microseconds apart at most, even here.
        let (t0, m0) = pair();
        let (t1, m1) = pair();
        assert!(t1 >= t0 && m1 >= m0);
    }
}
