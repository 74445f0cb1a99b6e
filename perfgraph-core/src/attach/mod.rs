//! Looking into a running program: the client side of the control socket every instrumented process
//! listens on (`PERFGRAPH_LISTEN`, on by default), what `perfgraph ps`, `dump`, `trace` and `top` use.
//!
//! Each process listens on `<pid>.sock` in a private directory ([`directory`]) of the user's, answered by
//! its background thread; only the same user (or root) may ask, and only for snapshots.
//!
//! The client trusts what it reads no more than it must. It looks only in a directory that is the user's
//! own (not a symbolic link, owned by the user, mode 0700: a directory another user made first, say
//! `/tmp/perfgraph-<uid>`, is refused with one line, `… is not yours (owner 1001): not trusted`), and talks
//! only to a process that runs as that directory's owner or as root (`SO_PEERCRED`). Every answer is held to
//! bounds: its first line within [`ANSWER_TIMEOUT`] (else the process is not responding: stopped, or
//! hung), the whole of it within [`STATUS_DEADLINE`] or [`DUMP_DEADLINE`], at most [`MAX_STATUS_BYTES`]
//! or [`MAX_DUMP_BYTES`], a status at most [`MAX_STATUS_THREADS`] threads and [`MAX_STATUS_SECTIONS`]
//! running sections, a report [`MAX_DUMP_NODES`] nodes, names at most [`Report::MAX_JSON_NAME_BYTES`].
//! Names are as the process sent them: print them through [`text::escape`].
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

mod answer;
mod status;
mod trust;

use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::base::control::{self, Request};
use crate::base::{sys, text};
use crate::data::Report;
use answer::{Answer, Limit};
use trust::{Place, Places};

/// How long a process has to start answering (its first line): one that sends nothing by then is not
/// responding (stopped by Ctrl-Z or a debugger, or hung), and `perfgraph ps` shows it as such. A process
/// answers at its background thread's next look at the socket, within 200 ms.
///
/// ```
/// assert_eq!(perfgraph_core::attach::ANSWER_TIMEOUT.as_secs(), 1);
/// ```
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a whole `status` answer may take, from the request: a process that sends it slower (a byte at
/// a time, say) is given up on.
///
/// ```
/// assert_eq!(perfgraph_core::attach::STATUS_DEADLINE.as_secs(), 5);
/// ```
pub const STATUS_DEADLINE: Duration = Duration::from_secs(5);

/// How long a whole `dump` answer may take, from the request (the process gives a client as long to take
/// it); a trace window's, its length and this.
///
/// ```
/// assert_eq!(perfgraph_core::attach::DUMP_DEADLINE.as_secs(), 30);
/// ```
pub const DUMP_DEADLINE: Duration = Duration::from_secs(30);

/// Largest `status` answer read, bytes (8 MiB: a thousand threads 30 sections deep take under 2 MiB).
///
/// ```
/// assert_eq!(perfgraph_core::attach::MAX_STATUS_BYTES, 8 << 20);
/// ```
pub const MAX_STATUS_BYTES: u64 = 8 << 20;

/// Most threads a `status` answer may list.
///
/// ```
/// assert_eq!(perfgraph_core::attach::MAX_STATUS_THREADS, 65_536);
/// ```
pub const MAX_STATUS_THREADS: usize = 65_536;

/// Most running sections a `status` answer may list, all its threads together.
///
/// ```
/// assert_eq!(perfgraph_core::attach::MAX_STATUS_SECTIONS, 262_144);
/// ```
pub const MAX_STATUS_SECTIONS: usize = 262_144;

/// Largest `dump` answer read, bytes (64 MiB; a file written by `PERFGRAPH_JSON` may be larger, up to
/// [`Report::MAX_JSON_BYTES`]), its names at most [`Report::MAX_JSON_NAME_BYTES`].
///
/// ```
/// assert_eq!(perfgraph_core::attach::MAX_DUMP_BYTES, 64 << 20);
/// ```
pub const MAX_DUMP_BYTES: u64 = 64 << 20;

/// Most call-tree nodes (the merged tree's and every thread's) [`report`] reads of a dump (read, they take
/// about 40 MB).
///
/// ```
/// assert_eq!(perfgraph_core::attach::MAX_DUMP_NODES, 100_000);
/// ```
pub const MAX_DUMP_NODES: usize = 100_000;

/// The directory of the sockets: `$XDG_RUNTIME_DIR/perfgraph`, else `/tmp/perfgraph-<uid>`. A program
/// that finds it is not private (another user made it first) listens in a directory of its own next to it
/// instead, `perfgraph-<uid>-XXXXXX`, where the other functions here look too.
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
    /// What it waits for now, if it is blocked in a primitive of `perfgraph_core::sync` (a lock, a
    /// condvar, a channel, a barrier).
    pub waiting: Option<LiveWait>,
}

