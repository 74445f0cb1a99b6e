//! Where the control socket goes: a private directory ([`control::directory`]), created 0700 and refused
//! unless it is a directory (not a link) of this user that nobody else may enter; one refused (another user
//! made it first: `/tmp/perfgraph-<uid>` is a name anyone can take) is left for a private one next to it,
//! `perfgraph-<uid>-XXXXXX` ([`control::fallback_prefix`]), which clients look in too. The stale sockets
//! in it, of processes that died without removing theirs (killed, or gone through `exec`), are removed:
//! those that refuse a connection, never a socket judged by its pid alone.

use std::path::{Path, PathBuf};

use crate::base::control;
use crate::base::sys;

/// Sockets looked at for staleness at one start, at most: a start costs a bounded directory read.
const MAX_SCANNED: usize = 4096;

/// The directory for this process's socket, made ready, and a warning line if it is not the usual one; or
/// why there is none (one line).
pub(crate) fn prepare(uid: u32) -> Result<(PathBuf, Option<String>), String> {
    let dir = control::directory(std::env::var_os("XDG_RUNTIME_DIR").as_deref(), uid);
    let Err(why) = sys::private_directory(&dir, uid) else {
        remove_stale(&dir);
        return Ok((dir, None));
    };
    let refused = format!(
        "the directory {:?} is not private: {why}",
        dir.display().to_string()
    );
    match fallback(&dir, uid) {
        Ok(other) => {
            remove_stale(&other);
            let warning = format!(
                "perfgraph: warning: {refused}; the control socket is in {:?} instead",
                other.display().to_string()
            );
            Ok((other, Some(warning)))
        }
        Err(e) => Err(format!(
            "{refused}, and no other could be made next to it: {e}"
        )),
    }
}

/// A private directory of `uid`'s next to `dir` (which is not private): one made before, by another of
/// this user's programs (the first by name: they all take the same one), else a new one (`mkdtemp`).
fn fallback(dir: &Path, uid: u32) -> std::io::Result<PathBuf> {
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let ours = sys::entries_named(parent, control::MAX_PARENT_SCANNED, |n| {
        control::is_fallback(n, uid)
    })?;
    match ours
        .into_iter()
        .find(|p| sys::not_private(p, uid).is_none())
    {
        Some(taken) => Ok(taken),
        None => sys::make_private_directory(&parent.join(control::fallback_prefix(uid))),
    }
}

/// Removes the stale sockets in `dir`: those that refuse a connection ([`sys::refuses`]). A socket that
/// takes one is a live process's, even one that does not answer (stopped, or starting) or whose pid does
/// not exist here (a process of another PID namespace that shares the directory).
pub(crate) fn remove_stale(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = sys::process_id();
    for entry in entries.take(MAX_SCANNED).flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(control::pid_of) else {
            continue;
        };
        if pid != me && sys::refuses(&entry.path()) {
            sys::remove_socket(&entry.path());
        }
    }
}
