//! A file written while the program runs (the trace, a `perfgraph trace` window): a stream written
//! non-blocking in place, or a regular file under a temporary name that takes the name asked for at its
//! first bytes.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::target::{Target, own_regular_descriptor, resolve};
use super::{Partial, Progress, create_temp, error_line, set_current, writable_mode};

/// Most bytes a stream (a named pipe, a terminal) may hold back when its reader does not keep up; past it,
/// [`Stream::write_all`] refuses whole writes.
pub const STREAM_BACKLOG: usize = 16 << 20;

/// A file written while the program runs (the trace), opened as [`write_file`] opens one: a stream in
/// place; a regular file created under a temporary name next to it (`.<name>.perfgraph-<16 hex digits>`,
/// with `O_EXCL | O_NOFOLLOW`), which takes the name asked for as soon as its first bytes (the header) are
/// in it ([`Stream::take_name`]): one `rename`, so whatever had the name (the previous run's trace) is
/// replaced whole, and the name never holds an empty file. From then on the file is written under its own
/// name, so a run that is killed leaves its trace there, readable up to its last write; a trace is complete
/// exactly when its last event is the closing one (the trace's own mark, not the name's).
///
/// A stream never blocks the background thread while the program runs: it is opened and written
/// non-blocking, a named pipe nobody reads yet is opened at a later write, and what the reader has not
/// taken waits (up to [`STREAM_BACKLOG`]); only [`Stream::finish`] waits for the reader, as a file
/// written at exit does.
///
/// [`write_file`]: super::write_file
pub(crate) struct Stream {
    variable: &'static str,
    /// The path asked for.
    path: PathBuf,
    /// `None`: a stream not opened yet (a named pipe without a reader).
    file: Option<File>,
    kind: Kind,
    /// Bytes a stream has not taken yet.
    backlog: Vec<u8>,
    /// Bytes accepted so far (written, or waiting in `backlog`).
    pub written: u64,
}

/// What a [`Stream`] writes to.
enum Kind {
    /// A stream: where it is, and whether to follow a link to it.
    Stream { path: PathBuf, follow: bool },
    /// A regular file: its name (links followed), and its temporary name until it takes that one. Dropped
    /// with the temporary name, the file is removed.
    File {
        target: PathBuf,
        temp: Option<PathBuf>,
    },
    /// A client of the control socket (a `perfgraph trace` window), written non-blocking like a stream;
    /// never waited for: what it has not taken at the end goes back to the socket's server
    /// ([`Stream::into_peer`]). Only with the `listen` feature.
    #[cfg(feature = "listen")]
    Socket(crate::collector::sockets::Peer),
}

