//! The control socket's client against what it must not trust: a socket directory another user made first
//! (or one open to others, or a link), a process at the other end that is not the directory's owner, and
//! answers that never end, drip, claim millions of threads, carry terminal commands, or never come (a
//! stopped process). Each is one line from `perfgraph` (exit 2), within bounded memory and time, or, for a
//! stopped process, a `ps` row that says so. A fake process (`examples/hostile_server`) plays the other end;
//! the second user's tests need root, and say visibly when they did not run.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
mod second_user;

use common::{PATIENCE, Reaped, Service, example};
use second_user::{NOBODY, as_nobody, did_not_run, is_root};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// The address-space limit the command runs under, bytes (as tests/hostile.rs): an unbounded read fails
/// here rather than taking the machine's memory.
const LIMIT: u64 = 1 << 30;

/// Peak resident memory `ps`, `dump`, `top` and `report` may reach against a squatted directory, KiB.
const SMALL_KB: i64 = 50 * 1024;

/// A test's directory, open for the second user to reach what it runs (mode 0755): `bin/` holds the fake
/// process, `runtime/` is the `XDG_RUNTIME_DIR`, open to all with the sticky bit, as `/tmp` is.
struct Scratch {
    base: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let base = std::env::temp_dir().join(format!(
            "perfgraph-attach-hostile-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&base);
        // Made first: removed whatever happens next.
        let scratch = Scratch { base: base.clone() };
        for (dir, mode) in [(&base, 0o755), (&base.join("bin"), 0o755)] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let runtime = base.join("runtime");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let server = base.join("bin/hostile_server");
        std::fs::copy(example("hostile_server"), &server).unwrap();
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        scratch
    }

    fn runtime(&self) -> PathBuf {
        self.base.join("runtime")
    }

    /// The socket directory the client looks in first.
    fn sockets(&self) -> PathBuf {
        self.runtime().join("perfgraph")
    }

    /// The fake process listening in `dir`, answering `mode`; as nobody with `nobody`, keeping the
    /// capability to pass directories' permissions with `dac_override`. Its pid once it listens.
    fn server(&self, dir: &Path, mode: &str, nobody: bool, dac_override: bool) -> (Reaped, u32) {
        let mut cmd = Command::new(self.base.join("bin/hostile_server"));
        cmd.arg(dir)
            .arg(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if nobody {
            as_nobody(&mut cmd, dac_override);
        }
        // Another test's thread copying its own fake process may hold a file open for writing across our
        // fork (until its exec): the copy here is then busy for a moment.
        let mut child = loop {
            match cmd.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                spawned => break spawned.unwrap(),
            }
        };
        let mut said = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut said).unwrap();
        assert_eq!(&said, b"listening\n");
        let pid = child.id();
        (Reaped(child), pid)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// What a run of `perfgraph` did: its exit code (`None`: killed after [`PATIENCE`], or by a signal), its
/// output, and its peak resident memory (KiB, its own: `wait4`).
#[derive(Debug)]
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    max_rss_kb: i64,
}

/// `perfgraph args` with `XDG_RUNTIME_DIR=runtime`, under the address-space limit, killed if it runs past
/// [`PATIENCE`].
// Reaped by `wait4`, which gives its own peak memory (`Child::wait` does not).
#[allow(clippy::zombie_processes)]
fn cli(runtime: &Path, args: &[&str]) -> Ran {
    let mut cmd = Command::new(CLI);
    cmd.env("XDG_RUNTIME_DIR", runtime)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let lim = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child: Child = cmd.spawn().unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = r.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        // SAFETY: `status` and `usage` are valid for writing; `pid` is our child, not yet reaped.
        let rc = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if rc == pid {
            break;
        }
        assert_eq!(rc, 0, "wait4: {}", std::io::Error::last_os_error());
        if start.elapsed() > PATIENCE && !killed {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ran {
        code: (libc::WIFEXITED(status) && !killed).then(|| libc::WEXITSTATUS(status)),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        max_rss_kb: usage.ru_maxrss,
    }
}

/// `ran` failed as it should: exit 2, nothing on stdout, one line on stderr that says one of `says`.
fn one_line(ran: &Ran, says: &[&str], what: &str) {
    assert_eq!(ran.code, Some(2), "{what}: {ran:?}");
    assert_eq!(ran.stderr.lines().count(), 1, "{what}: {ran:?}");
    assert!(ran.stderr.starts_with("perfgraph: "), "{what}: {ran:?}");
    assert!(
        says.iter().any(|s| ran.stderr.contains(s)),
        "{what}: expected one of {says:?}: {ran:?}"
    );
}

/// A socket directory that is not the user's own (another user's, one open to others, a link) is not
/// trusted: `ps`, `dump`, `report` and `top` say so in one line (exit 2), show nothing of the fake process
/// in it, and stay small.
#[test]
fn a_squatted_socket_directory_is_refused_with_one_line() {
    let mut cases = vec!["open to others", "symbolic link"];
    if is_root() {
        cases.push("another user's");
    } else {
        did_not_run(
            "a_squatted_socket_directory_is_refused_with_one_line (another user's directory)",
            "acting as a second user needs root",
        );
    }
    for case in cases {
        let scratch = Scratch::new(&case.replace(' ', "-").replace('\'', ""));
        let sockets = scratch.sockets();
        let nobody = case == "another user's";
        match case {
            "open to others" => {
                std::fs::create_dir(&sockets).unwrap();
                std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o777)).unwrap();
            }
            "symbolic link" => {
                let elsewhere = scratch.base.join("elsewhere");
                std::fs::create_dir(&elsewhere).unwrap();
                std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700))
                    .unwrap();
                std::os::unix::fs::symlink(&elsewhere, &sockets).unwrap();
            }
            _ => {
                // Made first by nobody, private to nobody, in a directory anyone may write to.
                std::fs::create_dir(&sockets).unwrap();
                std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
                std::os::unix::fs::chown(&sockets, Some(NOBODY), Some(NOBODY)).unwrap();
            }
        }
        let (_server, pid) = scratch.server(&sockets, "escape", nobody, false);
        let pid = pid.to_string();
        let runtime = scratch.runtime();
        for args in [
            vec!["ps"],
            vec!["dump", &pid],
            vec!["report", &pid],
            vec!["top", &pid],
        ] {
            let ran = cli(&runtime, &args);
            let what = format!("{case}: {args:?}");
            // The fake process is nobody's: `dump` of it may say that it is another user's.
            one_line(&ran, &["not trusted", "is another user's"], &what);
            if args[0] == "ps" {
                assert!(ran.stderr.contains("not trusted"), "{what}: {ran:?}");
                assert_eq!(ran.stdout.lines().count(), 1, "{what}: {ran:?}");
            } else {
                assert_eq!(ran.stdout, "", "{what}");
            }
            assert!(!ran.stdout.contains("PWNED"), "{what}: {ran:?}");
            assert!(ran.max_rss_kb < SMALL_KB, "{what}: {} KiB", ran.max_rss_kb);
        }
    }
}

