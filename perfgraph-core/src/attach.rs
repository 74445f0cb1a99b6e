//! Looking into a running program: the client side of the control socket every instrumented process
//! listens on (`PERFGRAPH_LISTEN`, on by default), what `perfgraph ps`, `dump`, `trace` and `top` use.
//!
//! Each process listens on `<pid>.sock` in a private directory ([`directory`]) of the user's, answered by
//! its background thread; only the same user (or root) may ask, and only for snapshots.
//!
//! ```no_run
//! use perfgraph_core::attach;
//!
//! for p in attach::processes() {
//!     println!("{} {} ({} threads)", p.pid, p.program, p.threads.len());
//!     let report = attach::report(p.pid).unwrap();
//!     print!("{}", report);
//! }
//! ```

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::base::control::{self, Request};
use crate::base::sys;
use crate::data::Report;

/// How long a process has to answer `status` or `dump` before the client gives up.
///
/// ```
/// assert_eq!(perfgraph_core::attach::ANSWER_TIMEOUT.as_secs(), 30);
/// ```
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The directory of the sockets: `$XDG_RUNTIME_DIR/perfgraph`, else `/tmp/perfgraph-<uid>`.
///
/// ```
/// let dir = perfgraph_core::attach::directory();
/// assert!(dir.ends_with("perfgraph") || dir.to_string_lossy().starts_with("/tmp/perfgraph-"));
/// ```
pub fn directory() -> PathBuf {
    control::directory(
        std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
        sys::effective_uid(),
    )
}

/// A running process as its `status` describes it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Status {
    /// Its process id.
    pub pid: u32,
    /// Its program's name.
    pub program: String,
    /// Its host's name.
    pub host: String,
    /// Its rank, under a launcher that sets one (0 otherwise).
    pub rank: u32,
    /// Wall-clock time of its runtime's start, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// Time since its runtime's start, ns.
    pub wall_ns: u64,
    /// Its resident memory, bytes, as last sampled.
    pub rss_bytes: u64,
    /// Its heap (net bytes allocated), where it counts allocations (`CountingAllocator`).
    pub heap_bytes: Option<i64>,
    /// Sections registered so far.
    pub sections: u64,
    /// Threads that recorded and exited.
    pub exited_threads: u64,
    /// Its live threads that recorded, in order of their first section.
    pub threads: Vec<LiveThread>,
}

/// A live thread of a [`Status`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LiveThread {
    /// Dense number in order of first section.
    pub index: u32,
    /// Its name, as the reports show it.
    pub name: String,
    /// Whether it is the main thread.
    pub main: bool,
    /// From its first section to now, ns.
    pub alive_ns: u64,
    /// CPU time it used since its first section, ns.
    pub cpu_ns: u64,
    /// What it runs now, outermost first.
    pub running: Vec<LiveSection>,
}

/// A section running on a [`LiveThread`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LiveSection {
    /// The section's name.
    pub name: String,
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Time since it started, ns.
    pub elapsed_ns: u64,
}

/// Every process of this user that answers on its socket, by pid. Stale sockets (that refuse a connection:
/// their process is gone) are removed on the way.
///
/// ```no_run
/// for p in perfgraph_core::attach::processes() {
///     println!("{:>7} {} {} threads", p.pid, p.program, p.threads.len());
/// }
/// ```
pub fn processes() -> Vec<Status> {
    let dir = directory();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(control::pid_of))
        .collect();
    pids.sort_unstable();
    // Every request goes out first: each process answers at its background thread's next look (up to
    // 200 ms), all of them at once.
    let asked: Vec<(u32, io::Result<BufReader<UnixStream>>)> = pids
        .into_iter()
        .map(|pid| (pid, send(pid, Request::Status, ANSWER_TIMEOUT)))
        .collect();
    let mut found = Vec::new();
    for (pid, sent) in asked {
        match sent {
            // Stale: nothing listens on it (a pid that does not exist here proves nothing: a process of
            // another PID namespace may share the directory).
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                sys::remove_socket(&dir.join(control::socket_name(pid)));
            }
            sent => {
                if let Ok(s) = sent
                    .and_then(|reader| read_answer(pid, reader))
                    .and_then(|r| parse_status(pid, r))
                {
                    found.push(s);
                }
            }
        }
    }
    found
}

