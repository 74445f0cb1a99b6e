//! The resident-set sampler: the background thread calls [`sample`] every `PERFGRAPH_MEM_INTERVAL` (20 ms by
//! default) while memory moves, and publishes the figure ([`process::set_rss_kb`]); recording threads only
//! load it when a section starts and ends, so a section's memory figures are exact to one sampling interval.
//! The figure itself comes from [`sys::rss_bytes`].
//!
//! While memory stays put the samples space out ([`Pace`]): each one that finds the figure within
//! [`QUIET_KB`] of the last doubles the interval, up to [`QUIET_MAX_NS`]; the first that finds it moved goes
//! back to `PERFGRAPH_MEM_INTERVAL`. A figure that does not move needs no fresh reading, and each pass of
//! the background thread costs a wake-up (tens of microseconds): an idle program then costs a few passes a
//! second, not fifty. What it costs: the first interval after memory starts moving again may be up to
//! [`QUIET_MAX_NS`] long instead of `PERFGRAPH_MEM_INTERVAL`.
//!
//! Deterministic tests can set the figure themselves instead ([`set_fake_kb`], not a public API): [`sample`]
//! then reads nothing and leaves the figure as the test set it.

use crate::base::{process, sys};

/// Sets the resident-set figure that sections read, in KiB, for deterministic tests; not a public API. From
/// the first call on, [`sample`] no longer reads the system's figure. The first call must come before the
/// runtime starts (the first recorded section or settings read), so no sample of the real figure can
/// overwrite it; later calls just change it.
///
/// # Panics
/// If the first call comes after the runtime started.
pub fn set_fake_kb(kb: u32) {
    if !process::fake_rss() {
        assert!(
            !process::started(),
            "perfgraph: fake memory must be switched on before the runtime starts"
        );
        // Before the runtime starts, so before the background thread exists: its spawn orders this store
        // before every `sample`.
        process::set_fake_rss();
    }
    process::set_rss_kb(kb);
}

/// Reads the resident set now and publishes it. Returns bytes. With fake memory ([`set_fake_kb`]) it reads
/// nothing and publishes nothing: it returns the figure the test set.
pub fn sample() -> Option<u64> {
    if process::fake_rss() {
        return Some(process::rss_kb() as u64 * 1024);
    }
    let bytes = sys::rss_bytes()?;
    process::set_rss_kb((bytes / 1024).min(u32::MAX as u64) as u32);
    Some(bytes)
}

/// Change of the resident set (KiB) below which memory counts as not moving.
pub const QUIET_KB: u64 = 1024;

/// Longest interval between two samples while memory does not move (unless `PERFGRAPH_MEM_INTERVAL` is
/// longer).
pub const QUIET_MAX_NS: u64 = 500_000_000;

/// When the next sample is due: `PERFGRAPH_MEM_INTERVAL` while memory moves, doubling while it does not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    /// `PERFGRAPH_MEM_INTERVAL` (ns): the interval while memory moves, and the shortest one.
    base_ns: u64,
    /// The current interval (ns): always in `base_ns..=max(base_ns, QUIET_MAX_NS)`.
    interval_ns: u64,
    /// The last figure sampled (KiB); `None` before the first sample.
    last_kb: Option<u64>,
    /// Monotonic ns at which the next sample is due.
    next_ns: u64,
}

impl Pace {
    /// The first sample is due at once.
    pub(crate) fn new(base_ns: u64) -> Pace {
        Pace {
            base_ns,
            interval_ns: base_ns,
            last_kb: None,
            next_ns: 0,
        }
    }

    /// Monotonic ns at which the next sample is due.
    pub(crate) fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// A sample of `bytes` was taken at `mono_ns`: schedules the next one.
    pub(crate) fn sampled(&mut self, mono_ns: u64, bytes: Option<u64>) {
        let kb = bytes.map(|b| b / 1024);
        let quiet = match (self.last_kb, kb) {
            (Some(last), Some(kb)) => last.abs_diff(kb) < QUIET_KB,
            // Unreadable (no /proc): nothing to gain from looking often.
            (_, None) => true,
            (None, Some(_)) => false,
        };
        self.interval_ns = if quiet {
            (self.interval_ns * 2).min(QUIET_MAX_NS).max(self.base_ns)
        } else {
            self.base_ns
        };
        if kb.is_some() {
            self.last_kb = kb;
        }
        self.next_ns = mono_ns + self.interval_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::{Pace, QUIET_MAX_NS};

    const MS: u64 = 1_000_000;
    const MB: u64 = 1 << 20;

    #[test]
    fn spaces_out_while_memory_stays_put_and_snaps_back_when_it_moves() {
        let mut pace = Pace::new(20 * MS);
        assert_eq!(pace.next_ns(), 0, "the first sample is due at once");
        let mut at = 0;
        let mut intervals = Vec::new();
        for bytes in [
            100 * MB,
            100 * MB,
            100 * MB + 4096,
            100 * MB,
            100 * MB,
            100 * MB,
            100 * MB,
        ] {
            pace.sampled(at, Some(bytes));
            intervals.push((pace.next_ns() - at) / MS);
            at = pace.next_ns();
        }
        // The first sample has nothing to compare with; a change under 1 MiB is no change.
        assert_eq!(intervals, [20, 40, 80, 160, 320, 500, 500]);
        pace.sampled(at, Some(300 * MB));
        assert_eq!(
            pace.next_ns() - at,
            20 * MS,
            "memory moved: back to the set interval"
        );
        pace.sampled(at, Some(100 * MB));
        assert_eq!(pace.next_ns() - at, 20 * MS, "a drop is a move too");
    }

    #[test]
    fn never_samples_more_often_than_the_set_interval() {
        let mut pace = Pace::new(1000 * MS);
        for _ in 0..5 {
            pace.sampled(0, Some(MB));
            assert_eq!(pace.next_ns(), 1000 * MS, "longer than {QUIET_MAX_NS} ns");
        }
        let mut unreadable = Pace::new(20 * MS);
        unreadable.sampled(0, None);
        unreadable.sampled(0, None);
        assert_eq!(unreadable.next_ns(), 80 * MS);
    }

    #[test]
    fn samples_a_plausible_resident_set() {
        let bytes = super::sample().expect("resident memory readable");
        assert!(bytes > 100 * 1024, "{bytes}");
        assert!(crate::base::process::rss_kb() > 100);
    }
}
