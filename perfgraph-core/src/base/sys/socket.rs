//! The calls behind the control socket (`collector::net::listen`, and its clients in `attach`): the private
//! directory, the listening socket and its peers' credentials, and whether a socket is stale.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::above_stdio;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Why a directory is not private enough to hold the sockets, if it is not: not a directory (a symbolic
/// link included: `lstat`), not owned by `uid`, or open to group or others.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn not_private(dir: &Path, uid: u32) -> Option<String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) => return Some(e.to_string()),
    };
    if meta.file_type().is_symlink() {
        return Some("it is a symbolic link".to_owned());
    }
    if !meta.is_dir() {
        return Some("it is not a directory".to_owned());
    }
    if meta.uid() != uid {
        return Some(format!("it is owned by uid {}, not {uid}", meta.uid()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Some(format!(
            "its mode is {:o}: group or others have access",
            meta.permissions().mode() & 0o7777
        ));
    }
    None
}

/// Creates `dir` with mode 0700 unless it exists (its parent must exist); then checks it ([`not_private`]).
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn private_directory(dir: &Path, uid: u32) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e.to_string()),
    }
    match not_private(dir, uid) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// A new directory `<prefix>XXXXXX` (`mkdtemp`: the end random, the directory made 0700 and ours, never one
/// that exists), for a fallback socket directory.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn make_private_directory(prefix: &Path) -> io::Result<std::path::PathBuf> {
    let mut template = prefix.as_os_str().as_bytes().to_vec();
    template.extend_from_slice(b"XXXXXX\0");
    if template[..template.len() - 1].contains(&0) {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // SAFETY: `template` is a NUL-terminated, writable buffer ending in six `X`s, alive for the call;
    // mkdtemp writes the name it made into it, of the same length.
    let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(io::Error::last_os_error());
    }
    template.pop();
    Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(
        template,
    )))
}

/// A listening Unix socket at `path`, mode 0600, non-blocking, close-on-exec and above fd 2; an error of
/// kind `AlreadyExists` if something is there (a live socket, or a stale one: [`refuses`] tells them
/// apart). The socket is bound and listening under a temporary name first, then linked at `path`
/// (`link(2)` never replaces): nobody can connect before its mode is set, and a sweep ([`refuses`]) never
/// finds `path` bound but not yet listening, which it would take for a dead process's.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn listen(path: &Path, backlog: i32) -> io::Result<UnixListener> {
    // std binds with SOCK_CLOEXEC and listens at once (backlog 128 on Linux); we want the mode first.
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor we just made and nothing else owns.
    let fd = above_stdio(unsafe { OwnedFd::from_raw_fd(fd) })?;
    // A name no socket of ours has (`<pid>.sock`), random: two processes of one pid (of two PID namespaces)
    // starting at once do not meet.
    let temp = path.with_file_name(format!(".{:016x}", getrandom::u64()?));
    let (addr, len) = unix_address(&temp)?;
    unix_address(path)?;
    // SAFETY: `addr` is a valid sockaddr_un of `len` bytes, alive for the call.
    if unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let chmod = std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o600));
    let listening = chmod.and_then(|()| {
        // SAFETY: listen on our own bound socket.
        match unsafe { libc::listen(fd.as_raw_fd(), backlog) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    });
    let linked = listening.and_then(|()| std::fs::hard_link(&temp, path));
    let _ = std::fs::remove_file(&temp);
    linked?;
    let listener = UnixListener::from(fd);
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Whether the socket at `path` refuses connections (`ECONNREFUSED`): nothing listens on it, its process
/// gone (or it `exec`ed a program without us). Only that makes a socket stale: a pid that does not exist
/// here proves nothing (a process of another PID namespace sharing the directory has one), and a socket
/// that takes the connection, or whose queue is full, has a process behind it, stopped or busy as it may be.
/// Connecting costs the listener one connection closed unread; it never waits.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn refuses(path: &Path) -> bool {
    matches!(connect(path), Err(e) if e.kind() == io::ErrorKind::ConnectionRefused)
}

