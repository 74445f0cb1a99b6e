//! Every call into the operating system or the CPU's identification that perfgraph makes, in one place: the
//! monotonic clock, CPUID, the resident-set figure, threads' CPU time, stderr's `write`/`poll`/`isatty`, `atexit`,
//! `pthread_atfork`, `madvise` for freed memory, the ids that tell the main thread, the effective user id, secure-execution mode (`AT_SECURE`), and signal dispositions (`sigaction`, the self-pipe's `write`, `raise`). Each
//! wrapper is safe to call from any thread and never panics; the ones a signal handler calls say that they
//! are async-signal-safe. What "stderr" means here is [`process::output_fd`]: fd 2, or, while the program's
//! output is captured, the descriptor fd 2 led to before. `stream`: the calls behind that capture (pipes,
//! pseudo-terminals, the forked forwarder), built only with the `capture` feature. `cpu_timer`: a thread's
//! CPU-time timer and the handler of its signal (causal profiling's).

mod cpu_timer;
mod descriptor;
mod socket;
#[cfg(feature = "capture")]
mod stream;

pub use cpu_timer::*;
pub use descriptor::*;
pub use socket::*;
#[cfg(feature = "capture")]
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

/// `fd` moved to a descriptor above 2 (close-on-exec) if it is one of 0, 1, 2: a program that closed its
/// standard descriptors must find none of perfgraph's there (its next `open` expects the lowest free one).
pub fn above_stdio(fd: std::os::fd::OwnedFd) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: F_DUPFD_CLOEXEC with a minimum descriptor number has no memory-safety preconditions.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `new` is a descriptor we just made and nothing else owns.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(new) })
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
        .get_or_init(|| {
            let file = std::fs::File::open("/proc/self/statm").ok()?;
            above_stdio(file.into()).ok().map(std::fs::File::from)
        })
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

/// Under an address-space limit (`RLIMIT_AS`, what `ulimit -v` sets): the limit and the address space in
/// use now, bytes (`/proc/self/statm`'s first field on Linux). `None` without a limit, or where the use
/// cannot be read. A system call or two: for a thread's first section, not the hot path.
pub fn address_space_room() -> Option<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_ascii_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => 4096,
    };
    Some((lim.rlim_cur, pages * page))
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
///
/// Bytes that may leave the line open are noted before the write, and the exact last byte after it: a
/// process killed right after the write (SIGKILL) must not leave the capture's forwarder child believing
/// the line ended, or the program's next bytes would join perfgraph's open line. A write that then fails
/// costs at most one empty line.
pub fn write_stderr(bytes: &[u8]) -> std::io::Result<usize> {
    if let Some(&last) = bytes.last()
        && last != b'\n'
    {
        process::note_output(last);
    }
    let written = write_fd(process::output_fd(), bytes);
    if let Ok(n @ 1..) = written {
        process::note_output(bytes[n - 1]);
    }
    written
}

/// `len` bytes of fresh zeroed pages of their own (`mmap(MAP_PRIVATE | MAP_ANONYMOUS)`; resident only as they
/// are written), or `None` if the address space has no room (`ulimit -v`) or `len` is 0. Freed only by
/// [`unmap`], which gives the address space back at once, where a large block from the allocator may stay
/// in its heap when freed.
pub fn map_zeroed(len: usize) -> Option<std::ptr::NonNull<u8>> {
    if len == 0 {
        return None;
    }
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing; no existing memory is
    // touched.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    std::ptr::NonNull::new(ptr.cast())
}

/// Unmaps what [`map_zeroed`] mapped.
///
/// # Safety
/// `ptr` and `len` are a mapping [`map_zeroed`] returned, not unmapped yet, and nothing uses it after.
pub unsafe fn unmap(ptr: std::ptr::NonNull<u8>, len: usize) {
    // SAFETY: the caller's contract: a live mapping of `len` bytes that nothing uses any more.
    unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
}

/// Gives the whole pages inside `ptr .. ptr + len` back to the kernel (`madvise(MADV_DONTNEED)`): they stay
/// mapped, read as zero, and are not resident until written again. For memory the allocator handed out
/// (private and anonymous), before it is freed, so that the allocator's next caller does not get it resident
/// whether it writes it or not. Best effort: on an error the pages stay as they were.
pub fn release_pages(ptr: *mut u8, len: usize) {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize).saturating_add(len) / page * page;
    if end > start {
        // SAFETY: `start..end` are whole pages inside the caller's allocation, which it owns and no longer
        // reads: dropping their contents (they read as zero after) breaks nothing.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    }
}

/// Registers `f` to run at process exit (return from `main`, `std::process::exit`). `f` must not unwind.
pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: `f` is a plain `extern "C" fn()`; the caller promises it never unwinds.
    unsafe { libc::atexit(f) };
}

