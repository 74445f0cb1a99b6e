//! Writing an output file at exit as any Unix tool opens it (through symbolic links the kernel would follow,
//! refused when read-only, `/dev/stdout` and named pipes as streams), complete or not at all, so the exit
//! handler can give up on a stuck one and remove what it left.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::base::{process, sys};

/// The file being written now, if any: `(variable, path asked for, what is on disk of it)`, so an exit
/// handler that gives up on a stuck write can name it and remove its temporary file ([`abandon_current`]).
static CURRENT: Mutex<Option<(&'static str, PathBuf, Partial)>> = Mutex::new(None);

/// What is on disk of the file being written, for an exit handler that gives up on it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Partial {
    /// Nothing to remove: a stream, or a file not created yet.
    Nothing,
    /// A temporary file, removed when given up on.
    Temporary(PathBuf),
    /// The trace under its own name, which it took at the start: kept, readable up to its last write and
    /// without its closing event.
    Named,
}

/// What giving up on a file left ([`abandon_current`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abandoned {
    /// Nothing to say: a stream (it simply ends), or no file yet.
    Nothing,
    /// Its temporary file was removed; the file under the final name, if any, is as it was.
    Removed,
    /// The streamed trace stays under its name, up to its last write, without its closing event.
    Kept,
}

/// Called by the exit handler when the final pass is stuck: the file being written, with the variable that
/// named it, after removing its temporary file if it has one. `None` when no file is being written.
pub(crate) fn abandon_current() -> Option<(&'static str, PathBuf, Abandoned)> {
    // `try_lock`: the writer holds the lock only to set or clear the entry, never while writing.
    let (variable, path, partial) = CURRENT.try_lock().ok()?.take()?;
    let left = match partial {
        Partial::Temporary(t) if std::fs::remove_file(&t).is_ok() => Abandoned::Removed,
        Partial::Temporary(_) | Partial::Nothing => Abandoned::Nothing,
        Partial::Named => Abandoned::Kept,
    };
    Some((variable, path, left))
}

