//! Resident memory of the process, sampled off the hot path.
//!
//! The background thread calls [`sample`] every `PERFGRAPH_MEM_INTERVAL` (20 ms by default) and stores the
//! result in [`RSS_KB`]; recording threads only load that atomic (Relaxed) when a section starts and ends. A
//! section's memory figures are therefore exact to one sampling interval.
//!
//! Linux: field 2 of `/proc/self/statm` (resident pages) times the page size from `sysconf(_SC_PAGESIZE)`,
//! read with `pread` on a descriptor kept open. Elsewhere: `getrusage(RUSAGE_SELF).ru_maxrss`, which is the
//! *peak* resident set (kilobytes on most Unixes, bytes on macOS), the closest portable figure.
//!
//! Deterministic tests can set the figure themselves instead ([`set_fake_kb`], not a public API): [`sample`]
//! then reads nothing and leaves [`RSS_KB`] as the test set it.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Resident set in KiB, as last sampled (0 before the first sample).
pub static RSS_KB: AtomicU32 = AtomicU32::new(0);

/// The last sample, in KiB.
#[inline(always)]
pub fn current_kb() -> u32 {
    RSS_KB.load(Ordering::Relaxed)
}

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
            !crate::runtime::started(),
            "perfgraph: fake memory must be switched on before the runtime starts"
        );
        FAKE.store(true, Ordering::Relaxed);
    }
    RSS_KB.store(kb, Ordering::Relaxed);
}

/// Reads the resident set now and publishes it. Returns bytes. With fake memory ([`set_fake_kb`]) it reads
/// nothing and publishes nothing: it returns the figure the test set.
pub fn sample() -> Option<u64> {
    if FAKE.load(Ordering::Relaxed) {
        return Some(current_kb() as u64 * 1024);
    }
    let bytes = read_rss_bytes()?;
    RSS_KB.store(
        (bytes / 1024).min(u32::MAX as u64) as u32,
        Ordering::Relaxed,
    );
    Some(bytes)
}

#[cfg(target_os = "linux")]
fn read_rss_bytes() -> Option<u64> {
    use std::os::unix::fs::FileExt;
    use std::sync::OnceLock;
    static STATM: OnceLock<Option<std::fs::File>> = OnceLock::new();
    static PAGE: OnceLock<u64> = OnceLock::new();
    let file = STATM
        .get_or_init(|| std::fs::File::open("/proc/self/statm").ok())
        .as_ref()?;
    // SAFETY: sysconf has no preconditions.
    let page = *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => 4096,
    });
    let mut buf = [0u8; 128];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    let pages: u64 = text.split_ascii_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn read_rss_bytes() -> Option<u64> {
    // SAFETY: an all-zero rusage is valid; getrusage only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let max = usage.ru_maxrss.max(0) as u64;
    Some(if cfg!(target_os = "macos") {
        max
    } else {
        max * 1024
    })
}

#[cfg(not(unix))]
fn read_rss_bytes() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn samples_a_plausible_resident_set() {
        let bytes = super::sample().expect("resident memory readable");
        assert!(bytes > 100 * 1024, "{bytes}");
        assert!(super::current_kb() > 100);
    }
}
