//! Where an output path leads: its symbolic links followed one at a time as the kernel would (refusing
//! another user's link in `/tmp`), and names of this process's own descriptors told apart as streams.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::base::sys;

/// Where an output path leads once its symbolic links are followed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Target {
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
pub(super) fn resolve(path: &Path) -> io::Result<Target> {
    resolve_with(path, protected_symlinks())
}

/// [`resolve`], applying Linux's `fs.protected_symlinks` rule or not (`protect`).
pub(super) fn resolve_with(path: &Path, protect: bool) -> io::Result<Target> {
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
pub(super) fn may_follow(dir: &Path, link: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
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
pub(super) fn names_a_descriptor(path: &Path) -> bool {
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
pub(super) fn own_regular_descriptor(path: &Path) -> Option<File> {
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