/// A process at the other end that is not the directory's owner (nor root) is not trusted, though the
/// directory is: it got its socket in (here, with the capability to pass the directory's permissions).
#[test]
fn a_process_that_is_not_the_directory_owner_is_refused() {
    if !is_root() {
        did_not_run(
            "a_process_that_is_not_the_directory_owner_is_refused",
            "acting as a second user needs root",
        );
        return;
    }
    let scratch = Scratch::new("peer");
    let sockets = scratch.sockets();
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (_server, pid) = scratch.server(&sockets, "escape", true, true);
    let ran = cli(&scratch.runtime(), &["ps"]);
    one_line(
        &ran,
        &[&format!(
            "held by uid {NOBODY}, not the directory's owner (0): not trusted"
        )],
        "ps",
    );
    assert!(!ran.stdout.contains(&pid.to_string()), "{ran:?}");
    let ran = cli(&scratch.runtime(), &["dump", &pid.to_string()]);
    one_line(&ran, &["not trusted"], "dump");
}

/// The user's own directory, its own fake process: every answer is held to its bounds (size, count,
/// time), and the names it sends are printed escaped.
#[test]
fn every_answer_is_bounded_and_its_names_escaped() {
    let scratch = Scratch::new("bounds");
    let sockets = scratch.sockets();
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    let runtime = scratch.runtime();

    // Terminal commands in names: printed escaped.
    let (server, pid) = scratch.server(&sockets, "escape", false, false);
    let ran = cli(&runtime, &["ps"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let row = ran
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(pid.to_string().as_str()))
        .unwrap_or_else(|| panic!("{ran:?}"));
    assert!(row.ends_with(r"\x1b]2;PWNED\x07evil"), "{row}");
    assert!(!ran.stdout.contains('\u{1b}'), "{ran:?}");
    drop(server);

    // `ps` lists every process in the directory, so its cases run here one at a time; the cases that
    // name a pid run beside them (`the_answers_to_a_pid_are_bounded`).
    check_bounded(
        &scratch,
        &[
            // A status that lists threads without end.
            (
                "threads",
                &["ps"],
                "limit: more than 65536 threads",
                SMALL_KB,
            ),
            // Answers without end: the status's limit.
            ("endless", &["ps"], "larger than 8388608 bytes", SMALL_KB),
            // An answer that drips: given up on at its deadline.
            ("drip", &["ps"], "did not come whole within 5 s", SMALL_KB),
        ],
    );

    // `ps` of a process that does not answer: shown as stopped.
    let (_server, pid) = scratch.server(&sockets, "silent", false, false);
    let ran = cli(&runtime, &["ps"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        ran.stdout
            .lines()
            .any(|l| l.starts_with(&format!("{pid:>7}")) && l.ends_with("stopped (not responding)")),
        "{ran:?}"
    );
}

/// As [`every_answer_is_bounded_and_its_names_escaped`], for the requests that name a pid (each client
/// talks to that process alone), in a directory of their own so that they run beside its `ps` cases.
#[test]
fn the_answers_to_a_pid_are_bounded() {
    let scratch = Scratch::new("pid-bounds");
    let sockets = scratch.sockets();
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
    check_bounded(
        &scratch,
        &[
            // Answers without end: the status's limit (`top`), the dump's (which `dump` holds whole).
            ("endless", &["top"], "larger than 8388608 bytes", SMALL_KB),
            (
                "endless",
                &["dump"],
                "larger than 67108864 bytes",
                100 * 1024,
            ),
            (
                "endless",
                &["report"],
                "larger than 67108864 bytes",
                SMALL_KB,
            ),
            // No answer at all.
            ("silent", &["dump"], "is not responding", SMALL_KB),
            ("silent", &["top"], "is not responding", SMALL_KB),
        ],
    );
}

/// Each case, one after another: the fake process answering `mode` in `scratch`'s socket directory, and
/// `perfgraph args` (with its pid, unless `ps`) says `says` in one line (exit 2) and stays under `max_kb`.
fn check_bounded(scratch: &Scratch, cases: &[(&str, &[&str], &str, i64)]) {
    let (sockets, runtime) = (scratch.sockets(), scratch.runtime());
    for &(mode, args, says, max_kb) in cases {
        let (_server, pid) = scratch.server(&sockets, mode, false, false);
        let pid = pid.to_string();
        let mut args = args.to_vec();
        if args[0] != "ps" {
            args.push(&pid);
        }
        let ran = cli(&runtime, &args);
        let what = format!("{mode}: {args:?}");
        if mode == "endless" {
            // The size limit comes first where the server can write (8 MiB in a few milliseconds); a
            // server kept off the cores by a busy machine meets the answer's deadline first (5 s for a
            // status, 30 s for a dump's 64 MiB: both were seen under two CPU burners and builds). Either
            // bound ends the wait with one line and bounded memory.
            one_line(&ran, &[says, "did not come whole within"], &what);
        } else {
            one_line(&ran, &[says], &what);
        }
        assert!(ran.max_rss_kb < max_kb, "{what}: {} KiB", ran.max_rss_kb);
    }
}

/// A stopped process (Ctrl-Z) is a `ps` row that says so, not a `ps` that waits for it; `top` and `dump`
/// of it are one line.
#[test]
fn a_stopped_process_is_shown_as_stopped() {
    let scratch = Scratch::new("stopped");
    let runtime = scratch.runtime();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let service = Service::start(&runtime);
    let pid = service.pid();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGSTOP) };
    let ran = cli(&runtime, &["ps"]);
    let top = cli(&runtime, &["top", &pid.to_string()]);
    let dump = cli(&runtime, &["dump", &pid.to_string()]);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGCONT) };
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        ran.stdout
            .lines()
            .any(|l| l.starts_with(&format!("{pid:>7}")) && l.ends_with("stopped (not responding)")),
        "{ran:?}"
    );
    one_line(&top, &["is not responding"], "top");
    one_line(&dump, &["is not responding"], "dump");
    // Going again, it answers again.
    let ran = cli(&runtime, &["ps"]);
    assert!(ran.stdout.contains(" service"), "{ran:?}");
    let out = service.stop();
    assert!(out.status.success(), "{out:?}");
}

