//! Writing an output file at exit as any Unix tool opens it (through symbolic links the kernel would follow,
//! refused when read-only, `/dev/stdout` and named pipes as streams), complete or not at all, so the exit
//! handler can give up on a stuck one and remove what it left.

mod stream;
mod target;

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::base::poison;
use crate::base::process;

pub(crate) use stream::Stream;
use target::{Target, own_regular_descriptor, resolve};

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
    *poison::lock(&CURRENT) = entry;
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
///
/// [`may_follow`]: target::may_follow
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
/// `perfgraph: error: cannot write VARIABLE file "PATH": ERROR`.
fn error_line(variable: &str, path: &Path, e: &io::Error) -> String {
    format!(
        "perfgraph: error: cannot write {variable} file {:?}: {e}",
        path.display().to_string()
    )
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
