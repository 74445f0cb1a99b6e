//! An answer read within its bounds: its first line within [`ANSWER_TIMEOUT`](super::ANSWER_TIMEOUT) of
//! the request (a process that sends nothing is not responding: stopped, or hung), then the whole of it by a
//! deadline and within a size. A process that sends slowly, or without end, costs the client that time and
//! that memory, no more.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Longest first line read (`ok` or `error: <why>`).
const MAX_FIRST_LINE: u64 = 1024;

/// The error of a process that sent nothing within [`super::ANSWER_TIMEOUT`]: `ps` shows it as stopped.
#[derive(Debug)]
pub(super) struct NotResponding {
    pub pid: u32,
}

impl fmt::Display for NotResponding {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "process {} is not responding (stopped?): nothing within {} s",
            self.pid,
            super::ANSWER_TIMEOUT.as_secs_f64()
        )
    }
}

impl std::error::Error for NotResponding {}

/// Whether `e` says the process did not answer at all within [`super::ANSWER_TIMEOUT`].
pub(super) fn not_responding(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|e| e.is::<NotResponding>())
}

/// The answer's size limit: bytes, and the constant that states it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limit {
    pub bytes: u64,
    pub name: &'static str,
}

/// A connection's answer as it comes, held to a deadline and a size.
pub(super) struct Answer {
    stream: UnixStream,
    pid: u32,
    /// When the request was sent.
    asked: Instant,
    /// The first line's, then the whole answer's.
    deadline: Instant,
    whole: Duration,
    limit: Limit,
    /// Bytes still allowed.
    left: u64,
    /// Still reading the first line.
    first: bool,
}

impl Answer {
    /// The answer to a request sent at `asked` on `stream`: whole within `whole` of it, at most `limit`.
    pub(super) fn new(
        stream: UnixStream,
        pid: u32,
        asked: Instant,
        whole: Duration,
        limit: Limit,
    ) -> Answer {
        Answer {
            stream,
            pid,
            asked,
            deadline: asked + super::ANSWER_TIMEOUT.min(whole),
            whole,
            limit,
            left: MAX_FIRST_LINE,
            first: true,
        }
    }

    fn late(&self) -> io::Error {
        if self.first {
            return io::Error::new(io::ErrorKind::TimedOut, NotResponding { pid: self.pid });
        }
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "process {}: its answer did not come whole within {} s",
                self.pid,
                self.whole.as_secs_f64()
            ),
        )
    }
}

impl Read for Answer {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let wait = self.deadline.saturating_duration_since(Instant::now());
        if wait.is_zero() {
            return Err(self.late());
        }
        if self.first && self.left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "process {}: its first line is longer than {MAX_FIRST_LINE} bytes",
                    self.pid
                ),
            ));
        }
        self.stream.set_read_timeout(Some(wait))?;
        // The first line's reads stop at its limit (what they take past its newline is the body's, and
        // counts against the body's limit); the body's take one byte past it, which tells it is too large.
        let allowed = if self.first { self.left } else { self.left + 1 };
        let room = buf
            .len()
            .min(usize::try_from(allowed).unwrap_or(usize::MAX));
        let n = loop {
            match self.stream.read(&mut buf[..room]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(self.late());
                }
                Err(e) => return Err(e),
            }
        };
        if n as u64 > self.left {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "process {}: its answer is larger than {} bytes ({})",
                    self.pid, self.limit.bytes, self.limit.name
                ),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Reads an answer's first line: `Ok` leaves the rest (the body, held to the answer's limit and deadline)
/// in the reader; an `error:` line is the error, read by `refusal`.
pub(super) fn first_line(
    mut reader: BufReader<Answer>,
    refusal: impl Fn(&str) -> io::Error,
) -> io::Result<BufReader<Answer>> {
    let pid = reader.get_ref().pid;
    let mut first = Vec::new();
    let read = reader.read_until(b'\n', &mut first);
    // A refusal's line may be followed by a reset (the process closed with our request unread).
    if let Err(e) = read
        && !first.ends_with(b"\n")
    {
        if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::InvalidData {
            return Err(e);
        }
        return Err(io::Error::new(e.kind(), format!("process {pid}: {e}")));
    }
    if first.as_slice() == b"ok\n" {
        // The body: what is buffered already counts against its limit.
        let buffered = reader.buffer().len() as u64;
        let answer = reader.get_mut();
        answer.first = false;
        answer.deadline = answer.asked + answer.whole;
        answer.left = answer.limit.bytes.saturating_sub(buffered);
        return Ok(reader);
    }
    let text = String::from_utf8_lossy(&first);
    let text = text.trim_end();
    match text.strip_prefix("error: ") {
        Some(why) => Err(refusal(why)),
        None if text.is_empty() => Err(io::Error::other(format!(
            "process {pid}: no answer (it exited?)"
        ))),
        None => Err(io::Error::other(format!(
            "process {pid}: not a perfgraph answer"
        ))),
    }
}
