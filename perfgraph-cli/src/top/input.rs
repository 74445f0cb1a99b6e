//! What `perfgraph top` waits for: keys from the terminal, the signals that end it (SIGTERM, SIGHUP,
//! SIGINT), a resize (SIGWINCH), a new snapshot, and the terminal hanging up. It waits in the kernel, in
//! one poll(2) on the terminal and a self-pipe that the signal handlers and the snapshot thread write to:
//! no timer, no spin. A terminal that hangs up (its window or tmux pane closed) reads end of file, fails
//! with EIO or polls POLLHUP: any of them ends `top` at once.
//!
//! The keys are parsed here from the bytes the terminal sends in raw mode (crossterm's event reader loops
//! on a terminal at end of file, never returning, and looks at no signal but SIGWINCH).

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The signal that asked `top` to end (SIGTERM, SIGHUP, SIGINT), 0 for none: set by signal-hook's
/// handler before it writes to the self-pipe.
static SIGNALLED: AtomicUsize = AtomicUsize::new(0);

/// What ended a wait.
#[derive(Debug, PartialEq)]
pub enum Wake {
    /// Keys typed (none for bytes that are no key `top` knows).
    Keys(Vec<KeyEvent>),
    /// A signal that ends `top`.
    Signal(i32),
    /// The terminal hung up.
    HangUp,
    /// Something else to draw: a new snapshot, a resize.
    Redraw,
}

/// The terminal's input and the self-pipe.
pub struct Input {
    /// The terminal read: standard input if it is one, else `/dev/tty` (as crossterm's raw mode).
    tty: RawFd,
    _owned: Option<OwnedFd>,
    wake: UnixStream,
    waker: UnixStream,
    /// The start of a character split between two reads.
    pending: Vec<u8>,
}

impl Input {
    /// Opens the terminal and has SIGTERM, SIGHUP, SIGINT and SIGWINCH wake [`Input::wait`].
    pub fn new() -> io::Result<Input> {
        // SAFETY: isatty only looks at descriptor 0.
        let (tty, owned) = if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
            (libc::STDIN_FILENO, None)
        } else {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")?;
            let fd = OwnedFd::from(file);
            (fd.as_raw_fd(), Some(fd))
        };
        let (wake, waker) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        waker.set_nonblocking(true)?;
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            // The flag first, then the byte: `wait` drains the pipe, then reads the flag.
            signal_hook::flag::register_usize(sig, &SIGNALLED, sig as usize)?;
            signal_hook::low_level::pipe::register(sig, waker.try_clone()?)?;
        }
        signal_hook::low_level::pipe::register(libc::SIGWINCH, waker.try_clone()?)?;
        Ok(Input {
            tty,
            _owned: owned,
            wake,
            waker,
            pending: Vec::new(),
        })
    }

    /// A handle that wakes [`Input::wait`] with [`Wake::Redraw`] (for the snapshot thread).
    pub fn waker(&self) -> io::Result<Waker> {
        Ok(Waker(self.waker.try_clone()?))
    }

    /// Waits, in poll(2), for keys, a signal, a wake or a hangup.
    pub fn wait(&mut self) -> io::Result<Wake> {
        loop {
            let sig = SIGNALLED.load(Ordering::SeqCst);
            if sig != 0 {
                return Ok(Wake::Signal(sig as i32));
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.tty,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.wake.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on two live pollfds, without a timeout.
            if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if fds[1].revents != 0 {
                // Drained before the flag is read: a signal after this wakes the next poll.
                let mut buf = [0u8; 64];
                while matches!((&self.wake).read(&mut buf), Ok(n) if n > 0) {}
                let sig = SIGNALLED.load(Ordering::SeqCst);
                if sig != 0 {
                    return Ok(Wake::Signal(sig as i32));
                }
                if fds[0].revents == 0 {
                    return Ok(Wake::Redraw);
                }
            }
            let tty = fds[0].revents;
            if tty & libc::POLLIN != 0 {
                let mut buf = [0u8; 1024];
                // SAFETY: read into a live buffer of its length; poll said it will not block.
                let n = unsafe { libc::read(self.tty, buf.as_mut_ptr().cast(), buf.len()) };
                match n {
                    // End of file: in raw mode, only a terminal that hung up reads it.
                    0 => return Ok(Wake::HangUp),
                    n if n > 0 => {
                        self.pending.extend_from_slice(&buf[..n as usize]);
                        return Ok(Wake::Keys(keys(&mut self.pending)));
                    }
                    _ => {
                        let e = io::Error::last_os_error();
                        match e.raw_os_error() {
                            Some(libc::EINTR | libc::EAGAIN) => continue,
                            Some(libc::EIO) => return Ok(Wake::HangUp),
                            _ => return Err(e),
                        }
                    }
                }
            }
            if tty & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                return Ok(Wake::HangUp);
            }
        }
    }
}

