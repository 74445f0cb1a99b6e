//! The control socket's protocol, shared by the process that listens (`collector::net::listen`) and the
//! clients (`attach`, what `perfgraph ps`, `dump`, `trace` and `top` use): where the sockets are, what a
//! request looks like, and the limits both sides hold to. Pure: no system call here.
//!
//! One request per connection: the client sends one line, `perfgraph/1 <command>\n`, at most
//! [`MAX_REQUEST`] bytes; the process answers `ok\n` then the body, or `error: <why>\n`, and closes the
//! connection. The commands ([`Request`]):
//!
//! * `status`: one JSON object (`"format": "perfgraph-status"`): who the process is, its memory, and per
//!   live thread what it runs now;
//! * `dump`: the call-tree JSON (`PERFGRAPH_JSON`'s schema) of everything recorded so far;
//! * `trace <seconds> <chrome|perfetto>`: the trace of the next `seconds` seconds, streamed as it is
//!   written, in the trace file's format.

use std::path::{Path, PathBuf};

/// What every request line starts with: the protocol and its version.
pub const PROTOCOL: &str = "perfgraph/1";

/// Longest request line, newline included: a longer one is refused.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub const MAX_REQUEST: usize = 256;

/// Longest trace window a client may ask for, seconds (a day).
pub const MAX_TRACE_SECONDS: f64 = 86_400.0;

/// Shortest trace window, seconds.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub const MIN_TRACE_SECONDS: f64 = 0.001;

/// Why a process refuses a client of another user (its `error:` line).
pub const REFUSED: &str = "permission denied: only the process's own user (or root) may ask";

/// What a client asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Request {
    /// Who the process is and what its threads run now.
    Status,
    /// The call-tree JSON of everything recorded so far.
    Dump,
    /// A trace of the next `seconds` seconds, Perfetto protobuf (`perfetto: true`) or Chrome JSON.
    Trace { seconds: f64, perfetto: bool },
}

impl Request {
    /// The request line for `self`, newline included.
    pub fn line(&self) -> String {
        match self {
            Request::Status => format!("{PROTOCOL} status\n"),
            Request::Dump => format!("{PROTOCOL} dump\n"),
            Request::Trace { seconds, perfetto } => format!(
                "{PROTOCOL} trace {seconds} {}\n",
                if *perfetto { "perfetto" } else { "chrome" }
            ),
        }
    }
}

/// Reads a request line (without its newline). Any bytes may come: the error is the answer's text.
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn parse(line: &[u8]) -> Result<Request, String> {
    if line.len() >= MAX_REQUEST {
        return Err(format!("request longer than {} bytes", MAX_REQUEST - 1));
    }
    let text = std::str::from_utf8(line).map_err(|_| "request is not UTF-8".to_owned())?;
    let mut words = text.split(' ');
    match words.next() {
        Some(PROTOCOL) => {}
        Some(p) if p.starts_with("perfgraph/") => {
            return Err(format!(
                "protocol {p:?} not spoken here (this is {PROTOCOL})"
            ));
        }
        _ => {
            return Err(format!(
                "not a perfgraph request (a line starts with {PROTOCOL})"
            ));
        }
    }
    let request = match (words.next(), words.next(), words.next()) {
        (Some("status"), None, _) => Request::Status,
        (Some("dump"), None, _) => Request::Dump,
        (Some("trace"), Some(seconds), Some(format)) => {
            let seconds: f64 = seconds
                .parse()
                .ok()
                .filter(|s: &f64| (MIN_TRACE_SECONDS..=MAX_TRACE_SECONDS).contains(s))
                .ok_or_else(|| {
                    format!(
                        "trace seconds must be a number from {MIN_TRACE_SECONDS} to {MAX_TRACE_SECONDS}"
                    )
                })?;
            let perfetto = match format {
                "perfetto" => true,
                "chrome" => false,
                _ => return Err("trace format must be chrome or perfetto".to_owned()),
            };
            Request::Trace { seconds, perfetto }
        }
        _ => return Err("unknown request (status, dump, trace <seconds> <format>)".to_owned()),
    };
    if words.next().is_some() {
        return Err("unknown request (status, dump, trace <seconds> <format>)".to_owned());
    }
    Ok(request)
}

/// The directory of the sockets, from the environment's `XDG_RUNTIME_DIR` (when set to an absolute path)
/// and the effective user id: `$XDG_RUNTIME_DIR/perfgraph`, else `/tmp/perfgraph-<uid>`.
pub fn directory(runtime_dir: Option<&std::ffi::OsStr>, uid: u32) -> PathBuf {
    match runtime_dir.map(Path::new).filter(|d| d.is_absolute()) {
        Some(dir) => dir.join("perfgraph"),
        None => PathBuf::from(format!("/tmp/perfgraph-{uid}")),
    }
}

/// The name of user `uid`'s fallback directories, but for their random end: `perfgraph-<uid>-`. A program
/// whose directory ([`directory`]) is not private (another user made it first, say) listens in one next to
/// it instead (made by `mkdtemp`: `/tmp/perfgraph-1000-Xq3b9Z`), and clients look in those too.
pub fn fallback_prefix(uid: u32) -> String {
    format!("perfgraph-{uid}-")
}

