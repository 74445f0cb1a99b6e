//! The system calls behind capturing the program's output (`collector::terminal::capture`), built only with the
//! `capture` feature: pipes and pseudo-terminals, `dup`/`dup2`, `poll`, `read`/`write`, memory shared with
//! a forked child, `tee` and `splice`, and the fork of that child. The calls the forked child makes are
//! async-signal-safe and allocate nothing: [`poll_fds`], [`read_fd`], [`write_fd_raw`], [`close_fd`],
//! [`close_other_fds`], [`ignore_signals`], [`exit_now`].

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::AtomicU64;

use super::{Kind, target};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A new descriptor (3 or above, close-on-exec) for what `fd` leads to.
pub fn dup_cloexec(fd: RawFd) -> io::Result<RawFd> {
    // SAFETY: F_DUPFD_CLOEXEC with a minimum descriptor number has no memory-safety preconditions.
    check(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) })
}

/// Makes `to` lead where `from` does (`dup2`; `to` loses close-on-exec).
pub fn dup_onto(from: RawFd, to: RawFd) -> io::Result<()> {
    loop {
        // SAFETY: dup2 on descriptor numbers has no memory-safety preconditions; `to` is one the caller
        // owns (fd 1 or 2), replaced atomically.
        match check(unsafe { libc::dup2(from, to) }) {
            Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted) => continue,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => continue,
            other => return other.map(|_| ()),
        }
    }
}

/// Marks `fd` close-on-exec.
fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor number has no memory-safety preconditions.
    check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) }).map(|_| ())
}

/// A pipe, both ends close-on-exec: `(read end, write end)`.
pub fn pipe_cloexec() -> io::Result<(RawFd, RawFd)> {
    let mut fds = [0 as libc::c_int; 2];
    #[cfg(target_os = "linux")]
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: `fds` has room for the two descriptors pipe writes.
        check(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
        set_cloexec(fds[0])?;
        set_cloexec(fds[1])?;
    }
    Ok((fds[0], fds[1]))
}

/// A new pseudo-terminal, both sides close-on-exec and neither the caller's controlling terminal:
/// `(master, slave)`.
pub fn open_pty() -> io::Result<(RawFd, RawFd)> {
    // SAFETY: posix_openpt has no memory-safety preconditions.
    let master = check(unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) })?;
    let slave = (|| {
        set_cloexec(master)?;
        // SAFETY: `master` is the master side just opened; grantpt and unlockpt only act on it.
        check(unsafe { libc::grantpt(master) })?;
        // SAFETY: as above.
        check(unsafe { libc::unlockpt(master) })?;
        let mut name = [0 as libc::c_char; 128];
        #[cfg(target_os = "linux")]
        {
            // SAFETY: `name` is a writable buffer of the length passed; ptsname_r NUL-terminates it.
            let err = unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) };
            if err != 0 {
                return Err(io::Error::from_raw_os_error(err));
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            // SAFETY: ptsname returns a NUL-terminated static string or null; we copy it at once (the
            // runtime's start calls this once, under a `Once`).
            let p = unsafe { libc::ptsname(master) };
            if p.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `p` is a NUL-terminated string.
            let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
            for (d, &c) in name.iter_mut().zip(s.iter().take(127)) {
                *d = c as libc::c_char;
            }
        }
        // SAFETY: `name` holds a NUL-terminated path (zero-initialised, at most 127 bytes written).
        let fd = check(unsafe {
            libc::open(
                name.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        })?;
        Ok(fd)
    })();
    match slave {
        Ok(slave) => Ok((master, slave)),
        Err(e) => {
            close_fd(master);
            Err(e)
        }
    }
}