/// Another user made the socket directory first, open to all, and runs a fake process in it: this user's
/// programs still listen (in a private directory next to it, the second taking the first's), `ps` finds
/// them and says in one line that it does not trust the directory, `dump` reads them; the fake process is
/// one line for `ps`, `dump` and `top`, all within bounded memory.
#[test]
fn the_users_programs_listen_beside_a_squatted_directory() {
    if !is_root() {
        did_not_run(
            "the_users_programs_listen_beside_a_squatted_directory",
            "acting as a second user needs root (tests/attach.rs squats with this user's own directory)",
        );
        return;
    }
    let scratch = Scratch::new("squatted");
    let sockets = scratch.sockets();
    let runtime = scratch.runtime();
    std::fs::create_dir(&sockets).unwrap();
    std::os::unix::fs::chown(&sockets, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_fake, fake) = scratch.server(&sockets, "escape", true, false);
    let start = |runtime: &Path| {
        Reaped(
            Command::new(example("service"))
                .env("XDG_RUNTIME_DIR", runtime)
                .env("PERFGRAPH_LIVE", "off")
                .env("PERFGRAPH_CAPTURE", "off")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    };
    // `ps` once every one of `pids` is listed.
    let listed = |pids: &[String]| {
        let begun = Instant::now();
        loop {
            let ps = cli(&runtime, &["ps"]);
            let row = |pid: &String| {
                ps.stdout
                    .lines()
                    .any(|l| l.split_whitespace().next() == Some(pid.as_str()))
            };
            if pids.iter().all(row) {
                return ps;
            }
            assert!(begun.elapsed() < PATIENCE, "never listed: {ps:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // The second starts once the first listens: it takes the first's directory.
    let mut programs = vec![start(&runtime)];
    listed(&[programs[0].0.id().to_string()]);
    programs.push(start(&runtime));
    let pids: Vec<String> = programs.iter().map(|p| p.0.id().to_string()).collect();
    let ps = listed(&pids);
    one_line(
        &ps,
        &["perfgraph is not yours (owner 65534) and not private (mode 0777): not trusted"],
        "ps",
    );
    assert_eq!(ps.stdout.lines().count(), 3, "{ps:?}");
    assert!(!ps.stdout.contains(&format!("{fake:>7}")), "{ps:?}");
    assert!(ps.max_rss_kb < SMALL_KB, "ps: {} KiB", ps.max_rss_kb);
    for pid in &pids {
        let dump = cli(&runtime, &["dump", pid]);
        assert_eq!(dump.code, Some(0), "{dump:?}");
        assert!(dump.stdout.contains("\"residual\""));
        assert!(dump.max_rss_kb < SMALL_KB, "dump: {} KiB", dump.max_rss_kb);
    }
    for args in [["dump", &fake.to_string()], ["top", &fake.to_string()]] {
        let ran = cli(&runtime, &args);
        one_line(
            &ran,
            &["not trusted", "is another user's"],
            &format!("{args:?}"),
        );
        assert!(
            ran.max_rss_kb < SMALL_KB,
            "{args:?}: {} KiB",
            ran.max_rss_kb
        );
    }
    // Both in the one private directory next to the squatted one; each said so once.
    let fallbacks: Vec<_> = std::fs::read_dir(&runtime)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("perfgraph-0-"))
        .collect();
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    for program in &mut programs {
        drop(program.0.stdin.take());
        let mut err = String::new();
        program
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(program.0.wait().unwrap().success());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("is not private") && err.contains(" instead"),
            "{err}"
        );
    }
}