/// The calling thread's OS id (`gettid` on Linux; elsewhere its `pthread_self`).
pub fn thread_id() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as u64 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: pthread_self has no preconditions.
        unsafe { libc::pthread_self() as u64 }
    }
}

/// The calling thread's CPU-time clock (`pthread_getcpuclockid`), which any thread can read with
/// [`cpu_clock_ns`] while this one lives. On Linux the clock is a number derived from the thread's id, so
/// reading it after the thread has exited is an error (`EINVAL`), never undefined behaviour.
pub fn own_cpu_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `pthread_self()` is the calling thread, alive for the call; `clock` is valid for writes.
    let ok = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } == 0;
    ok.then_some(clock)
}

/// CPU time (user + system) on `clock`, a thread's from [`own_cpu_clock`], in nanoseconds; `None` if it
/// cannot be read (its thread has exited). One system call (thread CPU clocks are not in the vDSO).
pub fn cpu_clock_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; an invalid or stale clock id is reported as an error.
    let ok = unsafe { libc::clock_gettime(clock, &mut ts) } == 0;
    ok.then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The calling thread's CPU time, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn own_cpu_ns() -> Option<u64> {
    cpu_clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The calling thread's context switches so far, `(voluntary, involuntary)`: `getrusage(RUSAGE_THREAD)`, a
/// system call. `None` where the kernel has no per-thread usage.
pub fn own_switches() -> Option<(u64, u64)> {
    #[cfg(target_os = "linux")]
    {
        // RUSAGE_THREAD (Linux 2.6.26), which the libc crate names only for some C libraries.
        const RUSAGE_THREAD: libc::c_int = 1;
        // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid, writable rusage.
        let ok = unsafe { libc::getrusage(RUSAGE_THREAD, &mut usage) } == 0;
        ok.then_some((usage.ru_nvcsw as u64, usage.ru_nivcsw as u64))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Registers handlers run around every `fork()` of the process (`pthread_atfork`): `prepare` in the forking
/// thread before the fork, `parent` after it in the parent, `child` in the child (whose only thread is the
/// one that forked). They must not unwind; `child` should make only async-signal-safe calls. Returns
/// whether they were registered.
pub fn at_fork(prepare: extern "C" fn(), parent: extern "C" fn(), child: extern "C" fn()) -> bool {
    // SAFETY: three plain `extern "C" fn()`s, valid for the whole process; the caller promises they never
    // unwind.
    unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) == 0 }
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

/// A plain signal handler: what [`catch_signal`] installs.
pub type SignalHandler = extern "C" fn(libc::c_int);

/// What a signal's disposition is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// `SIG_DFL`: the signal's default action.
    Default,
    /// `SIG_IGN`.
    Ignored,
    /// A handler: `true` when it is `ours`, the handler passed to [`disposition`].
    Handler(bool),
}

/// `sig`'s disposition now, telling `ours` from any other handler. A signal number `sigaction` refuses
/// reads as [`Disposition::Ignored`] (nothing to do about it). Async-signal-safe.
pub fn disposition(sig: libc::c_int, ours: SignalHandler) -> Disposition {
    // SAFETY: an all-zero sigaction is a valid value to be overwritten.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null `act` only reads the disposition into `old`, a valid, writable sigaction.
    if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
        return Disposition::Ignored;
    }
    match old.sa_sigaction {
        libc::SIG_DFL => Disposition::Default,
        libc::SIG_IGN => Disposition::Ignored,
        handler => Disposition::Handler(handler == ours as libc::sighandler_t),
    }
}

/// Installs `handler` for `sig` (`SA_RESTART`: an interrupted read or write resumes instead of failing
/// with EINTR in the program). Returns whether `sigaction` took it.
pub fn catch_signal(sig: libc::c_int, handler: SignalHandler) -> bool {
    set_disposition(sig, handler as libc::sighandler_t, libc::SA_RESTART)
}

/// Puts `sig` back to its default action. Async-signal-safe.
pub fn default_signal(sig: libc::c_int) {
    set_disposition(sig, libc::SIG_DFL, 0);
}

fn set_disposition(sig: libc::c_int, action: libc::sighandler_t, flags: libc::c_int) -> bool {
    // SAFETY: an all-zero sigaction is valid: an empty mask, no flags.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = action;
    act.sa_flags = flags;
    // SAFETY: `act.sa_mask` is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    // SAFETY: `act` is a fully initialised sigaction whose handler (if not SIG_DFL/SIG_IGN) is an
    // `extern "C" fn(c_int)`, as `sa_flags` without SA_SIGINFO requires; a null `oldact` is allowed.
    unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) == 0 }
}