/// Gives the terminal `to` the settings (termios) of terminal `from`, except output processing (`OPOST`:
/// bytes pass through unchanged, and `from`'s own processing applies once when they are forwarded there),
/// and its window size. Best effort: a setting that cannot be read or set is left as it is.
pub fn copy_terminal(from: RawFd, to: RawFd) {
    // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid, writable termios; bad descriptors only make the calls fail.
    unsafe {
        if libc::tcgetattr(from, &mut t) == 0 {
            t.c_oflag &= !libc::OPOST;
            libc::tcsetattr(to, libc::TCSANOW, &t);
        }
    }
    copy_window_size(from, to);
}

/// Gives the terminal `to` the window size of terminal `from` (`TIOCGWINSZ`, `TIOCSWINSZ`). Returns
/// whether it could.
pub fn copy_window_size(from: RawFd, to: RawFd) -> bool {
    // SAFETY: an all-zero winsize is a valid value for the ioctl to overwrite.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into `ws`; TIOCSWINSZ reads one from it.
    unsafe {
        libc::ioctl(from, libc::TIOCGWINSZ, &mut ws) == 0
            && libc::ioctl(to, libc::TIOCSWINSZ, &ws) == 0
    }
}

/// Whether the regular file `fd` writes to ends in the middle of a line: the byte before where its next
/// write lands (the end for `O_APPEND`, else the offset) is there and is not a newline. Read through a
/// descriptor of its own, opened from `/proc/self/fd` for reading only as a plain `open` would be (a file
/// the user may not read says no); never in a program with raised privileges (`AT_SECURE`).
pub fn ends_mid_line(fd: RawFd) -> bool {
    if target(fd).is_none_or(|t| t.kind != Kind::File) {
        return false;
    }
    // SAFETY: getauxval only reads the auxiliary vector.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return false;
    }
    // SAFETY: F_GETFL takes no argument and only reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let at = if flags >= 0 && flags & libc::O_APPEND != 0 {
        // SAFETY: an all-zero stat is a valid value for fstat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one stat into `st`.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return false;
        }
        st.st_size
    } else {
        // SAFETY: lseek with SEEK_CUR and 0 moves nothing; it returns the offset.
        unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) }
    };
    if at <= 0 {
        return false;
    }
    let Ok(path) = std::ffi::CString::new(format!("/proc/self/fd/{fd}")) else {
        return false;
    };
    let open = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
    // SAFETY: `path` is a valid C string; the descriptor opened is closed below.
    let reader = unsafe { libc::open(path.as_ptr(), open) };
    if reader < 0 {
        return false;
    }
    let mut byte = 0u8;
    // SAFETY: pread writes at most 1 byte into `byte`.
    let n = unsafe { libc::pread(reader, (&raw mut byte).cast(), 1, at - 1) };
    close_fd(reader);
    n == 1 && byte != b'\n'
}

/// Makes reads from `fd` return EAGAIN instead of blocking (a flag of the open file, shared with every
/// descriptor for it, also in a forked child). Returns whether `fcntl` took it.
pub fn make_nonblocking(fd: RawFd) -> bool {
    // SAFETY: fcntl on any descriptor number is sound; a bad one returns -1.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    }
}

/// Closes `fd`, ignoring errors. Async-signal-safe.
pub fn close_fd(fd: RawFd) {
    // SAFETY: closing a descriptor number has no memory-safety preconditions; callers only close
    // descriptors they own.
    unsafe { libc::close(fd) };
}

/// What a `read` or `write` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// This many bytes (at least 1).
    Done(usize),
    /// Nothing now (EAGAIN, EINTR): try again.
    Again,
    /// End of input (EOF; EIO from a pseudo-terminal whose other side is closed), or any other error: the
    /// descriptor is done.
    End,
    /// `splice` or `tee` does not work with these descriptors (EINVAL and the like).
    Refused,
}

fn io_result(n: isize) -> Io {
    if n > 0 {
        return Io::Done(n as usize);
    }
    if n == 0 {
        return Io::End;
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::EAGAIN | libc::EINTR) => Io::Again,
        _ => Io::End,
    }
}

