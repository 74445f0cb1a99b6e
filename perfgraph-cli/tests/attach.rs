//! Looking into a running program, end to end: a long-running instrumented child (`examples/service`) is
//! found by `perfgraph ps`, dumped mid-section (its running sections in the JSON), reported by pid, and
//! traced for a second (a valid trace of that window, in both formats: the Perfetto one read by Perfetto's
//! own Python classes when they are installed); its control socket refuses another user, survives 1,000
//! clients that send garbage or hang, and is gone when it exits. Each test has a private
//! `XDG_RUNTIME_DIR`, so its sockets are its own.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use window::*;

use serde_json::Value;

mod common;
mod second_user;
#[path = "attach/window.rs"]
mod window;

use common::{PATIENCE, Service, example};
use second_user::is_root;

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

fn service_example() -> PathBuf {
    example("service")
}

fn scratch(name: &str) -> common::Scratch {
    common::scratch("perfgraph-attach", name)
}

fn cli(runtime: &Path, args: &[&str]) -> Output {
    Command::new(CLI)
        .env("XDG_RUNTIME_DIR", runtime)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What the service printed, unaffected by what was asked of it: its one line, nothing on stderr, exit 0.
fn unharmed(out: &Output) {
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out.stdout).starts_with("done "), "{out:?}");
    assert_eq!(text(&out.stderr), "", "stderr");
}

