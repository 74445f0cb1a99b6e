//! Where the control socket goes: a private directory ([`control::directory`]), created 0700 and refused
//! unless it is a directory (not a link) of this user that nobody else may enter; and the stale sockets
//! in it, of processes that died without removing theirs (killed, or gone through `exec`), removed: those
//! that refuse a connection, never a socket judged by its pid alone.

use std::path::PathBuf;

use crate::base::control;
use crate::base::sys;

/// Sockets looked at for staleness at one start, at most: a start costs a bounded directory read.
const MAX_SCANNED: usize = 4096;

/// The directory for this process's socket, made ready; or why it cannot be used (one line).
pub(crate) fn prepare(uid: u32) -> Result<PathBuf, String> {
    let dir = control::directory(std::env::var_os("XDG_RUNTIME_DIR").as_deref(), uid);
    if let Err(why) = sys::private_directory(&dir, uid) {
        return Err(format!(
            "the directory {:?} is not private: {why}",
            dir.display().to_string()
        ));
    }
    remove_stale(&dir);
    Ok(dir)
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
