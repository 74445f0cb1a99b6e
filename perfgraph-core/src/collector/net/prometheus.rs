//! The Prometheus endpoint (`PERFGRAPH_PROMETHEUS=127.0.0.1:9464`): the background thread serves `GET
//! /metrics` (the text of [`export::prometheus`](crate::export::prometheus)) on the address it was given,
//! and nothing else: another path is 404, another method 405.
//!
//! As the control socket ([`listen`](super::listen)), no thread of its own and never a wait: the
//! background thread accepts, reads and writes between its passes, non-blocking; a scrape is answered at
//! its next look (at most every 200 ms, every 5 ms for 2 s after one). Bounded: [`MAX_CLIENTS`] at once (a
//! new one closes the oldest still sending its request), [`MAX_REQUEST`] bytes of request head (past it,
//! `431 Request Header Fields Too Large`), 2 s to send it and 10 s to take the answer. An answer is followed
//! by the end of our side of the connection, then what the client still sends is read and dropped until it
//! closes (2 s at most): closed with unread bytes, a socket resets the connection, and the client would
//! lose the answer. Descriptors close-on-exec, above fd 2, closed in a forked child. A
//! failure to bind is one warning line; port 0 (the system picks one) is one line naming the port bound.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use super as net;
use crate::base::config::Config;
use crate::base::sys;
use crate::collector::output::{Look, Output};

/// Clients at once, at most.
pub const MAX_CLIENTS: usize = 16;

/// Longest request head (request line and headers), bytes.
pub const MAX_REQUEST: usize = 8192;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client that has its answer may take to close before it is closed on.
const LINGER_TIMEOUT: Duration = Duration::from_secs(2);
/// Bytes read and dropped per pass from a client that has its answer.
const LINGER_READ: usize = 64 << 10;

/// A client: its request so far, or its answer and how much of it it took; then, `lingering`, its answer
/// sent and our side shut, until it closes.
struct Client {
    stream: TcpStream,
    since: u64,
    request: Vec<u8>,
    answer: Option<(Vec<u8>, usize)>,
    lingering: bool,
}

impl Drop for Client {
    fn drop(&mut self) {
        net::untrack(sys::raw_of(&self.stream));
    }
}

/// The output: the endpoint while it listens, and the settings a scrape takes a report with.
pub(crate) struct Prometheus {
    endpoint: Option<Endpoint>,
    config: Config,
}

impl Prometheus {
    /// The endpoint `config` asks for (`PERFGRAPH_PROMETHEUS` set), or `None`.
    pub(crate) fn of(config: &Config) -> Option<Prometheus> {
        Some(Prometheus {
            endpoint: Some(Endpoint::open(config.prometheus?)?),
            config: config.clone(),
        })
    }
}

impl Output for Prometheus {
    /// Serves the scrapes.
    fn poll(&mut self, mono: u64) -> Look {
        let Some(endpoint) = &mut self.endpoint else {
            return Look::Never;
        };
        let config = &self.config;
        endpoint.poll(mono, &mut || {
            let (report, own) = net::figures(config);
            crate::export::prometheus::render(&report, own)
        });
        Look::Within(endpoint.poll_within(mono))
    }

    /// At exit: stops listening.
    fn close(&mut self) {
        if let Some(endpoint) = self.endpoint.take() {
            endpoint.close();
        }
    }
}

