//! Unit tests of the output files (`collector::files`): complete or not at all, paths, failed writes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Abandoned, Stream, Target};
use crate::base::poison;

/// Held by each test that writes: [`super::CURRENT`] is one per process, and the abandon test takes
/// whatever entry it finds.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    poison::lock(&SERIAL)
}

/// A fresh, empty directory for one test, removed when the test ends (passed or failed).
fn fresh_dir(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("perfgraph-write-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's own directory ([`fresh_dir`]): a [`Path`], removed with all it holds when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The text of the file at `path`.
fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// A fresh directory `tag` holding `victim.txt`, which says `precious`: the file a planted link points
/// at, which no write may reach. Returns the directory and the file.
fn victim(tag: &str) -> (Scratch, PathBuf) {
    let dir = fresh_dir_with(tag, 0o700, None);
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    (dir, victim)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    super::write_file("PERFGRAPH_JSON", path, |w| w.write_all(text.as_bytes()))
}

#[test]
fn unwritable_path_is_one_line_naming_it_and_the_os_error() {
    let _serial = serial();
    let err = super::write_file(
        "PERFGRAPH_JSON",
        std::path::Path::new("/nonexistent-dir/x.json"),
        |w| w.write_all(b"{}"),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "perfgraph: error: cannot write PERFGRAPH_JSON file \"/nonexistent-dir/x.json\": No such file or directory (os error 2)"
    );
}

#[test]
fn a_directory_is_not_a_file() {
    let _serial = serial();
    let dir = fresh_dir("isdir");
    let err = write(&dir, "{}").unwrap_err();
    assert!(err.ends_with(": Is a directory (os error 21)"), "{err}");
    assert!(names(&dir).is_empty());
}

#[test]
fn a_failed_write_leaves_neither_a_truncated_file_nor_a_temporary_one() {
    let _serial = serial();
    let dir = fresh_dir("failed");
    let path = dir.join("t.json");
    std::fs::write(&path, "old").unwrap();
    let err = super::write_file("PERFGRAPH_TRACE", &path, |w| {
        w.write_all(b"{\"traceEvents\":[")?;
        Err(std::io::Error::other("cut short"))
    })
    .unwrap_err();
    assert!(err.ends_with(": cut short"), "{err}");
    // The old file is untouched and nothing else is left behind.
    assert_eq!(read(&path), "old");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    super::write_file("PERFGRAPH_TRACE", &path, |w| w.write_all(b"new")).unwrap();
    assert_eq!(read(&path), "new");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn a_write_the_exit_handler_abandons_removes_its_temporary_file_and_keeps_the_old_one() {
    let _serial = serial();
    let dir = fresh_dir("abandon");
    let path = dir.join("t.json");
    std::fs::write(&path, "old").unwrap();
    let mut abandoned = None;
    let err = super::write_file("PERFGRAPH_TRACE", &path, |w| {
        w.write_all(b"partial")?;
        w.flush()?;
        // What the exit handler does when the write makes no progress.
        abandoned = super::abandon_current();
        w.write_all(b" more")
    })
    .unwrap_err();
    assert_eq!(
        abandoned,
        Some(("PERFGRAPH_TRACE", path.clone(), Abandoned::Removed))
    );
    assert!(err.contains("No such file or directory"), "{err}");
    assert_eq!(read(&path), "old");
    assert_eq!(names(&dir), ["t.json"]);
}

/// The temporary files (`.<name>.perfgraph-…`) in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.contains(".perfgraph-"))
        .collect()
}

#[test]
fn a_streamed_file_takes_its_name_once_its_first_bytes_are_in_and_keeps_it() {
    use std::os::unix::fs::MetadataExt;
    let _serial = serial();
    let dir = fresh_dir("stream-name");
    let path = dir.join("t.json");
    std::fs::write(&path, "the previous run's trace").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut stream = Stream::open("PERFGRAPH_TRACE", &path).unwrap();
    // Created under a temporary name; the old file keeps the name until the header is in the new one.
    assert_eq!(temporaries(&dir).len(), 1, "{:?}", names(&dir));
    stream.write_all(b"[\nheader\n").unwrap();
    assert_eq!(read(&path), "the previous run's trace");
    stream.take_name().unwrap();
    // One rename: the name now holds the new file, header first, with the old one's permission bits.
    assert_eq!(names(&dir), ["t.json"]);
    assert_eq!(read(&path), "[\nheader\n");
    let inode = std::fs::metadata(&path).unwrap().ino();
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o7777, 0o640);
    // Written under its name from now on, and left there by a run that ends without finishing it (as a
    // killed one does).
    stream.write_all(b"event\n").unwrap();
    assert_eq!(read(&path), "[\nheader\nevent\n");
    drop(stream);
    assert_eq!(names(&dir), ["t.json"]);
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
    assert_eq!(read(&path), "[\nheader\nevent\n");

    // Finished: the same file, nothing renamed.
    let mut stream = Stream::open("PERFGRAPH_TRACE", &path).unwrap();
    stream.write_all(b"[\nsecond\n").unwrap();
    stream.take_name().unwrap();
    stream.write_all(b"end\n").unwrap();
    stream.finish().unwrap();
    assert_eq!(names(&dir), ["t.json"]);
    assert_eq!(read(&path), "[\nsecond\nend\n");
}

#[test]
fn a_streamed_file_that_never_takes_its_name_leaves_nothing() {
    let _serial = serial();
    let dir = fresh_dir("stream-dropped");
    let path = dir.join("t.pftrace");
    std::fs::write(&path, "old").unwrap();
    let mut stream = Stream::open("PERFGRAPH_TRACE", &path).unwrap();
    stream.write_all(b"header").unwrap();
    // Dropped before it took its name (the header could not be written, say).
    drop(stream);
    assert_eq!(names(&dir), ["t.pftrace"]);
    assert_eq!(read(&path), "old");
}

#[test]
fn a_link_planted_at_the_name_while_the_trace_starts_is_replaced_not_followed() {
    let _serial = serial();
    let dir = fresh_dir("stream-plant");
    let (_elsewhere, victim) = victim("stream-plant-victim");
    let path = dir.join("t.json");
    let mut stream = Stream::open("PERFGRAPH_TRACE", &path).unwrap();
    // Planted after the path was resolved: the rename replaces the link itself.
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    stream.write_all(b"header").unwrap();
    stream.take_name().unwrap();
    assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    assert_eq!(read(&path), "header");
    assert_eq!(read(&victim), "precious");
    stream.finish().unwrap();
    assert_eq!(names(&dir), ["t.json"]);
}

#[test]
fn the_exit_handler_giving_up_on_the_trace_keeps_it_under_its_name() {
    let _serial = serial();
    let dir = fresh_dir("stream-abandon");
    let path = dir.join("t.json");
    let mut stream = Stream::open("PERFGRAPH_TRACE", &path).unwrap();
    stream.write_all(b"[\nheader\n").unwrap();
    stream.take_name().unwrap();
    // While it runs, it is not the file being written at exit.
    assert_eq!(super::abandon_current(), None);
    stream.write_all(b"event\n").unwrap();
    // Given up on while it is finished: kept under its name, as far as it got.
    stream.finishing();
    assert_eq!(
        super::abandon_current(),
        Some(("PERFGRAPH_TRACE", path.clone(), Abandoned::Kept))
    );
    assert_eq!(read(&path), "[\nheader\nevent\n");
    drop(stream);
    assert_eq!(super::abandon_current(), None);
    assert_eq!(names(&dir), ["t.json"]);
}

#[test]
fn a_symlink_is_written_through_and_stays_a_link() {
    let _serial = serial();
    let dir = fresh_dir("symlink");
    let other = fresh_dir("symlink-other");
    std::fs::write(dir.join("target.json"), "old").unwrap();
    std::os::unix::fs::symlink("target.json", dir.join("link")).unwrap();
    // A chain: an absolute link from another directory to the relative one.
    std::os::unix::fs::symlink(dir.join("link"), other.join("chain")).unwrap();
    // A dangling link: the file it names is created.
    std::os::unix::fs::symlink("new.json", dir.join("dangling")).unwrap();

    write(&dir.join("link"), "through link").unwrap();
    assert_eq!(read(dir.join("target.json")), "through link");
    write(&other.join("chain"), "through chain").unwrap();
    assert_eq!(read(dir.join("target.json")), "through chain");
    write(&dir.join("dangling"), "created").unwrap();
    assert_eq!(read(dir.join("new.json")), "created");

    for link in [dir.join("link"), dir.join("dangling"), other.join("chain")] {
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(
            meta.file_type().is_symlink(),
            "{} is no longer a link",
            link.display()
        );
    }
    assert_eq!(names(&dir), ["dangling", "link", "new.json", "target.json"]);
    assert_eq!(names(&other), ["chain"]);
}

#[test]
fn a_link_planted_at_the_old_temporary_name_redirects_nothing() {
    let _serial = serial();
    let dir = fresh_dir("plant");
    let (_elsewhere, victim) = victim("plant-victim");
    // The name the writer used to take (`.<name>.perfgraph-<pid>`), and a few like it.
    let pid = std::process::id();
    for planted in [
        format!(".t.json.perfgraph-{pid}"),
        ".t.json.perfgraph-0".into(),
    ] {
        std::os::unix::fs::symlink(&victim, dir.join(planted)).unwrap();
    }
    write(&dir.join("t.json"), "new").unwrap();
    assert_eq!(read(&victim), "precious");
    assert_eq!(read(dir.join("t.json")), "new");
    assert!(
        std::fs::symlink_metadata(dir.join("t.json"))
            .unwrap()
            .is_file()
    );
    let planted = [
        ".t.json.perfgraph-0".to_owned(),
        format!(".t.json.perfgraph-{pid}"),
    ];
    let mut expected = planted.to_vec();
    expected.push("t.json".into());
    expected.sort();
    assert_eq!(names(&dir), expected, "no temporary file is left");
    for name in planted {
        assert_eq!(std::fs::read_link(dir.join(name)).unwrap(), victim);
    }
}

#[test]
fn temporary_names_are_random_new_files() {
    let _serial = serial();
    let dir = fresh_dir("temp");
    let (_, first) = super::create_temp(&dir, "t.json".as_ref(), None).unwrap();
    let (_, second) = super::create_temp(&dir, "t.json".as_ref(), None).unwrap();
    assert_ne!(first, second);
    for temp in [&first, &second] {
        let name = temp.file_name().unwrap().to_str().unwrap();
        let random = name.strip_prefix(".t.json.perfgraph-").unwrap();
        assert_eq!(random.len(), 16, "{name}");
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
    }
    // The longest file name still leaves room for the temporary one's prefix and suffix.
    let long = "x".repeat(255);
    std::fs::write(dir.join(&long), "old").unwrap();
    write(&dir.join(&long), "new").unwrap();
    assert_eq!(read(dir.join(&long)), "new");
}

#[test]
fn a_replaced_file_keeps_its_permission_bits() {
    let _serial = serial();
    let dir = fresh_dir("mode");
    let path = dir.join("t.json");
    for mode in [0o664, 0o600, 0o640] {
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        write(&path, "new").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, mode);
        assert_eq!(read(&path), "new");
    }
}

