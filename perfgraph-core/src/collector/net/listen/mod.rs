//! The control socket (`PERFGRAPH_LISTEN`): the background thread listens on a private Unix socket and
//! answers `perfgraph ps`, `dump`, `trace` and `top` (the protocol: [`control`]).
//!
//! No thread of its own: between its passes the background thread accepts and reads, non-blocking, at
//! least every [`LISTEN_POLL`](super::LISTEN_POLL) (every [`BUSY_POLL`](super::BUSY_POLL) while a client is connected or has just asked:
//! [`Server::poll_within`]), and writes each reply as the client takes it.
//! Nothing here waits for a client. What a client can hold is bounded: [`MAX_CONNECTIONS`] at once (a new
//! one then closes the oldest that has not finished its request), [`MAX_REQUEST`] bytes of request,
//! [`REQUEST_TIMEOUT`] to send it, [`REPLY_TIMEOUT`] to take the reply, and [`MAX_REPLY_BYTES`] of
//! replies waiting in all. A peer of another user (`SO_PEERCRED`; root excepted) is refused at once.
//!
//! Nothing is inherited and nothing left behind: every descriptor is close-on-exec and above fd 2, a
//! forked child closes them all ([`close_in_child`](crate::collector::sockets::close_in_child)), the socket is removed at exit ([`Server::close`]),
//! and stale sockets of dead processes are removed at the next start ([`dir`]).

pub(crate) mod dir;
mod output;
pub(crate) mod status;
mod window;

use std::io::{self, Read};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

use super::{look_within, oldest_reading, track, untrack};
use crate::base::control::{self, MAX_REQUEST, Request};
use crate::base::sys;
pub(crate) use crate::collector::sockets::Peer;
pub(crate) use output::Listen;

/// Clients connected at once, at most.
pub const MAX_CONNECTIONS: usize = 16;

/// Time a client has to send its request line.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Time a client has to take its reply.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes of replies waiting for their clients, at most, all clients together: a request past it is
/// answered `error: busy`.
pub const MAX_REPLY_BYTES: usize = 256 << 20;

/// Pending connections the kernel queues for us.
const BACKLOG: i32 = 64;

/// A request read whole, for the collector to answer.
pub(crate) struct Asked {
    pub peer: Peer,
    pub request: Request,
}

enum State {
    /// The request line so far.
    Reading(Vec<u8>),
    /// The reply, and how much of it the client took.
    Writing { out: Vec<u8>, sent: usize },
}

struct Conn {
    peer: Peer,
    /// Monotonic ns of its accept (reading) or of its reply (writing).
    since: u64,
    state: State,
}

/// The listening socket and its clients, owned by the background thread.
pub(crate) struct Server {
    listener: UnixListener,
    path: PathBuf,
    uid: u32,
    conns: Vec<Conn>,
    /// Monotonic ns of the last request read.
    asked_ns: u64,
}

impl Server {
    /// Listens at `<directory>/<pid>.sock` (see [`dir`]). On failure, one warning line and `None`.
    pub(crate) fn open() -> Option<Server> {
        let uid = sys::effective_uid();
        let opened = dir::prepare(uid).and_then(|(dir, warning)| {
            let path = dir.join(control::socket_name(sys::process_id()));
            listen_at(&path)
                .map(|listener| (listener, path.clone(), warning))
                .map_err(|e| format!("cannot listen at {:?}: {e}", path.display().to_string()))
        });
        match opened {
            Ok((listener, path, warning)) => {
                if let Some(warning) = warning {
                    crate::collector::terminal::screen::warn(&warning);
                }
                track(std::os::fd::AsRawFd::as_raw_fd(&listener));
                Some(Server {
                    listener,
                    path,
                    uid,
                    conns: Vec::new(),
                    asked_ns: 0,
                })
            }
            Err(why) => {
                crate::collector::terminal::screen::warn(&format!(
                    "perfgraph: warning: no control socket (`perfgraph ps`, `dump`, `trace` and `top` will \
                     not see this process): {why}; PERFGRAPH_LISTEN=off turns it off"
                ));
                None
            }
        }
    }

    /// How long the background thread may sleep before it looks at the socket again.
    pub(crate) fn poll_within(&self, mono: u64) -> Duration {
        look_within(self.conns.is_empty(), self.asked_ns, mono)
    }

    /// Accepts what is pending, reads requests, writes replies, drops clients past their time. Returns
    /// the requests read whole, for the collector to answer with [`reply`](Server::reply) (or to keep
    /// the peer, a trace window).
    pub(crate) fn poll(&mut self, mono: u64) -> Vec<Asked> {
        self.accept(mono);
        let mut asked = Vec::new();
        let mut i = 0;
        while i < self.conns.len() {
            let conn = &mut self.conns[i];
            let keep = match &mut conn.state {
                State::Reading(line) => match read_line(&mut conn.peer.stream, line) {
                    Ok(None) => mono.saturating_sub(conn.since) < REQUEST_TIMEOUT.as_nanos() as u64,
                    Ok(Some(Ok(request))) => {
                        self.asked_ns = mono;
                        let conn = self.conns.swap_remove(i);
                        asked.push(Asked {
                            peer: conn.peer,
                            request,
                        });
                        continue;
                    }
                    Ok(Some(Err(why))) => {
                        conn.state = State::Writing {
                            out: error_reply(&why),
                            sent: 0,
                        };
                        conn.since = mono;
                        true
                    }
                    Err(_) => false,
                },
                State::Writing { out, sent } => {
                    match sys::send_some(&conn.peer.stream, out, sent) {
                        Ok(done) => {
                            !done
                                && mono.saturating_sub(conn.since) < REPLY_TIMEOUT.as_nanos() as u64
                        }
                        Err(_) => false,
                    }
                }
            };
            if keep {
                i += 1;
            } else {
                self.conns.swap_remove(i);
            }
        }
        asked
    }

