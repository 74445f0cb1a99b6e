//! One OTLP/HTTP POST, made without ever waiting: the background thread begins it ([`Post::begin`]) and
//! moves it on at each look ([`Post::step`]) until it has an [`Outcome`]. The connection is closed after
//! each request (`Connection: close`): an export every few seconds needs no pool.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};

use crate::base::sys;
use crate::collector::net;

/// The status line and headers of an answer, at most: more is a broken collector.
const MAX_HEAD: usize = 16 << 10;

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A 2xx answer.
    Taken,
    /// Worth trying again later: no connection, a timeout, or 429, 502, 503, 504 (OTLP/HTTP's retryable
    /// answers); with the wait the collector asked for (`Retry-After`, seconds), if it did.
    Retry { why: String, after_s: Option<u64> },
    /// Refused for good (another 4xx or 5xx): the batch is dropped.
    Refused(String),
    /// No connection to this address (refused, unreachable): another of the host's addresses may do.
    Unreachable(String),
}

/// A request under way: its head here, its body the batch's (given at each step, never copied).
pub(crate) struct Post {
    stream: TcpStream,
    connected: bool,
    head: Vec<u8>,
    /// Bytes sent, of the head and then the body.
    sent: usize,
    answer: Vec<u8>,
}

impl Drop for Post {
    fn drop(&mut self) {
        net::untrack(sys::raw_of(&self.stream));
    }
}

/// The request's head: a POST of a body of `body_len` bytes to `path` on `authority`.
pub(crate) fn head(authority: &str, path: &str, body_len: usize) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: perfgraph/{}\r\n\
         Content-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION"),
        body_len
    )
    .into_bytes()
}

/// What an answer's head says: `None` until the head is whole.
pub(crate) fn outcome(answer: &[u8]) -> Option<Outcome> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&answer[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let code = status_line
        .split_ascii_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok());
    let after_s = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("retry-after")
            .then(|| value.trim().parse::<u64>().ok())?
    });
    let said = status_line.trim().to_owned();
    Some(match code {
        Some(200..=299) => Outcome::Taken,
        Some(429 | 502 | 503 | 504) => Outcome::Retry {
            why: format!("the collector answered {said:?}"),
            after_s,
        },
        Some(_) => Outcome::Refused(format!("the collector answered {said:?}")),
        None => Outcome::Refused(format!("not an HTTP answer: {said:?}")),
    })
}

/// An error in a few words ("connection refused"): the line it goes into fits a terminal's row.
pub(crate) fn short(e: &io::Error) -> String {
    let kind = e.kind().to_string();
    if matches!(kind.as_str(), "other error" | "uncategorized error") {
        e.to_string()
    } else {
        kind
    }
}

impl Post {
    /// Begins a request to `addr`: `head` (from [`head`]), then the body each [`step`](Post::step) is
    /// given.
    pub(crate) fn begin(addr: SocketAddr, head: Vec<u8>) -> io::Result<Post> {
        let stream = sys::connect_tcp(addr)?;
        net::track(sys::raw_of(&stream));
        Ok(Post {
            stream,
            connected: false,
            head,
            sent: 0,
            answer: Vec::new(),
        })
    }

    /// Moves the request on as far as it goes without waiting (`body`: the same bytes at every step);
    /// its outcome once it has one.
    pub(crate) fn step(&mut self, body: &[u8]) -> Option<Outcome> {
        let retry = |e: io::Error| {
            Some(Outcome::Retry {
                why: short(&e),
                after_s: None,
            })
        };
        if !self.connected {
            match sys::connected(&self.stream) {
                Ok(true) => self.connected = true,
                Ok(false) => return None,
                Err(e) => return Some(Outcome::Unreachable(short(&e))),
            }
        }
        let head = self.head.len();
        if self.sent < head {
            match sys::send_some(&self.stream, &self.head, &mut self.sent) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return retry(e),
            }
        }
        let mut of_body = self.sent - head;
        if of_body < body.len() {
            let sent = sys::send_some(&self.stream, body, &mut of_body);
            self.sent = head + of_body;
            match sent {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return retry(e),
            }
        }
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return outcome(&self.answer).or_else(|| {
                        retry(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the collector closed the connection without an answer",
                        ))
                    });
                }
                Ok(n) => {
                    self.answer.extend_from_slice(&buf[..n]);
                    if let Some(o) = outcome(&self.answer) {
                        return Some(o);
                    }
                    if self.answer.len() > MAX_HEAD {
                        return Some(Outcome::Refused("an answer head past 16 KiB".into()));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return retry(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_taken_retried_or_refused_as_otlp_says() {
        assert_eq!(outcome(b"HTTP/1.1 200 OK\r\nContent-Length: 0"), None);
        assert_eq!(
            outcome(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            Some(Outcome::Taken)
        );
        assert_eq!(
            outcome(b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 7\r\n\r\n"),
            Some(Outcome::Retry {
                why: "the collector answered \"HTTP/1.1 503 Service Unavailable\"".into(),
                after_s: Some(7)
            })
        );
        assert!(matches!(
            outcome(b"HTTP/1.1 400 Bad Request\r\n\r\n"),
            Some(Outcome::Refused(_))
        ));
        assert!(matches!(
            outcome(b"garbage\r\n\r\n"),
            Some(Outcome::Refused(_))
        ));
        let r = head("h:1", "/v1/metrics", 3);
        assert!(r.starts_with(b"POST /v1/metrics HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(r.ends_with(b"Content-Length: 3\r\nConnection: close\r\n\r\n"));
    }
}