/// The endpoint, owned by the background thread.
struct Endpoint {
    listener: TcpListener,
    clients: Vec<Client>,
    /// Monotonic ns of the last request read.
    asked_ns: u64,
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    Metrics,
    Other(&'static str),
}

/// Reads a request head (up to its blank line): `GET /metrics` (a query string allowed) or the status to
/// answer with.
fn parse(head: &[u8]) -> Asked {
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_ascii_whitespace();
    let (method, target) = (words.next(), words.next());
    match (method, target) {
        (Some("GET"), Some(t)) if t == "/metrics" || t.starts_with("/metrics?") => Asked::Metrics,
        (Some("GET"), Some(_)) => Asked::Other("404 Not Found"),
        (Some(_), Some(_)) => Asked::Other("405 Method Not Allowed"),
        _ => Asked::Other("400 Bad Request"),
    }
}

/// An HTTP/1.1 answer that closes the connection.
fn answer(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl Endpoint {
    /// Binds `addr`; on failure, one warning line and `None`. For port 0, one line says which port the
    /// system chose: nobody could scrape it otherwise.
    fn open(addr: SocketAddr) -> Option<Endpoint> {
        match sys::listen_tcp(addr) {
            Ok(listener) => {
                net::track(sys::raw_of(&listener));
                if addr.port() == 0
                    && let Ok(bound) = listener.local_addr()
                {
                    crate::collector::terminal::screen::warn(&format!(
                        "perfgraph: Prometheus metrics at http://{bound}/metrics"
                    ));
                }
                Some(Endpoint {
                    listener,
                    clients: Vec::new(),
                    asked_ns: 0,
                })
            }
            Err(e) => {
                crate::collector::terminal::screen::warn(&format!(
                    "perfgraph: warning: PERFGRAPH_PROMETHEUS: cannot listen at {addr}: {e}; no /metrics"
                ));
                None
            }
        }
    }

    /// How long the background thread may sleep before it looks again.
    fn poll_within(&self, mono: u64) -> Duration {
        net::look_within(self.clients.is_empty(), self.asked_ns, mono)
    }

    /// Accepts, reads, answers (`metrics` renders the text, only when a scrape asks for it), writes,
    /// and drops clients past their time.
    fn poll(&mut self, mono: u64, metrics: &mut dyn FnMut() -> String) {
        for _ in 0..MAX_CLIENTS {
            let Ok(Some(stream)) = sys::accept_tcp(&self.listener) else {
                break;
            };
            net::track(sys::raw_of(&stream));
            if self.clients.len() >= MAX_CLIENTS {
                // One still sending its request, or done with but for its close, makes room.
                let oldest = net::oldest_reading(
                    self.clients
                        .iter()
                        .map(|c| (c.since, c.answer.is_none() || c.lingering)),
                );
                match oldest {
                    Some(i) => {
                        self.clients.swap_remove(i);
                    }
                    None => {
                        net::untrack(sys::raw_of(&stream));
                        continue;
                    }
                }
            }
            self.clients.push(Client {
                stream,
                since: mono,
                request: Vec::new(),
                answer: None,
                lingering: false,
            });
        }
        let mut i = 0;
        while i < self.clients.len() {
            let keep = self.step(i, mono, metrics);
            if keep {
                i += 1;
            } else {
                self.clients.swap_remove(i);
            }
        }
    }

    /// One client's turn; `false` when it is done with.
    fn step(&mut self, i: usize, mono: u64, metrics: &mut dyn FnMut() -> String) -> bool {
        let c = &mut self.clients[i];
        if c.lingering {
            return linger(c, mono);
        }
        if c.answer.is_none() {
            let mut buf = [0u8; 4096];
            loop {
                match c.stream.read(&mut buf) {
                    Ok(0) => return false,
                    Ok(n) => c.request.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return false,
                }
                if c.request.len() >= MAX_REQUEST {
                    break;
                }
            }
            let whole = c.request.windows(4).any(|w| w == b"\r\n\r\n")
                || c.request.windows(2).any(|w| w == b"\n\n");
            if !whole && c.request.len() < MAX_REQUEST {
                return mono.saturating_sub(c.since) < REQUEST_TIMEOUT.as_nanos() as u64;
            }
            let out = if !whole {
                answer("431 Request Header Fields Too Large", "")
            } else {
                match parse(&c.request) {
                    Asked::Metrics => answer("200 OK", &metrics()),
                    Asked::Other(status) => answer(status, "only GET /metrics is served here\n"),
                }
            };
            self.asked_ns = mono;
            let c = &mut self.clients[i];
            c.answer = Some((out, 0));
            c.since = mono;
        }
        let c = &mut self.clients[i];
        let Some((out, sent)) = &mut c.answer else {
            return true;
        };
        match sys::send_some(&c.stream, out, sent) {
            Ok(false) => mono.saturating_sub(c.since) < REPLY_TIMEOUT.as_nanos() as u64,
            Ok(true) => {
                // The answer is out: our side ends (the client reads it to the end), and what the client
                // still sends (the rest of a head too long) is read until it closes.
                c.answer = None;
                c.lingering = c.stream.shutdown(std::net::Shutdown::Write).is_ok();
                c.since = mono;
                c.lingering && linger(c, mono)
            }
            Err(_) => false,
        }
    }

    /// At exit: stops listening.
    fn close(self) {
        net::untrack(sys::raw_of(&self.listener));
    }
}

/// A client that has its answer: reads and drops what it sends (at most [`LINGER_READ`] a pass); `false`
/// once it has closed, failed or taken [`LINGER_TIMEOUT`].
fn linger(c: &mut Client, mono: u64) -> bool {
    let mut buf = [0u8; 4096];
    let mut read = 0;
    while read < LINGER_READ {
        match c.stream.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => read += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    mono.saturating_sub(c.since) < LINGER_TIMEOUT.as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_metrics_is_served() {
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
            Asked::Metrics
        );
        assert_eq!(
            parse(b"GET /metrics?name[]=x HTTP/1.1\r\n\r\n"),
            Asked::Metrics
        );
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\n\r\n"),
            Asked::Other("404 Not Found")
        );
        assert_eq!(
            parse(b"POST /metrics HTTP/1.1\r\n\r\n"),
            Asked::Other("405 Method Not Allowed")
        );
        assert_eq!(parse(b"\xff\r\n\r\n"), Asked::Other("400 Bad Request"));
        assert_eq!(parse(b""), Asked::Other("400 Bad Request"));
    }
}
