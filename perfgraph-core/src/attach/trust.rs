//! Which sockets the client trusts, as OpenSSH's StrictModes would: only in a directory that is the user's
//! own (not a symbolic link, owned by the effective user, nobody else let in: mode 0700 or narrower), and
//! only with a process at the other end that runs as that directory's owner or as root (`SO_PEERCRED`, read
//! after connecting). Another local user who made the directory first (`/tmp/perfgraph-<uid>` is a name
//! anyone can take) could otherwise show this user processes of theirs and feed the client what they like.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use crate::base::{control, sys};

/// A directory of sockets the client trusts, and its owner: the user, or (root's client, through
/// `XDG_RUNTIME_DIR`) the user whose processes root looks into.
#[derive(Debug, Clone)]
pub(super) struct Place {
    pub dir: PathBuf,
    pub owner: u32,
}

/// `dir` as a [`Place`] if the client trusts it, `Ok(None)` if it does not exist, else why not (one line,
/// `… : not trusted`). It must be private (not a symbolic link, mode 0700 or narrower) and the user's
/// (`euid`'s). Root's client also trusts another user's private directory in a parent of that user's
/// that nobody else may write to (`/run/user/1000/perfgraph`, named by `XDG_RUNTIME_DIR`): root may look
/// into any user's processes, but not through a directory a third user could have made (one in `/tmp`).
pub(super) fn check(dir: &Path, euid: u32) -> Result<Option<Place>, String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}: not trusted", dir.display())),
    };
    if meta.file_type().is_symlink() {
        return Err(format!("{} is a symbolic link: not trusted", dir.display()));
    }
    if !meta.is_dir() {
        return Err(format!("{} is not a directory: not trusted", dir.display()));
    }
    let mode = meta.permissions().mode() & 0o7777;
    let mut why = Vec::new();
    if meta.uid() != euid && !(euid == 0 && in_own_parent(dir, meta.uid())) {
        why.push(format!("not yours (owner {})", meta.uid()));
    }
    if mode & 0o077 != 0 {
        why.push(format!("not private (mode {mode:04o})"));
    }
    if !why.is_empty() {
        return Err(format!(
            "{} is {}: not trusted",
            dir.display(),
            why.join(" and ")
        ));
    }
    Ok(Some(Place {
        dir: dir.to_owned(),
        owner: meta.uid(),
    }))
}

/// Whether `dir`'s parent is a directory of `owner`'s that nobody else may write to.
fn in_own_parent(dir: &Path, owner: u32) -> bool {
    let parent = dir.parent().and_then(|p| std::fs::symlink_metadata(p).ok());
    parent.is_some_and(|p| p.is_dir() && p.uid() == owner && p.permissions().mode() & 0o022 == 0)
}

/// Checks the process at the other end of `stream`, connected to a socket of `place`: it must run as the
/// directory's owner, or as root.
pub(super) fn check_peer(stream: &UnixStream, place: &Place, pid: u32) -> io::Result<()> {
    match sys::peer_uid(stream) {
        Some(uid) if uid == place.owner || uid == 0 => Ok(()),
        uid => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "process {pid}: its socket in {} is held by {}, not the directory's owner ({}): not \
                 trusted",
                place.dir.display(),
                uid.map_or("an unknown user".to_owned(), |u| format!("uid {u}")),
                place.owner
            ),
        )),
    }
}

/// The directories the client looks in, and why it refused others (one line each).
#[derive(Debug, Default)]
pub(super) struct Places {
    pub trusted: Vec<Place>,
    pub refused: Vec<String>,
}