/// Entries of the fallback directories' parent (`/tmp`) read, at most, by the program looking for one to
/// take and by the clients looking for sockets: a bounded directory read on both sides.
pub const MAX_PARENT_SCANNED: usize = 65_536;

/// Whether `name` is the name of one of user `uid`'s fallback directories: [`fallback_prefix`], then the
/// six letters or digits of `mkdtemp`.
pub fn is_fallback(name: &str, uid: u32) -> bool {
    name.strip_prefix(&fallback_prefix(uid))
        .is_some_and(|end| end.len() == 6 && end.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The socket's file name for process `pid`.
pub fn socket_name(pid: u32) -> String {
    format!("{pid}.sock")
}

/// The pid a socket's file name stands for, if it is one of ours (`<pid>.sock`, digits only).
pub fn pid_of(name: &str) -> Option<u32> {
    let digits = name.strip_suffix(".sock")?;
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_reads_back_as_itself() {
        for r in [
            Request::Status,
            Request::Dump,
            Request::Trace {
                seconds: 2.0,
                perfetto: true,
            },
            Request::Trace {
                seconds: 0.25,
                perfetto: false,
            },
        ] {
            let line = r.line();
            assert_eq!(parse(line.trim_end_matches('\n').as_bytes()), Ok(r));
        }
    }

    #[test]
    fn bad_requests_get_a_reason() {
        for (line, why) in [
            (&b"GET / HTTP/1.1"[..], "not a perfgraph request"),
            (b"perfgraph/2 dump", "not spoken here"),
            (b"perfgraph/1 rm -rf", "unknown request"),
            (b"perfgraph/1 dump now", "unknown request"),
            (b"perfgraph/1 trace 0 chrome", "seconds must be"),
            (b"perfgraph/1 trace NaN chrome", "seconds must be"),
            (b"perfgraph/1 trace inf chrome", "seconds must be"),
            (b"perfgraph/1 trace 1 /etc/passwd", "format must be"),
            (b"perfgraph/1 \xff", "not UTF-8"),
            (&[b'x'; MAX_REQUEST][..], "longer than"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.contains(why), "{line:?}: {e}");
        }
    }

    /// Random lines, and mutations of good ones: never a panic, and a request only from a good line.
    #[test]
    fn the_parser_takes_any_bytes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let seeds: Vec<Vec<u8>> = [
            Request::Status,
            Request::Dump,
            Request::Trace {
                seconds: 3.5,
                perfetto: true,
            },
        ]
        .iter()
        .map(|r| r.line().trim_end().as_bytes().to_vec())
        .collect();
        for i in 0..200_000 {
            let mut line = if i % 2 == 0 {
                seeds[(next() % 3) as usize].clone()
            } else {
                (0..next() % 300).map(|_| next() as u8).collect()
            };
            for _ in 0..next() % 4 {
                if line.is_empty() {
                    break;
                }
                let at = (next() as usize) % line.len();
                match next() % 3 {
                    0 => line[at] = next() as u8,
                    1 => {
                        line.remove(at);
                    }
                    _ => line.insert(at, next() as u8),
                }
            }
            if let Ok(Request::Trace { seconds, .. }) = parse(&line) {
                assert!((MIN_TRACE_SECONDS..=MAX_TRACE_SECONDS).contains(&seconds));
            }
        }
    }

    #[test]
    fn the_directory_is_the_runtime_dir_or_a_private_one_in_tmp() {
        use std::ffi::OsStr;
        assert_eq!(
            directory(Some(OsStr::new("/run/user/1000")), 1000),
            Path::new("/run/user/1000/perfgraph")
        );
        assert_eq!(directory(None, 1000), Path::new("/tmp/perfgraph-1000"));
        // A relative XDG_RUNTIME_DIR is invalid (the XDG spec): ignored.
        assert_eq!(
            directory(Some(OsStr::new("run")), 7),
            Path::new("/tmp/perfgraph-7")
        );
    }

    #[test]
    fn fallback_directories_are_the_users_own_names() {
        assert_eq!(fallback_prefix(1000), "perfgraph-1000-");
        assert!(is_fallback("perfgraph-1000-Xq3b9Z", 1000));
        for bad in [
            "perfgraph-1000",
            "perfgraph-1000-",
            "perfgraph-10000-Xq3b9Z",
            "perfgraph-1000-Xq3b9",
            "perfgraph-1000-Xq3b9Z1",
            "perfgraph-1000-Xq3/9Z",
        ] {
            assert!(!is_fallback(bad, 1000), "{bad}");
        }
    }

    #[test]
    fn only_our_names_are_sockets_of_pids() {
        assert_eq!(pid_of(&socket_name(4242)), Some(4242));
        for bad in [
            "0.sock",
            ".sock",
            "12.sock.tmp",
            "x12.sock",
            "+12.sock",
            "99999999999.sock",
        ] {
            assert_eq!(pid_of(bad), None, "{bad}");
        }
    }
}