/// Wakes [`Input::wait`] from another thread.
pub struct Waker(UnixStream);

impl Waker {
    pub fn wake(&self) {
        // A full pipe already wakes it.
        let _ = (&self.0).write(&[1]);
    }
}

/// Whether an error writing to or setting the terminal says it is gone (EIO).
pub fn hung_up(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EIO)
}

/// The keys in the bytes a terminal sends in raw mode, taken from `bytes`; what is left is the start of a
/// character the next read completes. Escape sequences `top` has no use for (arrows, function keys) are
/// skipped; Esc is an escape byte with nothing after it in the same read.
pub fn keys(bytes: &mut Vec<u8>) -> Vec<KeyEvent> {
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        match b {
            0x1b => match bytes.get(i) {
                None | Some(0x1b) => out.push(key(KeyCode::Esc)),
                Some(b'[') => {
                    // A CSI sequence: to its final byte (0x40..=0x7e); Shift-Tab is `ESC [ Z`.
                    let start = i + 1;
                    let end = bytes[start..]
                        .iter()
                        .position(|b| (0x40..=0x7e).contains(b))
                        .map_or(bytes.len(), |p| start + p);
                    if end == start && bytes.get(end) == Some(&b'Z') {
                        out.push(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
                    }
                    i = end + 1;
                }
                // SS3 (`ESC O x`: keypad, F1-F4), or Alt and a key: skipped.
                Some(b'O') => i += 2,
                Some(_) => i += 1,
            },
            b'\r' | b'\n' => out.push(key(KeyCode::Enter)),
            b'\t' => out.push(key(KeyCode::Tab)),
            0x7f | 0x08 => out.push(key(KeyCode::Backspace)),
            0x01..=0x1a => out.push(KeyEvent::new(
                KeyCode::Char((b - 1 + b'a') as char),
                KeyModifiers::CONTROL,
            )),
            0x00..=0x1f => {}
            _ => {
                let len = match b {
                    0xc0..=0xdf => 2,
                    0xe0..=0xef => 3,
                    0xf0..=0xf7 => 4,
                    _ => 1,
                };
                let start = i - 1;
                if start + len > bytes.len() {
                    // Split between reads: kept for the next.
                    i = start;
                    break;
                }
                if let Ok(s) = std::str::from_utf8(&bytes[start..start + len])
                    && let Some(c) = s.chars().next()
                {
                    out.push(key(KeyCode::Char(c)));
                }
                i = start + len;
            }
        }
    }
    bytes.drain(..i.min(bytes.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(bytes: &[u8]) -> (Vec<(KeyCode, KeyModifiers)>, Vec<u8>) {
        let mut bytes = bytes.to_vec();
        let keys = keys(&mut bytes)
            .into_iter()
            .map(|k| (k.code, k.modifiers))
            .collect();
        (keys, bytes)
    }

    #[test]
    fn the_bytes_of_a_raw_terminal_are_the_keys_top_knows() {
        let none = KeyModifiers::NONE;
        assert_eq!(
            codes(b"q3/r\x7f\r\t\x1b[Z\x03").0,
            [
                (KeyCode::Char('q'), none),
                (KeyCode::Char('3'), none),
                (KeyCode::Char('/'), none),
                (KeyCode::Char('r'), none),
                (KeyCode::Backspace, none),
                (KeyCode::Enter, none),
                (KeyCode::Tab, none),
                (KeyCode::BackTab, KeyModifiers::SHIFT),
                (KeyCode::Char('c'), KeyModifiers::CONTROL),
            ]
        );
        // Esc alone; arrows and F1 skipped; a character split between two reads waits for its end.
        assert_eq!(codes(b"\x1b").0, [(KeyCode::Esc, none)]);
        assert_eq!(
            codes(b"\x1b[A\x1b[1;5C\x1bOPs").0,
            [(KeyCode::Char('s'), none)]
        );
        assert_eq!(codes("é".as_bytes()).0, [(KeyCode::Char('é'), none)]);
        assert_eq!(
            codes(&"aé".as_bytes()[..2]),
            (vec![(KeyCode::Char('a'), none)], vec![0xc3])
        );
    }
}