#[test]
fn ps_dump_report_and_trace_a_running_process() {
    let runtime = scratch("e2e");
    let service = Service::start(&runtime);
    let pid = service.pid().to_string();

    // `ps`: the process, with its two threads and three sections.
    let ps = cli(&runtime, &["ps"]);
    assert!(ps.status.success(), "{ps:?}");
    let ps = text(&ps.stdout);
    let row = ps
        .lines()
        .find(|l| l.split_whitespace().next() == Some(pid.as_str()))
        .unwrap_or_else(|| panic!("{pid} not in:\n{ps}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols.last(), Some(&"service"), "{row}");
    assert_eq!(cols[cols.len() - 3], "2", "threads: {row}");
    assert_eq!(cols[cols.len() - 2], "3", "sections: {row}");

    // `dump`, mid-section: `solve` on the main thread and `assemble` on the worker are running.
    let file = runtime.join("now.json");
    let dump = cli(&runtime, &["dump", &pid, "-o", file.to_str().unwrap()]);
    assert!(dump.status.success(), "{dump:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["format"], "perfgraph-call-tree");
    assert_eq!(v["pid"].as_u64(), Some(u64::from(service.pid())));
    let node = |name: &str| {
        v["tree"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    assert_eq!(node("solve")["running"], 1);
    assert_eq!(node("assemble")["running"], 1);
    assert!(node("residual")["calls"].as_u64().unwrap() > 0);
    // ... which `report` reads like any run's file, and `report <pid>` prints directly.
    let from_file = cli(&runtime, &["report", file.to_str().unwrap(), "--graph"]);
    assert!(from_file.status.success(), "{from_file:?}");
    assert!(text(&from_file.stdout).contains("|   solve "));
    let live = cli(&runtime, &["report", &pid, "--threads"]);
    assert!(live.status.success(), "{live:?}");
    let live = text(&live.stdout);
    assert!(
        live.contains("Threads:") && live.contains("| worker "),
        "{live}"
    );
    assert!(live.contains("calls had not ended"), "{live}");

    // `trace` for a second, both formats.
    for name in ["window.json", "window.pftrace"] {
        let path = runtime.join(name);
        let before = Instant::now();
        let t = cli(
            &runtime,
            &[
                "trace",
                &pid,
                "--seconds",
                "1",
                "-o",
                path.to_str().unwrap(),
            ],
        );
        assert!(t.status.success(), "{t:?}");
        assert!(before.elapsed() >= Duration::from_secs(1), "a 1 s window");
        assert!(text(&t.stderr).contains("bytes in"), "{t:?}");
        if name.ends_with(".json") {
            check_chrome_window(&path);
        } else {
            check_perfetto_window(&path);
        }
    }
    unharmed(&service.stop());
}

/// The descriptors of process `pid` that are sockets: (fd, whether it is close-on-exec).
fn socket_fds(pid: u32) -> Vec<(i32, bool)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let fd: i32 = e.file_name().to_string_lossy().parse().unwrap();
        let socket =
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"));
        if !socket {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap_or_default();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .unwrap_or(0);
        found.push((fd, flags & libc::O_CLOEXEC as u32 != 0));
    }
    found
}

#[test]
fn the_socket_is_private_and_gone_at_exit() {
    let runtime = scratch("private");
    let service = Service::start(&runtime);
    let dir = runtime.join("perfgraph");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&service.socket()), 0o600);
    // With a client connected: the listener and the client's connection, both close-on-exec, above fd 2.
    let client = UnixStream::connect(service.socket()).unwrap();
    let start = Instant::now();
    while socket_fds(service.pid()).len() < 2 {
        assert!(
            start.elapsed() < PATIENCE,
            "{:?}",
            socket_fds(service.pid())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for (fd, cloexec) in socket_fds(service.pid()) {
        assert!(fd > 2 && cloexec, "fd {fd}, close-on-exec {cloexec}");
    }
    drop(client);
    let socket = service.socket();
    unharmed(&service.stop());
    assert!(!socket.exists(), "the socket is removed at exit");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

/// A program that closed its standard error finds nothing of perfgraph's on fd 2: not the file it reads
/// resident memory from, not the socket, not a client's connection.
#[test]
fn nothing_lands_on_a_closed_standard_descriptor() {
    let runtime = scratch("stdio");
    let mut child = Command::new(service_example())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off")
        .env("SERVICE_CLOSE_STDERR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let socket = runtime
        .join("perfgraph")
        .join(format!("{}.sock", child.id()));
    let start = Instant::now();
    while !socket.exists() {
        assert!(start.elapsed() < PATIENCE, "the service never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let client = UnixStream::connect(&socket).unwrap();
    while socket_fds(child.id()).len() < 2 {
        assert!(start.elapsed() < PATIENCE, "{:?}", socket_fds(child.id()));
        std::thread::sleep(Duration::from_millis(20));
    }
    let fd2 = std::fs::read_link(format!("/proc/{}/fd/2", child.id()));
    drop(client);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(fd2.is_err(), "fd 2 is {fd2:?}");
}

#[test]
fn a_stale_socket_of_a_dead_process_is_removed() {
    let runtime = scratch("stale");
    let dir = runtime.join("perfgraph");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A process that is gone, its socket left (as SIGKILL leaves it).
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let stale = dir.join(format!("{dead_pid}.sock"));
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    assert!(stale.exists());
    // `ps` removes it (and lists nothing).
    let ps = cli(&runtime, &["ps"]);
    assert!(ps.status.success());
    assert_eq!(text(&ps.stdout).lines().count(), 1, "{}", text(&ps.stdout));
    assert!(!stale.exists(), "ps removes a dead process's socket");
    // So does the next start.
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let service = Service::start(&runtime);
    assert!(!stale.exists(), "a start removes a dead process's socket");
    unharmed(&service.stop());
}

/// A pid that no process has here: a child's, reaped.
fn dead_pid() -> u32 {
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    pid
}

/// The sweep of stale sockets judges a socket by whether it takes a connection, never by its pid: a socket
/// named for a pid that does not exist here, with a listener behind it (a process of another PID namespace
/// sharing the directory), is left alone; one nothing listens on is removed.
#[test]
fn the_sweep_removes_only_sockets_that_refuse_a_connection() {
    let runtime = scratch("namespace");
    let dir = runtime.join("perfgraph");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let (live_pid, dead_pid) = (dead_pid(), dead_pid());
    let live = dir.join(format!("{live_pid}.sock"));
    let dead = dir.join(format!("{dead_pid}.sock"));
    let listener = std::os::unix::net::UnixListener::bind(&live).unwrap();
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    assert!(!Path::new(&format!("/proc/{live_pid}")).exists());
    // An instrumented process starts in that directory and sweeps it.
    let service = Service::start(&runtime);
    assert!(
        live.exists(),
        "the socket of a live listener whose pid does not exist here was removed"
    );
    assert!(!dead.exists(), "a socket nothing listens on is removed");
    // The listener was not harmed: it still takes connections.
    assert!(UnixStream::connect(&live).is_ok());
    drop(listener);
    unharmed(&service.stop());
}

/// A socket directory that is not private (a link, one open to others) is left for a private one next to
/// it, `perfgraph-<uid>-XXXXXX`: the program says so in one line and listens there, where `ps` and `dump`
/// find it; `ps` also says, in one line, that it does not trust the directory.
#[test]
fn a_directory_that_is_not_private_is_left_for_a_private_one() {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    for (what, make) in [
        ("symbolic link", make_link as fn(&Path)),
        ("group or others", make_open),
    ] {
        let runtime = scratch(&what.replace(' ', "-"));
        make(&runtime);
        let mut child = common::Reaped(
            Command::new(service_example())
                .env("XDG_RUNTIME_DIR", &runtime)
                .env("PERFGRAPH_LIVE", "off")
                .env("PERFGRAPH_CAPTURE", "off")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let pid = child.0.id().to_string();
        let start = Instant::now();
        let ps = loop {
            let ps = cli(&runtime, &["ps"]);
            if text(&ps.stdout)
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&pid))
            {
                break ps;
            }
            assert!(start.elapsed() < PATIENCE, "{what}: never listed: {ps:?}");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(ps.status.code(), Some(2), "{what}: {ps:?}");
        let err = text(&ps.stderr);
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains("/perfgraph is ") && err.ends_with(": not trusted\n"),
            "{err}"
        );
        let dump = cli(&runtime, &["dump", &pid]);
        assert!(dump.status.success(), "{what}: {dump:?}");
        assert!(text(&dump.stdout).contains("\"residual\""), "{what}");
        // Its directory: private, next to the one refused.
        let fallbacks: Vec<PathBuf> = std::fs::read_dir(&runtime)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("perfgraph-{uid}-")))
            })
            .collect();
        assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
        let mode = std::fs::symlink_metadata(&fallbacks[0])
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{}", fallbacks[0].display());
        assert!(fallbacks[0].join(format!("{pid}.sock")).exists());
        drop(child.0.stdin.take());
        let (mut stdout, mut stderr) = (String::new(), String::new());
        child
            .0
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        child
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(child.0.wait().unwrap().success());
        assert!(stdout.starts_with("done "), "{stdout}");
        let err = stderr;
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("perfgraph: warning: the directory")
                && err.contains(what)
                && err.contains(&format!("is in \"{}\" instead", fallbacks[0].display())),
            "{err}"
        );
        // Nothing was put where the link leads, and nothing is left in its own directory.
        assert_eq!(
            std::fs::read_dir(runtime.join("elsewhere")).map_or(0, |d| d.count()),
            0
        );
        assert_eq!(std::fs::read_dir(&fallbacks[0]).unwrap().count(), 0);
    }
}

fn make_link(runtime: &Path) {
    std::fs::create_dir_all(runtime.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(runtime.join("elsewhere"), runtime.join("perfgraph")).unwrap();
}

fn make_open(runtime: &Path) {
    let dir = runtime.join("perfgraph");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `perfgraph dump <pid>` run as uid/gid 65534 (nobody), with `XDG_RUNTIME_DIR=runtime` (`None`: nobody's
/// own directory); with `dac_override`, keeping the capability to pass the directory's permissions, so
/// that only the client's and the socket's own checks stand in its way. An error: it could not run as
/// nobody (no right to change user, or a path to `cli`, the command's copy, that nobody may not take).
fn dump_as_nobody(
    cli: &Path,
    runtime: Option<&Path>,
    pid: u32,
    dac_override: bool,
) -> std::io::Result<Output> {
    let mut cmd = Command::new(cli);
    match runtime {
        Some(dir) => cmd.env("XDG_RUNTIME_DIR", dir),
        None => cmd.env_remove("XDG_RUNTIME_DIR"),
    };
    cmd.args(["dump", &pid.to_string()]);
    second_user::as_nobody(&mut cmd, dac_override);
    second_user::output(&mut cmd)
}

#[test]
fn another_user_is_refused() {
    if !is_root() {
        // To the process's stderr itself (`eprintln!` is captured by the test harness): visible.
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: another_user_is_refused did NOT run: acting as a second user needs root"
        );
        return;
    }
    let runtime = scratch("uid");
    // The command nobody runs, copied where nobody can reach it: the target directory may not be.
    let bin = scratch("uid-bin");
    let nobodys_cli = second_user::reachable_copy(Path::new(CLI), &bin);
    let service = Service::start(&runtime);
    let pid = service.pid();
    // However it is kept out, the one line says the process is there and refused: never "no such process".
    let refused = format!("perfgraph: process {pid} is another user's (permission denied)\n");
    for (runtime, dac_override, how) in [
        // Its own directory: the process's socket is not there.
        (None, false, "in nobody's own directory"),
        // The process's directory keeps them out (EACCES).
        (Some(&*runtime), false, "in the process's directory"),
        // Past the directory's permissions (CAP_DAC_OVERRIDE): the client does not trust another user's
        // directory, and the socket would refuse the peer's uid.
        (Some(&*runtime), true, "past the directory"),
    ] {
        let out = match dump_as_nobody(&nobodys_cli, runtime, pid, dac_override) {
            Ok(out) => out,
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "note: another_user_is_refused did NOT run: {} cannot run as user nobody \
                     (65534): {e}",
                    nobodys_cli.display()
                );
                return;
            }
        };
        assert_eq!(out.status.code(), Some(2), "{how}: {out:?}");
        assert_eq!(text(&out.stderr), refused, "{how}");
        assert!(out.stdout.is_empty(), "{how}");
    }
    // Root (this test) is answered.
    let ok = cli(&runtime, &["dump", &service.pid().to_string()]);
    assert!(ok.status.success(), "{ok:?}");
    unharmed(&service.stop());
}

/// Open descriptors of process `pid`.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Resident memory of process `pid`, KiB.
fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn a_thousand_clients_that_send_garbage_or_hang_do_no_harm() {
    let runtime = scratch("flood");
    let service = Service::start(&runtime);
    let pid = service.pid();
    let socket = service.socket();
    let fds_before = fds(pid);
    let rss_before = rss_kb(pid);
    let clients: Vec<_> = (0..10)
        .map(|t| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let mut hung = Vec::new();
                for i in 0..100 {
                    let Ok(mut s) = UnixStream::connect(&socket) else {
                        continue;
                    };
                    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                    match (t * 100 + i) % 5 {
                        // Hangs: connects and says nothing, holding the connection.
                        0 => hung.push(s),
                        // Garbage without a newline, then hangs.
                        1 => {
                            let _ = s.write_all(b"\x00\xff GET / HTTP/1.1");
                            hung.push(s);
                        }
                        // A line far past the limit.
                        2 => {
                            let _ = s.write_all(&vec![b'A'; 64 * 1024]);
                        }
                        // Garbage lines.
                        3 => {
                            let _ = s.write_all(b"perfgraph/1 trace -1 /etc/passwd\nmore\n");
                        }
                        // A good request, its answer never read.
                        _ => {
                            let _ = s.write_all(b"perfgraph/1 dump\n");
                            hung.push(s);
                        }
                    }
                }
                hung
            })
        })
        .collect();
    let hung: Vec<_> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    // Meanwhile the process answers whoever asks properly.
    let start = Instant::now();
    loop {
        let out = cli(&runtime, &["dump", &pid.to_string()]);
        if out.status.success() {
            assert!(text(&out.stdout).contains("\"residual\""));
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "no answer during the flood: {out:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(hung);
    // The clients' descriptors go (the hung ones within the request time limit), and memory did not grow
    // with them.
    let start = Instant::now();
    while fds(pid) > fds_before {
        assert!(
            start.elapsed() < PATIENCE,
            "{} descriptors, {fds_before} before",
            fds(pid)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let grown = rss_kb(pid).saturating_sub(rss_before);
    assert!(grown < 64 * 1024, "resident memory grew {grown} KiB");
    unharmed(&service.stop());
}