/// One `read(fd, buf)`. Async-signal-safe.
pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> Io {
    // SAFETY: the pointer and length describe `buf`, writable and alive for the call.
    io_result(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
}

/// One `write(fd, bytes)`, as an [`Io`] (0 bytes written reads as [`Io::Again`]). Async-signal-safe.
pub fn write_fd_raw(fd: RawFd, bytes: &[u8]) -> Io {
    // SAFETY: the pointer and length describe `bytes`, initialised and alive for the call.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    if n == 0 { Io::Again } else { io_result(n) }
}

/// What [`poll_fds`] waits for on one descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Bytes to read (or the end of input).
    Read,
    /// Room to write (or a failure).
    Write,
}

/// Waits at most `wait_ms` (-1: without end) until one of `fds` (at most 4) is ready, hung up or failed.
/// Returns a bit per descriptor that is, in order (0: none, the wait ran out or was interrupted).
/// Async-signal-safe.
pub fn poll_fds(fds: &[(RawFd, Want)], wait_ms: i32) -> u32 {
    let mut set = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 4];
    let n = fds.len().min(set.len());
    for (p, &(fd, want)) in set.iter_mut().zip(fds) {
        p.fd = fd;
        p.events = match want {
            Want::Read => libc::POLLIN,
            Want::Write => libc::POLLOUT,
        };
    }
    // SAFETY: `set` holds `n` (at most 4) valid pollfds, and we pass that count.
    if unsafe { libc::poll(set.as_mut_ptr(), n as libc::nfds_t, wait_ms) } <= 0 {
        return 0;
    }
    let mut ready = 0;
    for (i, p) in set.iter().take(n).enumerate() {
        if p.revents != 0 {
            ready |= 1 << i;
        }
    }
    ready
}

/// Whether `fd` has bytes to read now (`poll` without waiting; for a pseudo-terminal's master, the poll
/// first lets the kernel move what the slave's writes queued into the master's input, so every write to
/// the slave that has returned is seen).
pub fn readable_now(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd and we pass a count of 1.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & libc::POLLIN != 0
}

/// Waits at most `limit` until `fd` (a pipe's read end) ends: every write end closed. What is written to
/// it is read and dropped.
pub fn wait_for_end(fd: RawFd, limit: std::time::Duration) {
    let deadline = std::time::Instant::now() + limit;
    let mut buf = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return;
        }
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        if poll_fds(&[(fd, Want::Read)], ms) != 0 && read_fd(fd, &mut buf) == Io::End {
            return;
        }
    }
}

/// The soft limit on open descriptors (`RLIMIT_NOFILE`), at most 2^20; 1024 if it cannot be read.
pub fn open_files_limit() -> u32 {
    // SAFETY: an all-zero rlimit is a valid value for getrlimit to overwrite.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 1024;
    }
    r.rlim_cur.min(1 << 20) as u32
}

/// Closes every descriptor but those in `keep` (`close_range` where the kernel has it, else one by one up
/// to `limit`). Async-signal-safe.
pub fn close_other_fds(keep: [RawFd; 6], limit: u32) {
    let mut k = keep;
    // Six elements: sort by hand (no allocation here).
    for i in 1..k.len() {
        let mut j = i;
        while j > 0 && k[j - 1] > k[j] {
            k.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut from: u32 = 0;
    for &fd in &k {
        if fd < 0 {
            continue;
        }
        let fd = fd as u32;
        if fd > from {
            close_range(from, fd - 1, limit);
        }
        from = from.max(fd + 1);
    }
    close_range(from, u32::MAX, limit);
}

/// Closes descriptors `first..=last`. Async-signal-safe.
fn close_range(first: u32, last: u32, limit: u32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range(2) takes two descriptor numbers and flags (0); it only closes descriptors.
        if unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) } == 0 {
            return;
        }
    }
    let mut fd = first;
    while fd <= last && fd < limit {
        close_fd(fd as RawFd);
        fd += 1;
    }
}