/// A `sockaddr_un` for `path`, or an error if the path does not fit in one (108 bytes on Linux).
fn unix_address(path: &Path) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: an all-zero sockaddr_un is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the socket's path is longer than {} bytes",
                addr.sun_path.len() - 1
            ),
        ));
    }
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((addr, len as libc::socklen_t))
}

/// The next pending connection, non-blocking and above fd 2; `Ok(None)` when none is pending.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn accept(listener: &UnixListener) -> io::Result<Option<UnixStream>> {
    match listener.accept() {
        Ok((stream, _)) => {
            let fd = above_stdio(OwnedFd::from(stream))?;
            let stream = UnixStream::from(fd);
            stream.set_nonblocking(true)?;
            Ok(Some(stream))
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// The paths of the entries of `dir` whose file names `pick` takes, among the first `max` entries read (a
/// bounded directory read), sorted by name. What an entry is (a private directory, say) is for the caller
/// to check.
pub fn entries_named(
    dir: &Path,
    max: usize,
    pick: impl Fn(&str) -> bool,
) -> io::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .take(max)
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(&pick))
        .map(|e| e.path())
        .collect();
    paths.sort();
    Ok(paths)
}

/// The user id of the process at the other end of `stream`, as the kernel recorded it when it connected
/// (`SO_PEERCRED`); `None` where it cannot be read.
pub fn peer_uid(stream: &UnixStream) -> Option<u32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: an all-zero ucred is a valid value for getsockopt to overwrite.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        // SAFETY: a ucred is plain integers, valid whatever bytes SO_PEERCRED writes into it.
        let len = unsafe { socket_option(stream.as_raw_fd(), libc::SO_PEERCRED, &mut cred) };
        (len.ok() == Some(std::mem::size_of::<libc::ucred>())).then_some(cred.uid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let mut uid: libc::uid_t = 0;
        let mut gid: libc::gid_t = 0;
        // SAFETY: `uid` and `gid` are valid for writing.
        let rc = unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) };
        (rc == 0).then_some(uid)
    }
}