/// The places of this user's sockets: the directory ([`super::directory`]) if it is trusted, then the
/// fallback directories next to it that are (`perfgraph-<uid>-XXXXXX`: where a program listens whose
/// directory was not private), by name. A fallback directory that is not trusted is someone else's (ours
/// are made by `mkdtemp`) and is passed over in silence; the directory itself is named in `refused`.
pub(super) fn places() -> Places {
    let euid = sys::effective_uid();
    let dir = super::directory();
    let mut places = Places::default();
    match check(&dir, euid) {
        Ok(Some(place)) => places.trusted.push(place),
        Ok(None) => {}
        Err(why) => places.refused.push(why),
    }
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let fallbacks = sys::entries_named(parent, control::MAX_PARENT_SCANNED, |n| {
        control::is_fallback(n, euid)
    });
    let Ok(fallbacks) = fallbacks else {
        return places;
    };
    places.trusted.extend(
        fallbacks
            .iter()
            .filter_map(|d| check(d, euid).ok().flatten()),
    );
    places
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::DirBuilderExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("perfgraph-trust-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        mkdir_private(&dir);
        dir
    }

    /// Makes the directory `dir`, mode 0700.
    fn mkdir_private(dir: &Path) {
        std::fs::DirBuilder::new().mode(0o700).create(dir).unwrap();
    }

    #[test]
    fn only_a_private_directory_of_the_user_is_trusted() {
        let base = scratch("dirs");
        let me = sys::effective_uid();
        let own = base.join("own");
        mkdir_private(&own);
        assert_eq!(check(&own, me).unwrap().unwrap().owner, me);
        assert!(check(&base.join("none"), me).unwrap().is_none());
        // Open to others.
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check(&own, me).unwrap_err();
        assert!(
            e.ends_with("is not private (mode 0777): not trusted"),
            "{e}"
        );
        // Another user's, as a user it is not (the uid after ours) sees it.
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o700)).unwrap();
        let e = check(&own, me + 1).unwrap_err();
        assert!(
            e.ends_with(&format!("is not yours (owner {me}): not trusted")),
            "{e}"
        );
        // A link to a private directory is not one.
        let link = base.join("link");
        std::os::unix::fs::symlink(&own, &link).unwrap();
        let e = check(&link, me).unwrap_err();
        assert!(e.ends_with("is a symbolic link: not trusted"), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Root trusts another user's private directory only in a parent of that user's that nobody else may
    /// write to: a runtime directory, not a name taken in `/tmp`.
    #[test]
    fn root_trusts_another_users_directory_only_in_its_own_parent() {
        if sys::effective_uid() != 0 {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"note: root_trusts_another_users_directory_only_in_its_own_parent did NOT run: it needs root\n",
            );
            return;
        }
        let base = scratch("root");
        let chown = |p: &Path, uid: u32| std::os::unix::fs::chown(p, Some(uid), None).unwrap();
        // A user's runtime directory (0700, theirs) and its `perfgraph`.
        let runtime = base.join("run-user");
        mkdir_private(&runtime);
        let theirs = runtime.join("perfgraph");
        mkdir_private(&theirs);
        chown(&runtime, 65534);
        chown(&theirs, 65534);
        assert_eq!(check(&theirs, 0).unwrap().unwrap().owner, 65534);
        // The same, squatted in a directory anyone may write to.
        let open = base.join("tmp");
        mkdir_private(&open);
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let squat = open.join("perfgraph-0");
        mkdir_private(&squat);
        chown(&squat, 65534);
        let e = check(&squat, 0).unwrap_err();
        assert!(
            e.ends_with("is not yours (owner 65534): not trusted"),
            "{e}"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_peer_must_be_the_directory_owner_or_root() {
        let base = scratch("peer");
        let path = base.join("1.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let stream = UnixStream::connect(&path).unwrap();
        let me = sys::effective_uid();
        let place = |owner| Place {
            dir: base.clone(),
            owner,
        };
        assert!(check_peer(&stream, &place(me), 1).is_ok());
        // The listener (this process) is not the owner; it passes only if it is root.
        let other = check_peer(&stream, &place(me + 1), 1);
        assert_eq!(other.is_ok(), me == 0, "{other:?}");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
