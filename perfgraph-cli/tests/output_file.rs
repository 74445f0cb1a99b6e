//! `-o FILE` is written through a temporary file renamed over FILE at the end: `perfgraph dump -o` and
//! `perfgraph trace -o` on a full disk fail with one line naming the file, and leave the FILE that was there
//! as it was and no temporary file. The full disk is a small tmpfs, filled (the test runs as root, and says so
//! loudly when it cannot mount one); the same failure is also made with `RLIMIT_FSIZE` (writes past it fail
//! with `EFBIG`), which needs no mount. A write that succeeds replaces the file, keeping its permission bits.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::Service;

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// What the file held before: valid JSON, which a failed write must leave as it was.
const OLD: &str = "{\"old\": \"file\"}\n";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A tmpfs of 256 KiB mounted at a scratch directory, unmounted when dropped (and the directory removed).
struct Tmpfs(common::Scratch);

impl Tmpfs {
    /// `None`, with a loud note, when it cannot be mounted (not root, no `CAP_SYS_ADMIN`).
    fn mount(name: &str) -> Option<Tmpfs> {
        let dir = common::scratch("perfgraph-full-disk", name);
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"])
            .arg(&dir)
            .output();
        match mounted {
            Ok(o) if o.status.success() => Some(Tmpfs(dir)),
            other => {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "note: {name}: could NOT mount a small tmpfs ({other:?}); the full disk is not \
                     tested, only RLIMIT_FSIZE's failed writes"
                );
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// Fills the file system of `dir` to the last byte (a file `filler`).
fn fill(dir: &Path) {
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = [7u8; 4096];
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
    let _ = f.sync_all();
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

/// The commands that write `-o FILE` (FILE follows): `dump`, and a 1-second `trace`.
fn commands(pid: u32) -> [(&'static str, Vec<String>); 2] {
    let pid = pid.to_string();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect();
    [
        ("dump", args(&["dump", &pid, "-o"])),
        ("trace", args(&["trace", &pid, "--seconds", "1", "-o"])),
    ]
}

/// Runs each command through `command` (`perfgraph` with its environment and limits): each must fail with
/// one line naming `file` and `why`, and leave the old file and nothing else but `others` in its directory.
fn each_fails_and_leaves_the_old_file(
    pid: u32,
    file: &Path,
    command: &dyn Fn() -> Command,
    why: &str,
    others: &[&str],
) {
    let dir = file.parent().unwrap();
    for (what, args) in commands(pid) {
        let out = command().args(&args).arg(file).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {out:?}");
        assert!(
            err.starts_with("perfgraph: ") && err.lines().count() == 1,
            "{what}: {err}"
        );
        assert!(
            err.contains(&file.display().to_string()) && err.contains(why),
            "{what}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(file).unwrap(),
            OLD,
            "{what} changed the file it could not write"
        );
        let mut want: Vec<String> = others.iter().map(|s| s.to_string()).collect();
        want.push(file.file_name().unwrap().to_string_lossy().into_owned());
        want.sort();
        assert_eq!(names(dir), want, "{what} left something behind");
    }
}

/// `perfgraph`, looking for processes in `runtime`.
fn perfgraph(runtime: &Path) -> Command {
    let mut cmd = Command::new(CLI);
    cmd.env("XDG_RUNTIME_DIR", runtime);
    cmd
}

#[test]
fn a_full_disk_leaves_the_old_file_and_no_temporary_file() {
    let runtime = common::scratch("perfgraph-full-disk", "runtime");
    let service = Service::start(&runtime);
    let Some(disk) = Tmpfs::mount("tmpfs") else {
        drop(service);
        return;
    };
    let file = disk.0.join("out.json");
    std::fs::write(&file, OLD).unwrap();
    fill(&disk.0);
    let full = || perfgraph(&runtime);
    each_fails_and_leaves_the_old_file(
        service.pid(),
        &file,
        &full,
        "No space left on device",
        &["filler"],
    );
    let out = service.stop();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text(&out.stderr), "", "the service's stderr");
}

#[test]
fn a_write_past_the_file_size_limit_leaves_the_old_file_and_no_temporary_file() {
    let runtime = common::scratch("perfgraph-fsize", "runtime");
    let service = Service::start(&runtime);
    let dir = common::scratch("perfgraph-fsize", "out");
    let file = dir.join("out.json");
    std::fs::write(&file, OLD).unwrap();
    let limited = || {
        let mut cmd = perfgraph(&runtime);
        // SAFETY: the closure runs in the forked child before exec and calls only async-signal-safe
        // functions (`signal`, `setrlimit`) with valid arguments.
        unsafe {
            cmd.pre_exec(|| {
                // A write past the limit fails with EFBIG instead of killing the command.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit {
                    rlim_cur: 64,
                    rlim_max: 64,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd
    };
    each_fails_and_leaves_the_old_file(service.pid(), &file, &limited, "File too large", &[]);

    // Without the limit, each replaces the file (its permission bits kept), and leaves nothing else.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    for (what, args) in commands(service.pid()) {
        let start = std::time::Instant::now();
        let out = loop {
            let out = perfgraph(&runtime).args(&args).arg(&file).output().unwrap();
            // The failed trace's window ends at the process's next look after its client went.
            if !text(&out.stderr).contains("busy") || start.elapsed() > common::PATIENCE {
                break out;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(out.status.success(), "{what}: {out:?}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(json.is_object() || json.is_array(), "{what}");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "{what}");
        assert_eq!(names(&dir), ["out.json"], "{what}");
    }
    let out = service.stop();
    assert!(out.status.success(), "{out:?}");
}