/// Opens the stream `path` for writing without blocking; `None` for a named pipe without a reader.
fn open_stream(path: &Path, follow: bool) -> io::Result<Option<File>> {
    if let Some(shared) = own_regular_descriptor(path) {
        return Ok(Some(shared));
    }
    let mut open = OpenOptions::new();
    // Append: `/dev/stdout` redirected to a file goes after what the program printed there.
    open.append(true);
    let mut flags = libc::O_NONBLOCK;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    match open.custom_flags(flags).open(path) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The directory `file` is in, `.` for a bare name.
fn parent_of(file: &Path) -> &Path {
    file.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

impl Stream {
    /// Opens `path` for the variable `variable`; on failure, the one line to print. A regular file is
    /// under its temporary name until [`Stream::take_name`].
    pub(crate) fn open(variable: &'static str, path: &Path) -> Result<Stream, String> {
        let opened = resolve(path).and_then(|target| match target {
            Target::Stream {
                path: stream,
                follow,
            } => Ok((
                open_stream(&stream, follow)?,
                Kind::Stream {
                    path: stream,
                    follow,
                },
            )),
            Target::File { dir, name } => {
                let target = dir.join(&name);
                let mode = writable_mode(&target)?;
                let (file, temp) = create_temp(&dir, &name, mode)?;
                Ok((
                    Some(file),
                    Kind::File {
                        target,
                        temp: Some(temp),
                    },
                ))
            }
        });
        let (file, kind) = opened.map_err(|e| error_line(variable, path, &e))?;
        Ok(Stream {
            variable,
            path: path.to_owned(),
            file,
            kind,
            backlog: Vec::new(),
            written: 0,
        })
    }

    /// A regular file takes the name asked for, in place of whatever had it (`rename`, one step: never a
    /// moment without a file there); called once its first bytes are written, so that name never holds an
    /// empty file. Not through a link: the temporary file was created with `O_NOFOLLOW | O_EXCL`, and
    /// `rename` replaces a link planted at the name since [`resolve`] looked rather than follow it. The
    /// file's data and the new name go to disk at the first sync ([`Stream::sync_handles`]). Nothing for a
    /// stream. On failure, the one line to print (the temporary file is removed when the stream is dropped).
    pub(crate) fn take_name(&mut self) -> Result<(), String> {
        let Kind::File { target, temp } = &mut self.kind else {
            return Ok(());
        };
        let Some(from) = temp.clone() else {
            return Ok(());
        };
        set_current(Some((
            self.variable,
            self.path.clone(),
            Partial::Temporary(from.clone()),
        )));
        let renamed = std::fs::rename(&from, &*target);
        set_current(None);
        renamed.map_err(|e| error_line(self.variable, &self.path, &e))?;
        *temp = None;
        Ok(())
    }

    /// A stream to a control-socket client (a trace window), the trace's format chosen by the caller.
    #[cfg(feature = "listen")]
    pub(crate) fn socket(peer: crate::collector::sockets::Peer) -> Stream {
        Stream {
            variable: "perfgraph trace",
            path: PathBuf::from("(control socket)"),
            file: None,
            kind: Kind::Socket(peer),
            backlog: Vec::new(),
            written: 0,
        }
    }

    /// A control-socket client's stream, and what it has not taken yet; `None` for a file or stream.
    #[cfg(feature = "listen")]
    pub(crate) fn into_peer(mut self) -> Option<(crate::collector::sockets::Peer, Vec<u8>)> {
        let backlog = std::mem::take(&mut self.backlog);
        // `Stream` has a `Drop`: take the kind out through a placeholder.
        let kind = std::mem::replace(
            &mut self.kind,
            Kind::Stream {
                path: PathBuf::new(),
                follow: false,
            },
        );
        match kind {
            Kind::Socket(peer) => Some((peer, backlog)),
            _ => None,
        }
    }

    /// Writes all of `bytes` (a regular file), or as much as the stream takes now, keeping the rest. On
    /// an error nothing of `bytes` counts: a regular file is cut back to what it held before, so it ends
    /// after a whole write; a stream whose reader is [`STREAM_BACKLOG`] behind refuses it (`WouldBlock`).
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Kind::File { .. } = self.kind {
            let Some(file) = &mut self.file else {
                return Ok(());
            };
            return match file.write_all(bytes) {
                Ok(()) => {
                    self.written += bytes.len() as u64;
                    Ok(())
                }
                Err(e) => {
                    // Back to the end of the last whole write, the length and the position both (a
                    // later write must not leave a hole where the partial one was).
                    let _ = file.set_len(self.written);
                    let _ = file.seek(io::SeekFrom::Start(self.written));
                    Err(e)
                }
            };
        }
        if self.backlog.len() + bytes.len() > STREAM_BACKLOG {
            self.send()?;
            if self.backlog.len() + bytes.len() > STREAM_BACKLOG {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the reader does not keep up",
                ));
            }
        }
        self.backlog.extend_from_slice(bytes);
        self.written += bytes.len() as u64;
        self.send()
    }

    /// Hands a control-socket client what it takes now of the backlog, if one is waiting (other streams
    /// get theirs at the next write, and at the end).
    pub(crate) fn pump(&mut self) -> io::Result<()> {
        #[cfg(feature = "listen")]
        if !self.backlog.is_empty() && matches!(self.kind, Kind::Socket(_)) {
            return self.send();
        }
        Ok(())
    }

    /// Hands the stream what it takes now of the backlog (opening it first if it had no reader).
    fn send(&mut self) -> io::Result<()> {
        #[cfg(feature = "listen")]
        if let Kind::Socket(peer) = &mut self.kind {
            return send_backlog(&mut self.backlog, |b| {
                crate::base::sys::send(peer.stream(), b)
            });
        }
        if self.file.is_none()
            && let Kind::Stream { path, follow } = &self.kind
        {
            self.file = open_stream(path, *follow)?;
        }
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        send_backlog(&mut self.backlog, |b| file.write(b))
    }

    /// Whether this is a regular file (created under a temporary name), not a stream.
    pub(crate) fn is_regular_file(&self) -> bool {
        matches!(self.kind, Kind::File { .. })
    }

    /// For the sync thread (`collector::trace::fsync`), a regular file's descriptors of its own: the file, and the
    /// directory that holds its name (`None` if it cannot be opened: the name is then synced at the end
    /// only). `None` for a stream.
    pub(crate) fn sync_handles(&self) -> Option<(File, Option<File>)> {
        let Kind::File { target, .. } = &self.kind else {
            return None;
        };
        let file = self.file.as_ref()?.try_clone().ok()?;
        Some((file, File::open(parent_of(target)).ok()))
    }

    /// The one line to print for `e`.
    pub(crate) fn error(&self, e: &io::Error) -> String {
        error_line(self.variable, &self.path, e)
    }

    /// The last bytes are about to be written: from now on, the exit handler that gives up names this file
    /// ([`abandon_current`]). A regular file that has its name keeps it, and what it holds; one that has not
    /// is removed.
    ///
    /// [`abandon_current`]: super::abandon_current
    pub(crate) fn finishing(&self) {
        let partial = match &self.kind {
            Kind::File { temp: None, .. } => Partial::Named,
            Kind::File {
                temp: Some(temp), ..
            } => Partial::Temporary(temp.clone()),
            Kind::Stream { .. } => Partial::Nothing,
            #[cfg(feature = "listen")]
            Kind::Socket(_) => Partial::Nothing,
        };
        set_current(Some((self.variable, self.path.clone(), partial)));
    }

    /// The file is complete: a regular file goes to disk, then its directory (so the name it took at the
    /// start is there too, should the sync thread not have run); a stream gets its backlog, waiting for its
    /// reader as long as the exit handler lets it (it is the file being written, [`abandon_current`]).
    ///
    /// [`abandon_current`]: super::abandon_current
    pub(crate) fn finish(mut self) -> Result<(), String> {
        self.finishing();
        let file = self.file.take();
        let result = match &mut self.kind {
            Kind::File { target, temp } => {
                let synced = file.as_ref().map_or(Ok(()), File::sync_all);
                drop(file);
                // A file that has not taken its name (no [`Stream::take_name`]) takes it now, on disk.
                let named = match (synced, temp.take()) {
                    (Err(e), from) => {
                        *temp = from;
                        Err(e)
                    }
                    (Ok(()), None) => Ok(()),
                    (Ok(()), Some(from)) => {
                        let renamed = std::fs::rename(&from, &*target);
                        if renamed.is_err() {
                            *temp = Some(from);
                        }
                        renamed
                    }
                };
                named.and_then(|()| File::open(parent_of(target)).and_then(|d| d.sync_all()))
            }
            Kind::Stream {
                path: stream,
                follow,
            } => {
                // Blocking now: a second descriptor of the same stream, after everything the first sent.
                let mut open = OpenOptions::new();
                open.append(true);
                if !*follow {
                    open.custom_flags(libc::O_NOFOLLOW);
                }
                let opened = match own_regular_descriptor(stream) {
                    Some(shared) => Ok(shared),
                    None => open.open(&*stream),
                };
                opened.and_then(|f| {
                    let mut out = Progress(f);
                    for chunk in self.backlog.chunks(1 << 20) {
                        out.write_all(chunk)?;
                    }
                    drop(file);
                    Ok(())
                })
            }
            #[cfg(feature = "listen")]
            Kind::Socket(peer) => {
                // At exit (a window still open): the client gets what it takes within a second.
                let stream = peer.stream();
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(1)));
                let mut sent = 0;
                while sent < self.backlog.len() {
                    match crate::base::sys::send(stream, &self.backlog[sent..]) {
                        Ok(n) if n > 0 => sent += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        _ => break,
                    }
                }
                Ok(())
            }
        };
        set_current(None);
        result.map_err(|e| error_line(self.variable, &self.path, &e))
    }
}

/// Writes what `write` (non-blocking) takes now of `backlog`, and keeps the rest.
fn send_backlog(
    backlog: &mut Vec<u8>,
    mut write: impl FnMut(&[u8]) -> io::Result<usize>,
) -> io::Result<()> {
    let mut sent = 0;
    let result = loop {
        if sent == backlog.len() {
            break Ok(());
        }
        match write(&backlog[sent..]) {
            Ok(0) => break Ok(()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    backlog.drain(..sent);
    result
}

impl Drop for Stream {
    /// A regular file that never took its name is removed: nothing is left under the temporary one. The
    /// exit handler no longer names the file (a failed last write drops it without [`Stream::finish`]).
    fn drop(&mut self) {
        if let Kind::File {
            temp: Some(temp), ..
        } = &self.kind
        {
            let _ = std::fs::remove_file(temp);
        }
        set_current(None);
    }
}