/// Ignores every signal that can be ignored (a child that must outlive its parent's Ctrl-C, `kill` of
/// the process group or closed terminal, and whose writes must fail with EPIPE rather than kill it).
/// Async-signal-safe.
pub fn ignore_signals() {
    // SAFETY: an all-zero sigaction is valid (empty mask, no flags); SIG_IGN needs no handler.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = libc::SIG_IGN;
    for sig in 1..65 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: `act` is a fully initialised sigaction; an unknown signal number only makes it fail.
        unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) };
    }
}

/// Ends the calling process at once (`_exit`: no exit handlers, no flushing). Async-signal-safe.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit has no preconditions.
    unsafe { libc::_exit(code) }
}

/// A word in memory shared with the children this process forks (`mmap(MAP_SHARED | MAP_ANONYMOUS)`, never
/// unmapped): what this process stores there is what a child reads, also after this process is gone. 0 at
/// first.
pub fn shared_word() -> io::Result<&'static AtomicU64> {
    // SAFETY: an anonymous shared mapping at an address of the kernel's choice; no existing memory is
    // affected.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<AtomicU64>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED || p.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the mapping is page-aligned, zero-filled (a valid AtomicU64), never unmapped, and only ever
    // accessed as this atomic.
    Ok(unsafe { &*p.cast::<AtomicU64>() })
}

/// How many bytes wait to be read from the pipe or terminal `fd` (`FIONREAD`; 0 if it cannot tell).
pub fn bytes_waiting(fd: RawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int into `n`.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } != 0 {
        return 0;
    }
    n.max(0) as usize
}

fn splice_result(n: isize) -> Io {
    if n < 0
        && matches!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        )
    {
        return Io::Refused;
    }
    io_result(n)
}

/// Copies up to `len` bytes from the front of pipe `from` into pipe `to` without taking them out of `from`
/// (`tee`, non-blocking): a look at what `from` holds.
pub fn tee_pipe(from: RawFd, to: RawFd, len: usize) -> Io {
    // SAFETY: tee takes two descriptor numbers, a length and flags; it touches no memory of ours.
    splice_result(unsafe { libc::tee(from, to, len, libc::SPLICE_F_NONBLOCK) })
}

/// Moves up to `len` bytes from the front of pipe `from` to `to` inside the kernel (`splice`, non-blocking
/// on the pipes): each byte is then either still in `from` or already in `to`, whatever happens to this
/// process. [`Io::Refused`]: `to` does not take splices.
pub fn splice_out(from: RawFd, to: RawFd, len: usize) -> Io {
    // SAFETY: null offsets (both are streams or appended to); splice touches no memory of ours.
    splice_result(unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_NONBLOCK | libc::SPLICE_F_MOVE,
        )
    })
}

/// Forks a grandchild that runs `child(args)` and is nobody's child in this process (the intermediate child
/// exits at once and is reaped here), so a program that waits for all its children never waits for it.
/// Returns when the grandchild runs (or failed to start).
///
/// # Safety
///
/// `child` runs in a copy of this process that has only the calling thread: other threads may have held
/// locks (the allocator's among them) at the fork. It must make only async-signal-safe calls (no
/// allocation, no locks, nothing that can panic) and end with [`exit_now`].
pub unsafe fn fork_detached<A: Copy>(args: A, child: fn(A) -> !) -> io::Result<()> {
    // SAFETY: fork has no memory-safety preconditions of its own; what runs in the children is only
    // `fork`, `_exit` and `child`, which the caller promises is async-signal-safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // The intermediate child: fork the grandchild and leave at once.
        // SAFETY: as above.
        match unsafe { libc::fork() } {
            0 => child(args),
            p if p > 0 => exit_now(0),
            _ => exit_now(1),
        }
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; `pid` is our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                Ok(())
            } else {
                Err(io::Error::other("the forwarder could not be forked"))
            };
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            // The program reaps its children itself (SIGCHLD ignored, or a handler that waits for any):
            // the intermediate child's status is gone; the grandchild most likely runs.
            _ => return Ok(()),
        }
    }
}
