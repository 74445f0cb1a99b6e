//! The resident-set sampler: the background thread calls [`sample`] every `PERFGRAPH_MEM_INTERVAL` (20 ms by
//! default) and publishes the figure ([`process::set_rss_kb`]); recording threads only load it when a
//! section starts and ends, so a section's memory figures are exact to one sampling interval. The figure
//! itself comes from [`sys::rss_bytes`].
//!
//! Deterministic tests can set the figure themselves instead ([`set_fake_kb`], not a public API): [`sample`]
//! then reads nothing and leaves the figure as the test set it.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::{process, sys};

/// Whether a test sets the figure ([`set_fake_kb`]). Set before the runtime starts, so before the background
/// thread exists: its spawn orders this store before every [`sample`].
static FAKE: AtomicBool = AtomicBool::new(false);

/// Sets the resident-set figure that sections read, in KiB, for deterministic tests; not a public API. From
/// the first call on, [`sample`] no longer reads the system's figure. The first call must come before the
/// runtime starts (the first recorded section or settings read), so no sample of the real figure can
/// overwrite it; later calls just change it.
///
/// # Panics
/// If the first call comes after the runtime started.
pub fn set_fake_kb(kb: u32) {
    if !FAKE.load(Ordering::Relaxed) {
        assert!(
            !process::started(),
            "perfgraph: fake memory must be switched on before the runtime starts"
        );
        FAKE.store(true, Ordering::Relaxed);
    }
    process::set_rss_kb(kb);
}

/// Reads the resident set now and publishes it. Returns bytes. With fake memory ([`set_fake_kb`]) it reads
/// nothing and publishes nothing: it returns the figure the test set.
pub fn sample() -> Option<u64> {
    if FAKE.load(Ordering::Relaxed) {
        return Some(process::rss_kb() as u64 * 1024);
    }
    let bytes = sys::rss_bytes()?;
    process::set_rss_kb((bytes / 1024).min(u32::MAX as u64) as u32);
    Some(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn samples_a_plausible_resident_set() {
        let bytes = super::sample().expect("resident memory readable");
        assert!(bytes > 100 * 1024, "{bytes}");
        assert!(crate::base::process::rss_kb() > 100);
    }
}
