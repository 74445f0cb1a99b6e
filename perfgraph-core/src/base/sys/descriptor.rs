//! What a descriptor leads to (a terminal, a pipe, a file; how wide a terminal is, whether typed input is
//! echoed onto it) and one plain `write`: what perfgraph's writer to stderr and the terminal's state need
//! with or without the capture of the program's output, which also uses them (its own calls are in
//! `stream`).

use std::io;
use std::os::fd::RawFd;

/// What kind of thing a descriptor leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A terminal (`isatty`).
    Terminal,
    /// A pipe or FIFO.
    Pipe,
    /// A socket.
    Socket,
    /// A regular file.
    File,
    /// Anything else (`/dev/null`, another device, a directory).
    Other,
}

/// Where a descriptor leads: `fstat`'s device and inode (and, for a device, the device it is), and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// `st_dev`: the file system (for a pipe, the pipe file system).
    pub dev: u64,
    /// `st_ino`: the inode (for a pipe, the pipe itself).
    pub ino: u64,
    /// `st_rdev`: for a terminal or another device, the device itself.
    pub rdev: u64,
    /// What it is.
    pub kind: Kind,
}

/// Where `fd` leads, or `None` when it is closed (or `fstat` fails).
pub fn target(fd: RawFd) -> Option<Target> {
    // SAFETY: an all-zero stat is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat; a bad descriptor only makes fstat fail.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    let kind = match st.st_mode & libc::S_IFMT {
        _ if is_tty(fd) => Kind::Terminal,
        libc::S_IFIFO => Kind::Pipe,
        libc::S_IFSOCK => Kind::Socket,
        libc::S_IFREG => Kind::File,
        _ => Kind::Other,
    };
    Some(Target {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        rdev: st.st_rdev as u64,
        kind,
    })
}

/// Whether `fd` is a terminal (a closed one is not).
pub fn is_tty(fd: RawFd) -> bool {
    // SAFETY: isatty has no preconditions; a bad descriptor reads as "not a tty".
    unsafe { libc::isatty(fd) == 1 }
}

/// The terminal `fd`'s width in columns, if it has one.
pub fn window_cols(fd: RawFd) -> Option<u16> {
    // SAFETY: an all-zero winsize is a valid value for the ioctl to overwrite.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into `ws`.
    let ok = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col)
}

/// Whether input typed at the terminal `fd` may be echoed onto it: fd 0 is that same terminal and its
/// `ECHO` flag is on.
pub fn input_echoes_onto(fd: RawFd) -> bool {
    let (Some(input), Some(output)) = (target(0), target(fd)) else {
        return false;
    };
    if input.kind != Kind::Terminal || output.kind != Kind::Terminal || input.rdev != output.rdev {
        return false;
    }
    // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid, writable termios.
    let ok = unsafe { libc::tcgetattr(0, &mut t) } == 0;
    // Unknown: assume it may.
    !ok || t.c_lflag & libc::ECHO != 0
}

/// One `write(fd, bytes)`: how many it took, or the OS error.
pub fn write_fd(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: the pointer and length describe `bytes`, initialised and alive for the call.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    if written < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(written as usize)
    }
}