/// Asks process `pid` for its [`Status`].
///
/// ```no_run
/// let s = perfgraph_core::attach::status(12345)?;
/// for t in &s.threads {
///     let now: Vec<&str> = t.running.iter().map(|r| r.name.as_str()).collect();
///     println!("{}: {}", t.name, now.join(" > "));
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn status(pid: u32) -> io::Result<Status> {
    parse_status(pid, ask(pid, Request::Status, ANSWER_TIMEOUT)?)
}

fn parse_status(pid: u32, mut answer: BufReader<UnixStream>) -> io::Result<Status> {
    let mut body = Vec::new();
    answer.read_to_end(&mut body)?;
    let v: Value = serde_json::from_slice(&body).map_err(|e| invalid(pid, &e.to_string()))?;
    if v["format"] != "perfgraph-status" {
        return Err(invalid(pid, "not a perfgraph status"));
    }
    Ok(read_status(&v))
}

/// Process `pid`'s call-tree JSON now, in `PERFGRAPH_JSON`'s schema, running sections counted with their
/// time so far (a node's `running`).
///
/// ```no_run
/// std::fs::write("now.json", perfgraph_core::attach::dump(12345)?)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn dump(pid: u32) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    ask(pid, Request::Dump, ANSWER_TIMEOUT)?.read_to_end(&mut body)?;
    Ok(body)
}

/// Process `pid`'s report now: [`dump`] read back.
///
/// ```no_run
/// let r = perfgraph_core::attach::report(12345)?;
/// print!("{}", r.graph_table());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn report(pid: u32) -> io::Result<Report> {
    let body = dump(pid)?;
    Report::read_json(&body[..]).map_err(|e| invalid(pid, &e.to_string()))
}

/// Has process `pid` trace the next `seconds` seconds (Perfetto protobuf if `perfetto`, else Chrome
/// JSON), and writes the trace to `out` as it comes. Returns the bytes written. The trace is complete
/// when its last event is the closing one, which says what it lacks.
///
/// ```no_run
/// let mut file = std::fs::File::create("next-10s.pftrace")?;
/// perfgraph_core::attach::trace(12345, 10.0, true, &mut file)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn trace(pid: u32, seconds: f64, perfetto: bool, out: &mut dyn Write) -> io::Result<u64> {
    let wait = Duration::from_secs_f64(seconds.max(0.0)) + ANSWER_TIMEOUT;
    let mut reader = ask(pid, Request::Trace { seconds, perfetto }, wait)?;
    io::copy(&mut reader, out)
}

/// Connects to process `pid`, sends `request`, and reads the answer's first line: the rest of the answer
/// follows in the reader returned; an `error:` line is the error.
fn ask(pid: u32, request: Request, timeout: Duration) -> io::Result<BufReader<UnixStream>> {
    read_answer(pid, send(pid, request, timeout)?)
}

/// Whether process `pid` is there and runs as another user (its `/proc` entry's owner).
fn another_users(pid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() != sys::effective_uid())
}

/// Process `pid` is there, and is not this user's to ask.
fn refused(pid: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("process {pid} is another user's (permission denied)"),
    )
}