/// What a [`LiveThread`] waits for now.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LiveWait {
    /// The primitive's name (a lock's, a channel's, ...).
    pub on: String,
    /// The thread holding it when the wait began, by [`LiveThread::index`], where known (a lock's
    /// holder; a channel or a condvar has none).
    pub holder: Option<u32>,
    /// Time since the wait began, ns.
    pub elapsed_ns: u64,
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

/// What `perfgraph ps` shows: the processes that answered, those that did not, and what was refused.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Listing {
    /// The processes that answered, by pid.
    pub processes: Vec<Status>,
    /// The processes whose socket took the connection but that sent nothing within [`ANSWER_TIMEOUT`]
    /// (stopped, or hung), by pid.
    pub not_responding: Vec<u32>,
    /// What went wrong, one line each: a socket directory not trusted (`/tmp/perfgraph-1000 is not yours
    /// (owner 1001): not trusted`), a process that is not its owner's, an answer too large or too slow.
    pub errors: Vec<String>,
}

/// Every process of this user with a socket: those that answer, those that do not, and one line for each
/// thing refused. Stale sockets (that refuse a connection: their process is gone) are removed on the way.
/// Every process is asked at once: it takes [`ANSWER_TIMEOUT`] at most, more only for a process that
/// answers but slowly ([`STATUS_DEADLINE`] at most).
///
/// ```
/// let listing = perfgraph_core::attach::list();
/// for p in &listing.processes {
///     println!("{:>7} {}", p.pid, perfgraph_core::text::escape(&p.program));
/// }
/// for pid in &listing.not_responding {
///     println!("{pid:>7} stopped (not responding)");
/// }
/// for why in &listing.errors {
///     eprintln!("perfgraph: {why}");
/// }
/// ```
pub fn list() -> Listing {
    let places = trust::places();
    let mut listing = Listing {
        errors: places.refused.clone(),
        ..Listing::default()
    };
    let mut sockets: Vec<(u32, &Place)> = Vec::new();
    for place in &places.trusted {
        let Ok(entries) = std::fs::read_dir(&place.dir) else {
            continue;
        };
        sockets.extend(
            entries
                .take(MAX_SOCKETS)
                .flatten()
                .filter_map(|e| e.file_name().to_str().and_then(control::pid_of))
                .map(|pid| (pid, place)),
        );
    }
    sockets.sort_unstable_by_key(|(pid, _)| *pid);
    // Every request goes out first: each process answers at its background thread's next look (up to
    // 200 ms), all of them at once, each within the same deadlines.
    let asked = Instant::now();
    let sent: Vec<(u32, io::Result<BufReader<Answer>>)> = sockets
        .iter()
        .map(|&(pid, place)| {
            let path = place.dir.join(control::socket_name(pid));
            (pid, ask_at(&path, place, pid, Request::Status, asked))
        })
        .collect();
    for ((pid, answer), (_, place)) in sent.into_iter().zip(&sockets) {
        let got = answer.and_then(|a| answer::first_line(a, |why| refusal(pid, why)));
        match got.and_then(|a| status::read(pid, a)) {
            Ok(s) => listing.processes.push(s),
            // Stale: nothing listens on it (a pid that does not exist here proves nothing: a process of
            // another PID namespace may share the directory).
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                sys::remove_socket(&place.dir.join(control::socket_name(pid)));
            }
            // Its queue is full: there, but not answering.
            Err(e) if answer::not_responding(&e) || e.kind() == io::ErrorKind::WouldBlock => {
                listing.not_responding.push(pid);
            }
            // Gone since the directory was read, or exited while answering.
            Err(e) if e.kind() == io::ErrorKind::NotFound || exited(&e) => {}
            Err(e) => listing.errors.push(e.to_string()),
        }
    }
    listing
}

