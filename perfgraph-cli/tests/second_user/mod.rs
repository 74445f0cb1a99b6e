//! Acting as a second user (uid and gid 65534, nobody), for the tests that need one: only root can, and a
//! test that cannot says so on its process's stderr, visibly, rather than pass in silence.

#![allow(dead_code)]

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The second user's uid and gid.
pub const NOBODY: u32 = 65534;

/// Whether this test runs as root: only root can act as a second user.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
    })
}

/// Says that `test` did not run, and why, on the process's own stderr (`eprintln!` is captured by the test
/// harness): visible.
pub fn did_not_run(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "note: {test} did NOT run: {why}");
}

/// A copy of `program` in `dir` (made mode 0755: a directory of the test's own, in the temporary
/// directory), where the second user can run it although the checkout and the target directory may be
/// under a 0700 directory (a root's home). Runs of it must go through [`output`]: another test's thread may
/// still hold the copy open for writing, inherited across its fork, for a moment.
pub fn reachable_copy(program: &Path, dir: &Path) -> PathBuf {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let copy = dir.join(program.file_name().unwrap());
    std::fs::copy(program, &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

/// `cmd.output()`, again while the program is busy being written (`ETXTBSY`: see [`reachable_copy`]).
pub fn output(cmd: &mut Command) -> std::io::Result<Output> {
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            done => return done,
        }
    }
}

/// Has `cmd` run as nobody; with `dac_override`, keeping the capability to pass directories' permissions.
/// What it runs must be where nobody can reach it (the checkout may be under a 0700 directory).
pub fn as_nobody(cmd: &mut Command, dac_override: bool) {
    // SAFETY: the closure makes only async-signal-safe system calls (prctl, setgroups, setresgid,
    // setresuid, capset) on plain stack data, in the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || become_nobody(dac_override));
    }
}

fn become_nobody(dac_override: bool) -> std::io::Result<()> {
    const CAP_DAC_OVERRIDE: u32 = 1;
    const VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let check = |rc: libc::c_long| {
        if rc < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: plain system calls on valid arguments (the structs are the kernel's layout for capset).
    unsafe {
        check(libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0) as libc::c_long)?;
        check(libc::setgroups(0, std::ptr::null()) as libc::c_long)?;
        check(libc::setresgid(NOBODY, NOBODY, NOBODY) as libc::c_long)?;
        check(libc::setresuid(NOBODY, NOBODY, NOBODY) as libc::c_long)?;
        if dac_override {
            let bit = 1 << CAP_DAC_OVERRIDE;
            let header = Header {
                version: VERSION_3,
                pid: 0,
            };
            let data = [
                Data {
                    effective: bit,
                    permitted: bit,
                    inheritable: bit,
                },
                Data {
                    effective: 0,
                    permitted: 0,
                    inheritable: 0,
                },
            ];
            check(libc::syscall(libc::SYS_capset, &header, data.as_ptr()))?;
            check(libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_RAISE,
                CAP_DAC_OVERRIDE as libc::c_ulong,
                0,
                0,
            ) as libc::c_long)?;
        }
    }
    Ok(())
}
