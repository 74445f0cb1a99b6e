//! What the tests leave behind: nothing outside their own temporary directories.
//!
//! * [`scratch`]: a test's directory, removed when its guard is dropped.
//! * Every process of a test binary that includes this module listens (`PERFGRAPH_LISTEN`, on by default)
//!   in a control-socket directory of the binary's own: before `main`, the process makes
//!   `<tmp>/perfgraph-tests-<pid>` (mode 0700), names it in `XDG_RUNTIME_DIR` (which its children inherit),
//!   and removes it when it exits. Without this, each test process and child would make
//!   `/tmp/perfgraph-<uid>` and leave it there. A test that wants another directory sets
//!   `XDG_RUNTIME_DIR` for its child itself; a child running as another user cannot enter this one
//!   (`PERFGRAPH_LISTEN=off` for it).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Names the process that made the inherited runtime directory, so that its children (this test binary
/// run again, or the programs it runs) take that one rather than making their own. Not a `PERFGRAPH_`
/// name: `child_command` removes those, and perfgraph warns of one it does not know.
const OWNER_VAR: &str = "PG_TESTS_RUNTIME_DIR_OWNER";

/// The pid of the process that made its runtime directory (0: none made here).
static OWNER: AtomicU32 = AtomicU32::new(0);

/// A test's own temporary directory: a `Path` (through `Deref`), removed with what it holds when dropped.
/// A test that fails (its thread panicking) keeps it for a look and says where on stderr (captured and
/// shown with the failure); one that passes leaves nothing.
#[derive(Debug)]
pub struct Scratch(PathBuf);

/// A fresh directory `<tmp>/perfgraph-<tag>-<pid>` (anything there before removed), mode 0755.
pub fn scratch(tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("perfgraph-{tag}-{}", std::process::id()));
    if dir.exists() {
        make_removable(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

impl Scratch {
    /// The directory, as a `PathBuf` to keep.
    pub fn to_path_buf(&self) -> PathBuf {
        self.0.clone()
    }
}

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

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "note: the failed test's directory is kept: {}",
                self.0.display()
            );
        } else {
            make_removable(&self.0);
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Gives `dir` and the directories in it back their owner's rights (a test may have taken them away, to
/// see a write refused), so that they can be removed.
fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_removable(&entry.path());
        }
    }
}

/// Run before `main` (an ELF constructor, as the `ctor` crate makes): only one thread exists then.
#[used]
// SAFETY: `.init_array` holds pointers to `extern "C" fn()`s that the loader calls before `main`; this one
// is such a function.
#[unsafe(link_section = ".init_array")]
static PRIVATE_RUNTIME_DIR: extern "C" fn() = private_runtime_dir;

/// Makes the process's runtime directory and names it in `XDG_RUNTIME_DIR`, unless a parent did (see the
/// module's docs).
extern "C" fn private_runtime_dir() {
    if std::env::var_os(OWNER_VAR).is_some() {
        return;
    }
    let pid = std::process::id();
    let dir = runtime_dir(pid);
    let _ = std::fs::remove_dir_all(&dir);
    let made = std::fs::DirBuilder::new().mode(0o700).create(&dir).is_ok();
    if !made {
        return;
    }
    OWNER.store(pid, Ordering::Relaxed);
    // SAFETY: before `main`, with one thread: nothing reads or writes the environment meanwhile.
    unsafe {
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
        std::env::set_var(OWNER_VAR, pid.to_string());
    }
    // SAFETY: `remove_runtime_dir` is an `extern "C" fn()` that never unwinds. Registered before
    // perfgraph's own exit handler (made at its start, in `main`), it runs after it, when the socket is
    // closed and removed.
    unsafe { libc::atexit(remove_runtime_dir) };
}

/// Removes the runtime directory at the exit of the process that made it (not of a forked child).
extern "C" fn remove_runtime_dir() {
    let pid = std::process::id();
    if OWNER.load(Ordering::Relaxed) == pid {
        let _ = std::fs::remove_dir_all(runtime_dir(pid));
    }
}

fn runtime_dir(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("perfgraph-tests-{pid}"))
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