/// Sockets looked at in one directory, at most.
const MAX_SOCKETS: usize = 4096;

/// Whether `e` says the process went away while answering.
fn exited(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
    ) || e.to_string().ends_with("no answer (it exited?)")
}

/// Every process of this user that answers on its socket, by pid ([`list`]'s `processes`).
///
/// ```no_run
/// for p in perfgraph_core::attach::processes() {
///     println!("{:>7} {} {} threads", p.pid, p.program, p.threads.len());
/// }
/// ```
pub fn processes() -> Vec<Status> {
    list().processes
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
    status::read(pid, ask(pid, Request::Status)?)
}

/// Process `pid`'s call-tree JSON now, in `PERFGRAPH_JSON`'s schema, running sections counted with their
/// time so far (a node's `running`). At most [`MAX_DUMP_BYTES`], within [`DUMP_DEADLINE`]; an answer that
/// is not JSON is an error (so it holds no terminal control either).
///
/// ```no_run
/// std::fs::write("now.json", perfgraph_core::attach::dump(12345)?)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn dump(pid: u32) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    ask(pid, Request::Dump)?.read_to_end(&mut body)?;
    serde_json::from_slice::<serde::de::IgnoredAny>(&body)
        .map_err(|e| invalid(pid, &format!("not a call-tree JSON ({e})")))?;
    Ok(body)
}

/// Process `pid`'s report now: its [`dump`] read back as it comes.
///
/// ```no_run
/// let r = perfgraph_core::attach::report(12345)?;
/// print!("{}", r.graph_table());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn report(pid: u32) -> io::Result<Report> {
    let answer = ask(pid, Request::Dump)?;
    let mut errors = ErrorOf {
        inner: answer,
        error: None,
    };
    Report::read_json_within(&mut errors, MAX_DUMP_NODES).map_err(|e| match errors.error {
        // The answer's own error (too large, too slow) rather than the reader's account of it.
        Some(e) => e,
        // The reader names its own limit for files.
        None if e.starts_with("limit: more than") && e.ends_with("(Report::MAX_JSON_NODES)") => {
            invalid(
                pid,
                &format!("limit: more than {MAX_DUMP_NODES} nodes (attach::MAX_DUMP_NODES)"),
            )
        }
        None => invalid(pid, &e),
    })
}

/// A reader that keeps its first error, for one that reports its input's errors as text.
struct ErrorOf<R> {
    inner: R,
    error: Option<io::Error>,
}

impl<R: Read> Read for ErrorOf<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            if self.error.is_none() {
                self.error = Some(io::Error::new(e.kind(), e.to_string()));
            }
        })
    }
}

/// Has process `pid` trace the next `seconds` seconds (Perfetto protobuf if `perfetto`, else Chrome
/// JSON), and writes the trace to `out` as it comes. Returns the bytes written. The trace is complete
/// when its last event is the closing one, which says what it lacks. It must come whole within its
/// length and [`DUMP_DEADLINE`], and at most [`trace::MAX_TRACE_BYTES`](crate::trace::MAX_TRACE_BYTES).
///
/// ```no_run
/// let mut file = std::fs::File::create("next-10s.pftrace")?;
/// perfgraph_core::attach::trace(12345, 10.0, true, &mut file)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn trace(pid: u32, seconds: f64, perfetto: bool, out: &mut dyn Write) -> io::Result<u64> {
    let mut reader = ask(pid, Request::Trace { seconds, perfetto })?;
    io::copy(&mut reader, out)
}