#[test]
fn descriptor_names_pipes_and_devices_are_streams() {
    let dir = fresh_dir("streams");
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.join("to-stdout")).unwrap();
    let stream = |path: &str| {
        let target = super::resolve(Path::new(path)).unwrap();
        assert!(
            matches!(target, Target::Stream { .. }),
            "{path}: {target:?}"
        );
        target
    };
    assert_eq!(
        stream("/dev/stdout"),
        Target::Stream {
            path: "/dev/stdout".into(),
            follow: true
        }
    );
    stream("/dev/stderr");
    if Path::new("/proc/self/fd").exists() {
        let fd1 = Path::new("/proc")
            .join(std::process::id().to_string())
            .join("fd/1");
        for path in [
            "/dev/fd/1",
            "/proc/self/fd/1",
            dir.join("to-stdout").to_str().unwrap(),
        ] {
            assert_eq!(
                stream(path),
                Target::Stream {
                    path: fd1.clone(),
                    follow: true
                }
            );
        }
    }
    assert_eq!(
        stream("/dev/null"),
        Target::Stream {
            path: "/dev/null".into(),
            follow: false
        }
    );
    // A regular file under /dev is a file, replaced as any other.
    assert!(!super::target::names_a_descriptor(Path::new(
        "/dev/shm/t.json"
    )));
    assert!(matches!(
        super::resolve(&dir.join("t.json")).unwrap(),
        Target::File { .. }
    ));
}