fn set_current(entry: Option<(&'static str, PathBuf, Partial)>) {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = entry;
}

/// Writes a file through `fill`. On failure returns the one line to print: the variable, the path and the
/// OS error, e.g. `perfgraph: error: cannot write PERFGRAPH_TRACE file "/x/t.json": No such file or
/// directory (os error 2)`.
///
/// Symbolic links are followed to the file they lead to ([`resolve`]), except where the kernel would refuse
/// to follow them for a plain `open` ([`may_follow`]: another user's link in `/tmp`). A regular file (or a
/// new one) is written under a random temporary name next to it, created with `O_EXCL | O_NOFOLLOW`, and
/// renamed over it when complete: a write cut short (the process exit does not wait forever) never leaves a
/// truncated file under the final name, and a read-only file or a directory we may not write is an error that
/// leaves the file as it was. A stream (`/dev/stdout`, `/dev/stderr`, a named pipe, a device) is opened and
/// written in place; a stream cut short simply ends early.
pub(crate) fn write_file(
    variable: &'static str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    set_current(Some((variable, path.to_owned(), Partial::Nothing)));
    let result = resolve(path).and_then(|target| match target {
        Target::Stream {
            path: stream,
            follow,
        } => {
            if let Some(shared) = own_regular_descriptor(&stream) {
                return fill_file(shared, fill);
            }
            let mut open = OpenOptions::new();
            // Append: `/dev/stdout` redirected to a file goes after what the program printed there.
            open.append(true);
            if !follow {
                open.custom_flags(libc::O_NOFOLLOW);
            }
            fill_file(open.open(stream)?, fill)
        }
        Target::File { dir, name } => replace(variable, path, &dir, &name, fill),
    });
    set_current(None);
    process::progress();
    result.map_err(|e| error_line(variable, path, &e))
}

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
    Socket(super::net::listen::Peer),
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
    pub(crate) fn socket(peer: super::net::listen::Peer) -> Stream {
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
    pub(crate) fn into_peer(mut self) -> Option<(super::net::listen::Peer, Vec<u8>)> {
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

/// `perfgraph: error: cannot write VARIABLE file "PATH": ERROR`.
fn error_line(variable: &str, path: &Path, e: &io::Error) -> String {
    format!(
        "perfgraph: error: cannot write {variable} file {:?}: {e}",
        path.display().to_string()
    )
}

/// Where an output path leads once its symbolic links are followed.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Opened and written in place: a name for an open descriptor (`/dev/stdout`, `/proc/self/fd/1`: opened
    /// following its link, `follow`), a named pipe, a device, or a directory (whose open fails with the OS's
    /// error).
    Stream { path: PathBuf, follow: bool },
    /// A regular file, existing or to be created as `name` in `dir` (a directory without symbolic links).
    File { dir: PathBuf, name: OsString },
}

/// Most symbolic links followed for one path, as Linux's own limit (`ELOOP`).
const MAX_LINKS: usize = 40;

/// Follows `path`'s symbolic links, one at a time, to what they lead to: a dangling link leads to the file
/// it names, created there. A link the kernel would not follow for us ([`may_follow`], when
/// [`protected_symlinks`] is on) is the error a plain `open` gets.
fn resolve(path: &Path) -> io::Result<Target> {
    resolve_with(path, protected_symlinks())
}

/// [`resolve`], applying Linux's `fs.protected_symlinks` rule or not (`protect`).
fn resolve_with(path: &Path, protect: bool) -> io::Result<Target> {
    let mut next = path.to_owned();
    for _ in 0..=MAX_LINKS {
        let Some(name) = next.file_name().map(OsStr::to_owned) else {
            // `/`, `..`: a directory.
            return Ok(Target::Stream {
                path: next,
                follow: false,
            });
        };
        let parent = next
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(parent)?;
        let full = dir.join(&name);
        if names_a_descriptor(&full) {
            return Ok(Target::Stream {
                path: full,
                follow: true,
            });
        }
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.file_type().is_symlink() => {
                if protect {
                    may_follow(&dir, &full, &m)?;
                }
                next = dir.join(std::fs::read_link(&full)?);
            }
            Ok(m) if m.is_file() => return Ok(Target::File { dir, name }),
            Ok(_) => {
                return Ok(Target::Stream {
                    path: full,
                    follow: false,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::File { dir, name }),
            Err(e) => return Err(e),
        }
    }
    // Too many links: opening it gets the OS's own error.
    Ok(Target::Stream {
        path: path.to_owned(),
        follow: true,
    })
}

/// Whether Linux's `fs.protected_symlinks` is on: `/proc/sys/fs/protected_symlinks` reads anything but `0`
/// (it is `1` by default on the major distributions). Unreadable (no `/proc`, another Unix) counts as on:
/// the rule then refuses only links another user planted in a sticky world-writable directory.
fn protected_symlinks() -> bool {
    std::fs::read_to_string("/proc/sys/fs/protected_symlinks").map_or(true, |v| v.trim() != "0")
}

/// Linux's `fs.protected_symlinks` rule (`may_follow_link` in `fs/namei.c`), which a plain `open` meets
/// for the last link of a path and perfgraph, following links itself, applies itself: the link `link`
/// (`meta`, not followed) in the directory `dir` is followed only if it is the process's own (effective
/// uid), or `dir` is not both sticky and world-writable (`/tmp`), or `dir` and the link have the same
/// owner. Otherwise `EACCES`, where `echo > link` gets `Permission denied` too: another user's link
/// planted in `/tmp` never redirects root's output to a file of root's choosing.
fn may_follow(dir: &Path, link: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() == sys::effective_uid() {
        return Ok(());
    }
    let parent = std::fs::metadata(dir)?;
    // `S_ISVTX | S_IWOTH`.
    const STICKY_AND_WORLD_WRITABLE: u32 = 0o1002;
    if parent.mode() & STICKY_AND_WORLD_WRITABLE != STICKY_AND_WORLD_WRITABLE
        || parent.uid() == meta.uid()
    {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{}: not following the symbolic link {:?}, which uid {} owns in a sticky world-writable \
             directory (fs.protected_symlinks)",
            io::Error::from_raw_os_error(libc::EACCES),
            link.display().to_string(),
            meta.uid()
        ),
    ))
}

/// Whether `path` (its directory already canonical, so `/dev/fd` reads `/proc/<pid>/fd`) names an open
/// descriptor: a stream, even when the descriptor is a regular file (`prog > out.txt` with
/// `PERFGRAPH_JSON=/dev/stdout`), which must not be replaced.
fn names_a_descriptor(path: &Path) -> bool {
    let parts: Vec<&str> = path.iter().map(|c| c.to_str().unwrap_or("")).collect();
    matches!(
        parts.as_slice(),
        ["/", "dev", "stdin" | "stdout" | "stderr"]
            | ["/", "dev", "fd", _]
            | ["/", "proc", _, "fd", _]
            | ["/", "proc", _, "task", _, "fd", _]
    )
}

/// For a name of one of this process's own descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, its
/// directory already canonical) whose open file description is a regular file: a descriptor of that same
/// description ([`sys::shared_regular_file`]). Opening the name would make a new description with an
/// offset of its own, so the program's (and its children's) later writes to `prog > out.txt` would land
/// over ours; through the shared one, ours go where the program's next write would, and theirs after.
/// `None` for anything else, which is opened by name.
fn own_regular_descriptor(path: &Path) -> Option<File> {
    let parts: Vec<&str> = path.iter().map(|c| c.to_str().unwrap_or("")).collect();
    let ours = sys::process_id().to_string();
    let fd = match parts.as_slice() {
        ["/", "dev", "stdin"] => "0",
        ["/", "dev", "stdout"] => "1",
        ["/", "dev", "stderr"] => "2",
        ["/", "dev", "fd", fd] => fd,
        ["/", "proc", pid, "fd", fd] | ["/", "proc", pid, "task", _, "fd", fd] if *pid == ours => {
            fd
        }
        _ => return None,
    };
    sys::shared_regular_file(fd.parse().ok()?)
}

/// Writes the regular file `name` in `dir` (the path asked for is `path`) through a temporary file renamed
/// over it when complete. An existing file keeps its permission bits; one we may not write is an error.
fn replace(
    variable: &'static str,
    path: &Path,
    dir: &Path,
    name: &OsStr,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let target = dir.join(name);
    let mode = writable_mode(&target)?;
    let (file, temp) = create_temp(dir, name, mode)?;
    set_current(Some((
        variable,
        path.to_owned(),
        Partial::Temporary(temp.clone()),
    )));
    let written = fill_file(file, fill).and_then(|()| std::fs::rename(&temp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// The permission bits of the regular file `target`, `None` if there is none, or the OS's error if we may
/// not write it (its mode, owner, a read-only file system, an immutable flag): it is opened for writing,
/// never truncated; not following a link, and not blocking should it have been swapped for a named pipe
/// since `resolve` looked.
fn writable_mode(target: &Path) -> io::Result<Option<u32>> {
    let probe = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(target);
    match probe {
        Ok(file) => Ok(Some(file.metadata()?.permissions().mode() & 0o777)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates `.<name>.perfgraph-<16 random hex digits>` in `dir`, new (`O_EXCL`) and not through a link
/// (`O_NOFOLLOW`): nobody can predict the name to plant a link there, and one planted anyway makes the
/// creation fail rather than redirect the write. `mode`: the permission bits of the file it replaces
/// (`None`: a new file, 0666 less the umask, as any tool creates one).
fn create_temp(dir: &Path, name: &OsStr, mode: Option<u32>) -> io::Result<(File, PathBuf)> {
    // Room for the prefix and suffix within the 255 bytes a file name may have.
    let name = OsStr::from_bytes(&name.as_bytes()[..name.len().min(200)]);
    let mut collisions = 0;
    loop {
        let mut temp_name = OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".perfgraph-{:016x}", getrandom::u64()?));
        let temp = dir.join(temp_name);
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(mode.unwrap_or(0o666))
            .open(&temp);
        match created {
            Ok(file) => {
                if let Some(mode) = mode {
                    // The umask may have cleared some of the bits `open` was given.
                    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
                }
                return Ok((file, temp));
            }
            // 64 random bits do not collide by chance: something is there on purpose. Try a few names.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && collisions < 4 => collisions += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Fills `file` through a 1 MiB buffer that reports progress.
fn fill_file(file: File, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, Progress(file));
    fill(&mut out)?;
    out.flush()
}

/// A file that reports each write it completes as progress of the final pass ([`process::progress`]):
/// behind the 1 MiB buffer, that is once per MiB.
struct Progress(File);

impl Write for Progress {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf)?;
        process::progress();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