/// Connects to the socket at `path` without waiting for a listener whose queue is full (that is
/// `WouldBlock`); the stream returned blocks, close-on-exec.
pub fn connect(path: &Path) -> io::Result<UnixStream> {
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor we just made and nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let (addr, len) = unix_address(path)?;
    // SAFETY: `addr` is a valid sockaddr_un of `len` bytes, alive for the call.
    if unsafe { libc::connect(fd.as_raw_fd(), (&raw const addr).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Closes `fd` (in a forked child: the parent's sockets). Async-signal-safe.
pub fn close(fd: RawFd) {
    // SAFETY: closing a descriptor the caller owns and no Rust object will close again.
    unsafe {
        libc::close(fd);
    }
}

/// Removes the socket file `path` (a stale one, or ours at exit) if it is a socket.
pub fn remove_socket(path: &Path) {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(path);
    }
}

/// Sends what `stream` takes now of `out[*sent..]` ([`send`], so without SIGPIPE), moving `sent`;
/// `Ok(true)` once all of it is sent, `Ok(false)` when a non-blocking socket is full.
pub fn send_some(stream: &impl AsRawFd, out: &[u8], sent: &mut usize) -> io::Result<bool> {
    while *sent < out.len() {
        match send(stream, &out[*sent..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => *sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// The raw descriptor of `stream`, for the fork handler's list (see `collector::net`).
#[cfg_attr(
    not(any(feature = "listen", feature = "prometheus", feature = "otlp")),
    allow(dead_code)
)]
pub fn raw_of(stream: &impl AsRawFd) -> RawFd {
    stream.as_raw_fd()
}

/// A TCP listener at `addr`, non-blocking, close-on-exec and above fd 2 (`PERFGRAPH_PROMETHEUS`).
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
pub fn listen_tcp(addr: std::net::SocketAddr) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr)?;
    let listener = std::net::TcpListener::from(above_stdio(OwnedFd::from(listener))?);
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// The next pending TCP connection, non-blocking and above fd 2; `Ok(None)` when none is pending.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
pub fn accept_tcp(listener: &std::net::TcpListener) -> io::Result<Option<std::net::TcpStream>> {
    match listener.accept() {
        Ok((stream, _)) => {
            let stream = std::net::TcpStream::from(above_stdio(OwnedFd::from(stream))?);
            stream.set_nonblocking(true)?;
            Ok(Some(stream))
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// One `send` of `bytes` on the socket `stream`, without SIGPIPE when the peer has gone (`MSG_NOSIGNAL`:
/// a program that restored SIGPIPE's default must not die of our client's leaving); `EPIPE` instead.
pub fn send(stream: &impl AsRawFd, bytes: &[u8]) -> io::Result<usize> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = libc::MSG_NOSIGNAL;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = 0;
    // SAFETY: the pointer and length describe `bytes`, initialised and alive for the call.
    let n = unsafe {
        libc::send(
            stream.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            flags,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Whether the peer of the connected socket `stream` has gone: its end is closed (`POLLHUP`: it exited,
/// was killed, or closed the connection) or the connection failed (`POLLERR`: reset). Never waits, and reads
/// nothing. A peer that only shut its writing side (a half-close, which a zero-length read would show) is
/// still there to read.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn hung_up(stream: &impl AsRawFd) -> bool {
    let mut p = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// A TCP connection to `addr`, begun and not waited for (the OTLP export's): non-blocking, close-on-exec
/// and above fd 2. [`connected`] says when it is made, or why it failed.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub fn connect_tcp(addr: std::net::SocketAddr) -> io::Result<std::net::TcpStream> {
    let domain = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2) call; the result is checked.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor we just made and nothing else owns.
    let fd = above_stdio(unsafe { OwnedFd::from_raw_fd(fd) })?;
    // SAFETY: an all-zero sockaddr_storage is a valid value; it is large enough for either family.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        std::net::SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            let sin = unsafe { &mut *(&raw mut storage).cast::<libc::sockaddr_in>() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
            std::mem::size_of::<libc::sockaddr_in>()
        }
        std::net::SocketAddr::V6(a) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            let sin6 = unsafe { &mut *(&raw mut storage).cast::<libc::sockaddr_in6>() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    // SAFETY: `storage` holds a valid address of `len` bytes, alive for the call.
    let rc = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&raw const storage).cast(),
            len as libc::socklen_t,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    Ok(std::net::TcpStream::from(fd))
}

/// Whether the connection [`connect_tcp`] began is made (`Ok(true)`), not yet (`Ok(false)`), or failed
/// (its error). Never waits.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub fn connected(stream: &std::net::TcpStream) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Ok(false);
    }
    let mut err: libc::c_int = 0;
    // SAFETY: SO_ERROR writes one c_int into `err`, valid whatever its bytes.
    unsafe { socket_option(stream.as_raw_fd(), libc::SO_ERROR, &mut err) }?;
    if err != 0 {
        return Err(io::Error::from_raw_os_error(err));
    }
    Ok(true)
}

/// Reads the `SOL_SOCKET` option `name` of `fd` into `value` (`getsockopt`, offering `value`'s size): the
/// number of bytes written, or the OS error.
///
/// # Safety
///
/// Whatever bytes option `name` writes into `value` must make a valid `T`.
#[cfg_attr(
    not(any(feature = "otlp", target_os = "linux", target_os = "android")),
    allow(dead_code)
)]
unsafe fn socket_option<T>(fd: RawFd, name: libc::c_int, value: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is valid for writing `len` bytes, and `len` for writing a socklen_t; the caller
    // promises that the bytes written make a valid `T`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (value as *mut T).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}