/// Ends the process by `sig` with its default action, so the exit status is the signal's (130 for SIGINT in
/// a shell): restores `SIG_DFL`, unblocks `sig` in this thread and raises it. Should the process survive
/// that (it cannot for a signal whose default is to terminate), `_exit(128 + sig)`. Async-signal-safe.
pub fn die_of(sig: libc::c_int) -> ! {
    default_signal(sig);
    // SAFETY: an all-zero sigset_t is valid storage for sigemptyset.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; a bad signal number only makes sigaddset fail; a null `oldset`
    // is allowed; raise and _exit have no preconditions.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
        libc::_exit(128 + sig)
    }
}

/// Blocks every signal in the calling thread, so the kernel delivers process-wide signals to the program's
/// threads only, as it would without perfgraph (one that blocks a signal to `sigwait` for it keeps it).
pub fn block_signals_here() {
    // SAFETY: an all-zero sigset_t is valid storage for sigfillset.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; a null `oldset` is allowed. SIGKILL and SIGSTOP cannot be
    // blocked, and the kernel silently leaves them out.
    unsafe {
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Whether `signal` is pending and blocked in the calling thread. For a thread that blocks every signal
/// ([`block_signals_here`]), that includes a process-wide signal the kernel has given to a program's thread
/// whose handler has not run yet. (The capture's forwarder is the one such thread that asks.)
#[cfg(feature = "capture")]
pub fn signal_pending(signal: i32) -> bool {
    // SAFETY: an all-zero sigset_t is valid storage for sigpending.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t, written by sigpending before sigismember reads it.
    unsafe { libc::sigpending(&mut set) == 0 && libc::sigismember(&set, signal) == 1 }
}

/// Makes writes to `fd` fail with EAGAIN instead of blocking (a signal handler's end of a self-pipe must
/// never block). Returns whether `fcntl` took it.
pub fn set_nonblocking(fd: std::os::fd::RawFd) -> bool {
    // SAFETY: fcntl on any descriptor number is sound; a bad one returns -1.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    }
}

/// One `write(fd, bytes)`, leaving `errno` as it found it (a signal handler must not change it under the
/// code it interrupted). Returns whether anything was written. Async-signal-safe.
pub fn write_from_handler(fd: std::os::fd::RawFd, bytes: &[u8]) -> bool {
    let saved = errno::errno();
    // SAFETY: the pointer and length describe `bytes`, initialised and alive for the call.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    errno::set_errno(saved);
    written > 0
}

/// A new descriptor (close-on-exec) for the open file description of `fd`, when that description is a
/// regular file open for writing; `None` otherwise (a pipe, a terminal, a closed or read-only descriptor).
/// Writes through it share the description's offset with every other holder of `fd`: the program, and
/// children that inherited it.
pub fn shared_regular_file(fd: std::os::fd::RawFd) -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl on any descriptor number is sound; a bad one returns -1.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return None;
    }
    // SAFETY: `new` is a descriptor we just made and nothing else owns; the File closes it.
    let file = unsafe { std::fs::File::from_raw_fd(new) };
    // SAFETY: as above, on our own descriptor.
    let flags = unsafe { libc::fcntl(new, libc::F_GETFL) };
    let writable = flags >= 0 && flags & libc::O_ACCMODE != libc::O_RDONLY;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    (writable && regular).then_some(file)
}

/// The effective user id: whose files the process's `open` may follow a link to (see
/// `collector::files`).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and never fails.
    unsafe { libc::geteuid() }
}

/// Whether the kernel started this program in secure-execution mode (`AT_SECURE`): setuid, setgid, or
/// with file capabilities, run by a user with fewer privileges than it gains. glibc's `secure_getenv` and
/// the dynamic loader's rules for `LD_*` variables use the same flag. `false` where it cannot be read.
pub fn secure_execution() -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: getauxval has no preconditions; it returns 0 for a type the auxiliary vector lacks.
        unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        // SAFETY: issetugid has no preconditions and never fails.
        unsafe { libc::issetugid() != 0 }
    }
}

/// The process id. Async-signal-safe.
pub fn process_id() -> u32 {
    // SAFETY: getpid has no preconditions and never fails.
    unsafe { libc::getpid() as u32 }
}

/// This machine's host name, `None` if it cannot be read.
pub fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, writable for the call; gethostname writes at most
    // that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn released_pages_read_as_zero_and_the_rest_is_kept() {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = 5 * page;
        let mut v = vec![7u8; len];
        // Unaligned on purpose: only the whole pages inside go back.
        super::release_pages(v[100..].as_mut_ptr(), len - 200);
        assert!(v[..100].iter().all(|&b| b == 7));
        assert!(v[len - 100..].iter().all(|&b| b == 7));
        let zeroed = v.iter().filter(|&&b| b == 0).count();
        // At least three of the five pages are whole inside `100 .. len - 100`, whatever the alignment.
        assert!(zeroed >= 3 * page && zeroed % page == 0, "{zeroed}");
        v[page * 2] = 1; // still mapped and writable
        assert_eq!(v[page * 2], 1);
    }
}