    fn accept(&mut self, mono: u64) {
        // At most a queue's worth per pass: a flood of connections cannot keep the thread here.
        for _ in 0..BACKLOG {
            let stream = match sys::accept(&self.listener) {
                Ok(Some(s)) => s,
                Ok(None) | Err(_) => return,
            };
            let peer = Peer::new(stream);
            let uid = sys::peer_uid(&peer.stream);
            if uid != Some(self.uid) && uid != Some(0) {
                // What it sent so far is read and dropped first: closed with unread data, the socket
                // would reset the connection before the client reads why.
                let _ = std::io::Read::read(&mut &peer.stream, &mut [0u8; MAX_REQUEST]);
                let _ = sys::send(&peer.stream, &error_reply(control::REFUSED));
                continue;
            }
            if self.conns.len() >= MAX_CONNECTIONS {
                // The oldest that has not finished its request makes room; failing that, the newcomer
                // is told.
                let reading = oldest_reading(
                    self.conns
                        .iter()
                        .map(|c| (c.since, matches!(c.state, State::Reading(_)))),
                );
                match reading {
                    Some(i) => {
                        self.conns.swap_remove(i);
                    }
                    None => {
                        let _ = sys::send(&peer.stream, &error_reply("busy: too many clients"));
                        continue;
                    }
                }
            }
            self.conns.push(Conn {
                peer,
                since: mono,
                state: State::Reading(Vec::new()),
            });
        }
    }

    /// Bytes of replies waiting for their clients.
    fn waiting_bytes(&self) -> usize {
        self.conns
            .iter()
            .map(|c| match &c.state {
                State::Writing { out, sent } => out.len() - sent,
                State::Reading(_) => 0,
            })
            .sum()
    }

    /// Whether a reply of about `bytes` more fits under [`MAX_REPLY_BYTES`].
    pub(crate) fn has_room(&self, bytes: usize) -> bool {
        self.waiting_bytes() + bytes <= MAX_REPLY_BYTES
    }

    /// Answers `peer` with `body` after `ok`, or with an error line, written as the client takes it.
    pub(crate) fn reply(&mut self, peer: Peer, reply: Result<Vec<u8>, String>, mono: u64) {
        let out = match reply {
            Ok(body) => {
                let mut out = Vec::with_capacity(body.len() + 3);
                out.extend_from_slice(b"ok\n");
                out.extend_from_slice(&body);
                out
            }
            Err(why) => error_reply(&why),
        };
        self.send(peer, out, mono);
    }

    /// Writes `out` to `peer` as it takes it (the rest of a trace window's stream, say).
    pub(crate) fn send(&mut self, peer: Peer, out: Vec<u8>, mono: u64) {
        let mut sent = 0;
        if matches!(sys::send_some(&peer.stream, &out, &mut sent), Ok(false))
            && self.conns.len() < MAX_CONNECTIONS + 1
        {
            self.conns.push(Conn {
                peer,
                since: mono,
                state: State::Writing { out, sent },
            });
        }
    }

    /// At exit: stops listening and removes the socket, first thing, so no client connects to a process
    /// that will not answer. Replies still waiting get what the exit allows: nothing more.
    pub(crate) fn close(self) {
        sys::remove_socket(&self.path);
        untrack(std::os::fd::AsRawFd::as_raw_fd(&self.listener));
    }
}

/// Listens at `path`. A socket already there is replaced only if it is stale (it refuses a connection:
/// ours from a process of the same pid that died, or that `exec`ed a program without us); one that takes
/// connections is a live process's of the same pid, of another PID namespace, and is left alone.
fn listen_at(path: &std::path::Path) -> io::Result<UnixListener> {
    match sys::listen(path, BACKLOG) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && sys::refuses(path) => {
            sys::remove_socket(path);
            sys::listen(path, BACKLOG)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(io::Error::new(
            e.kind(),
            "a live process listens there, of the same pid (another PID namespace?)",
        )),
        other => other,
    }
}

/// `error: <why>\n`, `why` on one line.
fn error_reply(why: &str) -> Vec<u8> {
    let mut out = b"error: ".to_vec();
    out.extend(why.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
    out.push(b'\n');
    out
}

/// Reads what the client sent; `Some` once its line is whole (or too long, or never to end), `Err` when
/// the client is gone or the connection failed.
fn read_line(
    stream: &mut UnixStream,
    line: &mut Vec<u8>,
) -> io::Result<Option<Result<Request, String>>> {
    let mut buf = [0u8; MAX_REQUEST];
    loop {
        let room = MAX_REQUEST - line.len();
        match stream.read(&mut buf[..room.max(1)]) {
            Ok(0) => {
                return Ok(Some(Err(if line.is_empty() {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                } else {
                    "request ended without a newline".to_owned()
                })));
            }
            Ok(n) => line.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if let Some(end) = line.iter().position(|&b| b == b'\n') {
            return Ok(Some(control::parse(&line[..end])));
        }
        if line.len() >= MAX_REQUEST {
            return Ok(Some(control::parse(line)));
        }
    }
}
