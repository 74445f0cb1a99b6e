//! Every call into the operating system or the CPU's identification that perfgraph makes, in one place: the
//! monotonic clock, CPUID, the resident-set figure, stderr's `write`/`poll`/`isatty`, `atexit`, and the ids
//! that tell the main thread. Each wrapper is safe to call from any thread and never panics. What "stderr"
//! means here is [`process::output_fd`]: fd 2, or, while the program's output is captured, the descriptor
//! fd 2 led to before. [`stream`]: the calls behind that capture (pipes, pseudo-terminals, the forked
//! forwarder).

mod stream;

pub use stream::*;

use super::process;

/// `CLOCK_MONOTONIC` in nanoseconds (through the vDSO on Linux: no system call).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC is always supported on the targets we build.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Whether the CPU says its timestamp counter is invariant (CPUID leaf 0x8000_0007, EDX bit 8) and, on
/// Linux, the kernel itself chose `tsc` as its clocksource (it checks that the counters of all cores agree).
pub fn tsc_is_trustworthy() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let max_ext = core::arch::x86_64::__cpuid(0x8000_0000).eax;
        if max_ext < 0x8000_0007 {
            return false;
        }
        let invariant = core::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0;
        if !invariant {
            return false;
        }
        if cfg!(target_os = "linux") {
            return std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .map(|s| s.trim() == "tsc")
            .unwrap_or(false);
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The process's resident set in bytes, or `None` if it cannot be read.
///
/// Linux: field 2 of `/proc/self/statm` (resident pages) times the page size from `sysconf(_SC_PAGESIZE)`,
/// read with `pread` on a descriptor kept open. Elsewhere: `getrusage(RUSAGE_SELF).ru_maxrss`, which is the
/// *peak* resident set (kilobytes on most Unixes, bytes on macOS), the closest portable figure.
#[cfg(target_os = "linux")]
pub fn rss_bytes() -> Option<u64> {
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

/// The process's resident set in bytes (see the Linux version): the peak, here.
#[cfg(all(unix, not(target_os = "linux")))]
pub fn rss_bytes() -> Option<u64> {
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

/// Whether stderr is a terminal (a closed one is not).
pub fn stderr_is_tty() -> bool {
    is_tty(process::output_fd())
}

/// What `poll` says about fd 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// A write goes through now.
    Yes,
    /// No room within the wait (or an interrupted wait): try again later.
    No,
    /// Closed, failed or hung up: it will never take a write.
    Broken,
}

/// Whether stderr takes a write now, waiting at most `wait_ms` for room.
pub fn stderr_room(wait_ms: i32) -> Room {
    room(process::output_fd(), wait_ms)
}

/// Whether `fd` takes a write now, waiting at most `wait_ms` for room.
pub fn room(fd: std::os::fd::RawFd, wait_ms: i32) -> Room {
    let mut fd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: `fd` is one valid pollfd and we pass a count of 1.
    let n = unsafe { libc::poll(&mut fd, 1, wait_ms) };
    if n <= 0 {
        return Room::No; // timeout, or EINTR and the like: try again later
    }
    if fd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
        return Room::Broken;
    }
    Room::Yes
}

/// One `write` of `bytes` to stderr: how many it took, or the OS error.
pub fn write_stderr(bytes: &[u8]) -> std::io::Result<usize> {
    let written = write_fd(process::output_fd(), bytes);
    if let Ok(n @ 1..) = written {
        process::note_output(bytes[n - 1]);
    }
    written
}

/// Registers `f` to run at process exit (return from `main`, `std::process::exit`). `f` must not unwind.
pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: `f` is a plain `extern "C" fn()`; the caller promises it never unwinds.
    unsafe { libc::atexit(f) };
}

/// Whether the calling thread is the process's main thread.
pub fn is_main_thread() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid and gettid have no preconditions.
        unsafe { libc::getpid() == libc::gettid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        std::thread::current().name() == Some("main")
    }
}