/// How long the whole answer to `request` may take, and its size limit.
fn bounds(request: Request) -> (Duration, Limit) {
    match request {
        Request::Status => (
            STATUS_DEADLINE,
            Limit {
                bytes: MAX_STATUS_BYTES,
                name: "attach::MAX_STATUS_BYTES",
            },
        ),
        Request::Dump => (
            DUMP_DEADLINE,
            Limit {
                bytes: MAX_DUMP_BYTES,
                name: "attach::MAX_DUMP_BYTES",
            },
        ),
        Request::Trace { seconds, .. } => (
            Duration::from_secs_f64(seconds.clamp(0.0, control::MAX_TRACE_SECONDS)) + DUMP_DEADLINE,
            Limit {
                bytes: crate::trace::MAX_TRACE_BYTES,
                name: "trace::MAX_TRACE_BYTES",
            },
        ),
    }
}

/// Asks process `pid` for `request`, in the first trusted directory that has its socket; the answer's
/// body follows in the reader returned, an `error:` line is the error.
fn ask(pid: u32, request: Request) -> io::Result<BufReader<Answer>> {
    let places = trust::places();
    let asked = Instant::now();
    for place in &places.trusted {
        let path = place.dir.join(control::socket_name(pid));
        match ask_at(&path, place, pid, request, asked) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
            Ok(answer) => return answer::first_line(answer, |why| refusal(pid, why)),
        }
    }
    Err(not_found(pid, &places))
}

/// Process `pid`'s socket is in no trusted directory: why, in one line.
fn not_found(pid: u32, places: &Places) -> io::Error {
    // Another user's process listens in that user's directory: one that keeps us out, or none of ours.
    // Only that user may ask, or root through that directory.
    let theirs = another_users(pid);
    if theirs && sys::effective_uid() != 0 {
        return refused(pid);
    }
    if let Some(why) = places.refused.first() {
        return io::Error::new(io::ErrorKind::PermissionDenied, why.clone());
    }
    let why = if theirs {
        format!(
            "another user's, whose socket is not in {} (that user's XDG_RUNTIME_DIR?)",
            directory().display()
        )
    } else {
        "no such process listening (PERFGRAPH_LISTEN on?)".to_owned()
    };
    io::Error::new(io::ErrorKind::NotFound, format!("process {pid}: {why}"))
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

/// The error of an `error: <why>` answer, `why` escaped (it is the process's text).
fn refusal(pid: u32, why: &str) -> io::Error {
    if why == control::REFUSED {
        return refused(pid);
    }
    io::Error::other(format!("process {pid}: {}", text::escape(why)))
}

/// Connects to the socket at `path` of `place` (process `pid`'s), checks who listens, and sends `request`
/// (asked at `asked`); the answer is for [`answer::first_line`]. A socket that is not there is
/// `NotFound`; one nothing listens on, `ConnectionRefused`.
fn ask_at(
    path: &Path,
    place: &Place,
    pid: u32,
    request: Request,
    asked: Instant,
) -> io::Result<BufReader<Answer>> {
    let stream = sys::connect(path).map_err(|e| {
        let why = match e.kind() {
            io::ErrorKind::NotFound => return e,
            io::ErrorKind::PermissionDenied if another_users(pid) => return refused(pid),
            io::ErrorKind::ConnectionRefused => "it does not listen any more".to_owned(),
            io::ErrorKind::WouldBlock => "it is too busy to answer".to_owned(),
            _ => e.to_string(),
        };
        io::Error::new(e.kind(), format!("process {pid}: {why}"))
    })?;
    trust::check_peer(&stream, place, pid)?;
    stream.set_write_timeout(Some(ANSWER_TIMEOUT))?;
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
    let (whole, limit) = bounds(request);
    Ok(BufReader::new(Answer::new(
        stream, pid, asked, whole, limit,
    )))
}

fn invalid(pid: u32, why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("process {pid}: {why}"))
}