/// Connects to process `pid` and sends `request`; the answer is for [`read_answer`].
fn send(pid: u32, request: Request, timeout: Duration) -> io::Result<BufReader<UnixStream>> {
    let path = directory().join(control::socket_name(pid));
    let stream = sys::connect(&path).map_err(|e| {
        // Another user's process listens in that user's directory: not ours (not found), or one that
        // keeps us out (EACCES). Only that user may ask, or root through that directory.
        let theirs = another_users(pid);
        let why = match e.kind() {
            io::ErrorKind::PermissionDenied if theirs => return refused(pid),
            io::ErrorKind::NotFound if theirs && sys::effective_uid() != 0 => return refused(pid),
            io::ErrorKind::NotFound if theirs => format!(
                "another user's, whose socket is not in {} (that user's XDG_RUNTIME_DIR?)",
                directory().display()
            ),
            io::ErrorKind::NotFound => {
                "no such process listening (PERFGRAPH_LISTEN on?)".to_owned()
            }
            io::ErrorKind::ConnectionRefused => "it does not listen any more".to_owned(),
            io::ErrorKind::WouldBlock => "it is too busy to answer".to_owned(),
            _ => e.to_string(),
        };
        io::Error::new(e.kind(), format!("process {pid}: {why}"))
    })?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    // `send` without SIGPIPE: a program of its own that uses this client must not die of a process that
    // closed first.
    let line = request.line();
    // The stream blocks (with a write timeout): not all sent is that timeout.
    let written = sys::send_some(&stream, line.as_bytes(), &mut 0).and_then(|all| {
        all.then_some(())
            .ok_or_else(|| io::Error::from(io::ErrorKind::WouldBlock))
    });
    match written {
        // A process that refuses (another user's, or too busy) answers with its line and closes, maybe
        // before the request is sent: its line is still there to read.
        Err(e)
            if e.kind() != io::ErrorKind::BrokenPipe
                && e.kind() != io::ErrorKind::ConnectionReset =>
        {
            return Err(io::Error::new(e.kind(), format!("process {pid}: {e}")));
        }
        _ => {}
    }
    Ok(BufReader::new(stream))
}

/// Reads an answer's first line: `ok` leaves the rest in the reader; an `error:` line is the error.
fn read_answer(pid: u32, mut reader: BufReader<UnixStream>) -> io::Result<BufReader<UnixStream>> {
    let mut first = Vec::new();
    let read = (&mut reader)
        .take(control::MAX_REQUEST as u64 * 4)
        .read_until(b'\n', &mut first);
    // A refusal's line may be followed by a reset (the process closed with our request unread).
    if let Err(e) = read
        && !first.ends_with(b"\n")
    {
        return Err(io::Error::new(e.kind(), format!("process {pid}: {e}")));
    }
    match first.as_slice() {
        b"ok\n" => Ok(reader),
        line => {
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end();
            if text.strip_prefix("error: ") == Some(control::REFUSED) {
                return Err(refused(pid));
            }
            let why = text.strip_prefix("error: ").unwrap_or(if text.is_empty() {
                "no answer (it exited?)"
            } else {
                text
            });
            Err(io::Error::other(format!("process {pid}: {why}")))
        }
    }
}

fn invalid(pid: u32, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("process {pid}: {why}"))
}

fn read_status(v: &Value) -> Status {
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let threads = v["threads"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| LiveThread {
                    index: u(&t["index"]) as u32,
                    name: s(&t["name"]),
                    main: t["main"].as_bool().unwrap_or(false),
                    alive_ns: u(&t["alive_ns"]),
                    cpu_ns: u(&t["cpu_ns"]),
                    running: t["running"]
                        .as_array()
                        .map(|r| {
                            r.iter()
                                .map(|f| LiveSection {
                                    name: s(&f["name"]),
                                    depth: u(&f["depth"]) as u32,
                                    elapsed_ns: u(&f["elapsed_ns"]),
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Status {
        pid: u(&v["pid"]) as u32,
        program: s(&v["program"]),
        host: s(&v["host"]),
        rank: u(&v["rank"]) as u32,
        start_unix_ns: u(&v["start_unix_ns"]),
        wall_ns: u(&v["wall_ns"]),
        rss_bytes: u(&v["rss_bytes"]),
        heap_bytes: v["heap_bytes"].as_i64(),
        sections: u(&v["sections"]),
        exited_threads: u(&v["exited_threads"]),
        threads,
    }
}
