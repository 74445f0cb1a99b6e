//! A setuid-root instrumented program, run by another user (uid 65534) who sets `PERFGRAPH_JSON`,
//! `PERFGRAPH_TRACE` and `PERFGRAPH_FOLDED` to root-owned files: the kernel starts it in secure-execution
//! mode (`AT_SECURE`), and it must leave those files as they were, say once that it ignored the
//! variables, and otherwise run as without them. The same binary run by root itself writes its JSON where
//! asked, so the test would see a write.
//!
//! It needs root (to make a setuid-root program and to become another user), and a directory that is not
//! mounted `nosuid`: without them it says that it did not run.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What the ignored variables' warning says (perfgraph-core's `base::secure::IGNORED`).
const IGNORED: &str = "PERFGRAPH_* variables are ignored, but for PERFGRAPH_VERBOSITY=off";

/// A directory every user can enter, on a file system that honours setuid bits, or why there is none.
/// Removed when dropped.
fn setuid_dir() -> Result<common::Scratch, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("it needs root, to make a setuid-root program".into());
    }
    for base in [std::env::temp_dir(), PathBuf::from("/var/tmp")] {
        let dir = base.join(format!("perfgraph-setuid-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        if std::fs::create_dir(&dir).is_err() {
            continue;
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // SAFETY: an all-zero statvfs is a valid value of the plain C struct; statvfs only writes into it.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statvfs.
        let ok = unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0;
        // The other user must reach the program: every directory above it open to others (a `TMPDIR`
        // under a 0700 home is not).
        let reachable = dir
            .ancestors()
            .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0));
        if ok && reachable && st.f_flag & libc::ST_NOSUID == 0 {
            return Ok(common::Scratch::adopt(dir));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    Err("no directory here honours setuid bits and is open to other users (all are mounted nosuid, or \
         under a directory closed to others)"
        .into())
}

/// `program` with the given `PERFGRAPH_*` settings (the rest cleared), run as uid/gid 65534 if `nobody`.
fn run(program: &Path, envs: &[(&str, &str)], nobody: bool) -> Output {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars() {
        if name.starts_with("PERFGRAPH_") {
            cmd.env_remove(name);
        }
    }
    cmd.envs(envs.iter().copied())
        .env("REQUESTS", "2")
        .env("TICKS", "10")
        .env("XDG_RUNTIME_DIR", program.parent().unwrap())
        .stdin(Stdio::null());
    if nobody {
        // SAFETY: the closure makes only async-signal-safe system calls (setgroups, setresgid, setresuid).
        unsafe {
            cmd.pre_exec(|| {
                let check = |r: libc::c_int| {
                    if r == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                };
                check(libc::setgroups(0, std::ptr::null()))?;
                check(libc::setresgid(65534, 65534, 65534))?;
                check(libc::setresuid(65534, 65534, 65534))
            });
        }
    }
    cmd.output().unwrap()
}

#[test]
fn a_setuid_program_leaves_root_owned_files_alone() {
    let dir = match setuid_dir() {
        Ok(dir) => dir,
        Err(why) => {
            // To the process's stderr itself (`eprintln!` is captured by the test harness): visible.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr().lock(),
                "note: a_setuid_program_leaves_root_owned_files_alone did NOT run: {why}"
            );
            return;
        }
    };
    let program = dir.join("requests");
    std::fs::copy(common::example("requests"), &program).unwrap();
    // Root's (the test runs as root), setuid, run by anyone.
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let victims: Vec<PathBuf> = ["json", "trace.json", "folded"]
        .iter()
        .map(|name| dir.join(format!("victim.{name}")))
        .collect();
    for victim in &victims {
        std::fs::write(victim, "root's own\n").unwrap();
        std::fs::set_permissions(victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let settings = [
        ("PERFGRAPH_JSON", victims[0].to_str().unwrap()),
        ("PERFGRAPH_TRACE", victims[1].to_str().unwrap()),
        ("PERFGRAPH_FOLDED", victims[2].to_str().unwrap()),
        ("PERFGRAPH_REPORT", "graph"),
    ];
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing();

    let out = run(&program, &settings, true);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    for victim in &victims {
        assert_eq!(
            std::fs::read_to_string(victim).unwrap(),
            "root's own\n",
            "{} was written by a setuid program:\n{stderr}",
            victim.display()
        );
    }
    assert_eq!(listing(), before, "files left beside them:\n{stderr}");
    // Said once; no report (PERFGRAPH_REPORT was ignored too); the program's own output as ever.
    assert_eq!(stderr.matches(IGNORED).count(), 1, "{stderr}");
    assert!(!stderr.contains("Performance Graph"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("served;"));

    // PERFGRAPH_VERBOSITY=off is taken, silently.
    let out = run(&program, &[("PERFGRAPH_VERBOSITY", "off")], true);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");

    // The control: the same binary run by root itself (no secure execution) writes where asked.
    let written = dir.join("root.json");
    let out = run(
        &program,
        &[("PERFGRAPH_JSON", written.to_str().unwrap())],
        false,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::read_to_string(&written)
            .unwrap()
            .contains("\"serve\"")
    );
}
