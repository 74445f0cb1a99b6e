//! The sockets the background thread holds (the control socket's listener and clients, the Prometheus
//! endpoint's, the OTLP export's request): the list of their descriptors a forked child closes, and a
//! client's connection ([`Peer`]), tracked in it while it lives. Below the trace and the files, which
//! write a trace window to a client's connection, and the network wing (`net/`), which makes them.

#[cfg(feature = "listen")]
use std::io;
#[cfg(any(feature = "listen", feature = "prometheus", feature = "otlp"))]
use std::os::fd::RawFd;
#[cfg(feature = "listen")]
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::base::sys;

/// Descriptors held at once, at most: the control socket's listener, its 16 clients, a trace window's
/// and the second one that watches it; the Prometheus endpoint's listener and 16 clients; the OTLP
/// export's request.
const SLOTS: usize = 2 * 16 + 5;

/// The descriptors the background thread holds for the control socket, the Prometheus endpoint and the
/// OTLP export's request, for a forked child to close: -1 is a free slot.
static FDS: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];

#[cfg(any(feature = "listen", feature = "prometheus", feature = "otlp"))]
pub(crate) fn track(fd: RawFd) {
    for slot in &FDS {
        // Relaxed: read only by a forked child, in the thread that forked, which sees the memory as the
        // fork found it.
        if slot
            .compare_exchange(-1, fd, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

#[cfg(any(feature = "listen", feature = "prometheus", feature = "otlp"))]
pub(crate) fn untrack(fd: RawFd) {
    for slot in &FDS {
        if slot
            .compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// In a forked child ([`fork`](super::fork)): closes the parent's socket descriptors, so a client's
/// connection ends with the parent, and the child's `exec` or life holds nothing of ours. Async-signal-safe.
pub(crate) fn close_in_child() {
    for slot in &FDS {
        let fd = slot.swap(-1, Ordering::Relaxed);
        if fd >= 0 {
            sys::close(fd);
        }
    }
}

/// One client's connection; its descriptor is tracked for [`close_in_child`] while it lives.
#[cfg(feature = "listen")]
pub(crate) struct Peer {
    pub(crate) stream: UnixStream,
}

#[cfg(feature = "listen")]
impl Peer {
    pub(crate) fn new(stream: UnixStream) -> Peer {
        track(sys::raw_of(&stream));
        Peer { stream }
    }

    /// The connection, to write to (non-blocking).
    pub(crate) fn stream(&mut self) -> &mut UnixStream {
        &mut self.stream
    }

    /// A second descriptor of the same connection (tracked as well), to watch whether the client is still
    /// there ([`gone`](Peer::gone)) while this one is written elsewhere (a trace window's stream).
    pub(crate) fn watcher(&self) -> io::Result<Peer> {
        self.stream.try_clone().map(Peer::new)
    }

    /// Whether the client has gone: it closed its end (it exited, was killed, or gave up: a `perfgraph
    /// trace` whose disk is full) or the connection was reset. Never waits.
    pub(crate) fn gone(&self) -> bool {
        sys::hung_up(&self.stream)
    }
}

#[cfg(feature = "listen")]
impl Drop for Peer {
    fn drop(&mut self) {
        untrack(sys::raw_of(&self.stream));
    }
}