/// A uid other than ours (`nobody`).
const NOBODY: u32 = 65534;

/// Whether this test can act as another user (only root can); if not, says so on stderr, past the test
/// harness's capture, which hides what a passing test prints.
fn can_act_as_others(test: &str) -> bool {
    if crate::base::sys::effective_uid() == 0 {
        return true;
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "{test}: DID NOT RUN: it needs root, to make a link that another user (uid {NOBODY}) owns"
    );
    false
}

/// Makes the symbolic link `link` to `target` as the user `uid` (`ln -s` run as that user: needs root).
fn link_as(uid: u32, target: &Path, link: &Path) {
    use std::os::unix::process::CommandExt;
    let status = std::process::Command::new("ln")
        .arg("-s")
        .arg(target)
        .arg(link)
        .uid(uid)
        .gid(uid)
        .status()
        .unwrap();
    assert!(status.success(), "ln -s as uid {uid}");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::symlink_metadata(link).unwrap().uid(), uid);
}

/// A fresh directory with the permission bits `mode` (e.g. 0o1777, as `/tmp`), owned by `owner` if given.
fn fresh_dir_with(tag: &str, mode: u32, owner: Option<u32>) -> Scratch {
    let dir = fresh_dir(tag);
    if let Some(uid) = owner {
        std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}

/// The regular file `resolve` leads `path` to, with `fs.protected_symlinks`' rule applied.
fn protected(path: &Path) -> std::io::Result<PathBuf> {
    match super::target::resolve_with(path, true)? {
        Target::File { dir, name } => Ok(dir.join(name)),
        other => panic!("{}: {other:?}", path.display()),
    }
}

#[test]
fn another_users_link_in_a_sticky_world_writable_directory_is_not_followed() {
    if !can_act_as_others("another_users_link_in_a_sticky_world_writable_directory_is_not_followed")
    {
        return;
    }
    // Ours, as `/tmp` is root's.
    let sticky = fresh_dir_with("sticky", 0o1777, None);
    let (victims, victim) = victim("sticky-victims");
    let evil = sticky.join("evil.json");
    link_as(NOBODY, &victim, &evil);
    // Our own link to nobody's: the second link followed is refused all the same.
    let chain = sticky.join("chain.json");
    std::os::unix::fs::symlink(&evil, &chain).unwrap();

    let refusal = format!(
        "Permission denied (os error 13): not following the symbolic link {:?}, which uid {NOBODY} owns \
         in a sticky world-writable directory (fs.protected_symlinks)",
        evil.display().to_string()
    );
    for path in [&evil, &chain] {
        let err = protected(path).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
        assert_eq!(err.to_string(), refusal);
    }
    // With the rule off (`fs.protected_symlinks = 0`), the kernel follows it, and so do we.
    assert_eq!(
        super::target::resolve_with(&evil, false).unwrap(),
        Target::File {
            dir: victims.to_path_buf(),
            name: "victim.txt".into()
        }
    );
    assert_eq!(read(&victim), "precious");
}

#[test]
fn links_the_kernel_follows_are_followed() {
    if !can_act_as_others("links_the_kernel_follows_are_followed") {
        return;
    }
    let (_victims, victim) = victim("follow-victims");
    // Our own link in a sticky world-writable directory.
    let sticky = fresh_dir_with("follow-sticky", 0o1777, None);
    std::os::unix::fs::symlink(&victim, sticky.join("ours.json")).unwrap();
    // A link of the directory's owner, in a sticky world-writable directory of nobody's.
    let nobodys = fresh_dir_with("follow-nobodys", 0o1777, Some(NOBODY));
    link_as(NOBODY, &victim, &nobodys.join("owners.json"));
    // Another user's link where the directory is world-writable but not sticky, or sticky but not
    // world-writable.
    let open = fresh_dir_with("follow-open", 0o777, None);
    link_as(NOBODY, &victim, &open.join("nobodys.json"));
    let closed = fresh_dir_with("follow-closed", 0o1775, None);
    std::os::unix::fs::chown(&closed, None, Some(NOBODY)).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o1775)).unwrap();
    link_as(NOBODY, &victim, &closed.join("nobodys.json"));

    for link in [
        sticky.join("ours.json"),
        nobodys.join("owners.json"),
        open.join("nobodys.json"),
        closed.join("nobodys.json"),
    ] {
        assert_eq!(protected(&link).unwrap(), victim, "{}", link.display());
    }
}
