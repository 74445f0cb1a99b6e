//! Output paths opened as any Unix tool opens them, end to end: this test binary runs itself as a child
//! (with `OUTPUT_PATHS_CHILD` set) that records one section and writes `PERFGRAPH_JSON` at exit, to a
//! read-only file, into a directory it may not write, through a symbolic link, past links planted in the
//! directory, through another user's link in a sticky world-writable directory (refused where the kernel
//! refuses it, `fs.protected_symlinks`), to `/dev/stdout` and to a named pipe. Run as root, the children
//! that must meet a permission run as `nobody` (uid 65534): root's writes ignore the permission bits.

mod common;

use common::names;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

#[test]
fn child_entry() {
    if std::env::var_os("OUTPUT_PATHS_CHILD").is_some() {
        perfgraph_core::time_section!("paths::work");
        std::hint::black_box(0);
    }
    if let Some(done) = std::env::var_os("OUTPUT_PATHS_LATE_CHILD") {
        late_child(std::ffi::CString::new(done.into_encoded_bytes()).unwrap());
    }
}

/// Forks a child that waits for this process to exit (its parent id changes), then writes a line to its
/// inherited stdout and creates the file `done`. Only async-signal-safe calls after the fork.
fn late_child(done: std::ffi::CString) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork in a test child; the child below makes only async-signal-safe calls and `_exit`s.
    if unsafe { libc::fork() } != 0 {
        return;
    }
    let line = b"a line from a child that outlived its parent\n";
    // SAFETY: plain system calls on our own buffers; `done` is a valid C string.
    unsafe {
        for _ in 0..6000 {
            if libc::getppid() != parent {
                break;
            }
            libc::usleep(10_000);
        }
        libc::write(1, line.as_ptr().cast(), line.len());
        let fd = libc::open(done.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600);
        libc::close(fd);
        libc::_exit(0);
    }
}

/// A uid other than ours that permission bits apply to.
const NOBODY: u32 = 65534;

/// How a child's stdout is set up.
enum Out {
    Null,
    File(std::fs::File),
}

/// This test binary as a program `uid` may run: itself, or where a directory above it keeps others out (a
/// checkout under `/root`), a copy in a directory of its own, removed on drop.
struct Program {
    path: PathBuf,
    /// The copy's directory, removed when dropped.
    _copy_dir: Option<common::Scratch>,
}

impl Program {
    fn for_uid(uid: Option<u32>, tag: &str) -> Program {
        let exe = std::env::current_exe().unwrap();
        let others_can_run = exe
            .ancestors()
            .all(|p| std::fs::metadata(p).is_ok_and(|m| m.mode() & 0o001 != 0));
        if uid.is_none() || others_can_run {
            return Program {
                path: exe,
                _copy_dir: None,
            };
        }
        let dir = fresh_dir(&format!("{tag}-exe"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.join(exe.file_name().unwrap());
        std::fs::copy(&exe, &path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Program {
            path,
            _copy_dir: Some(dir),
        }
    }
}

/// `cmd.spawn()`, again while the program is busy being written (`ETXTBSY`): a copy of the test binary
/// ([`Program::for_uid`]) whose descriptor another test's fork still holds, until that child's exec
/// closes it.
fn spawn(cmd: &mut std::process::Command) -> std::process::Child {
    loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(20));
            }
            done => return done.unwrap(),
        }
    }
}

/// Runs the child with `PERFGRAPH_JSON=json` (as `uid` if given); returns what it printed. Fails the test if
/// the child fails or hangs.
fn run_child(json: &Path, uid: Option<u32>, stdout: Out) -> Output {
    run_child_with(json, uid, stdout, &[], &[])
}

/// [`run_child`] with more variables set (`PERFGRAPH_TRACE`), started by `launcher` (a command and its
/// arguments, to which the child's command line is added) if not empty.
fn run_child_with(
    json: &Path,
    uid: Option<u32>,
    stdout: Out,
    env: &[(&str, &Path)],
    launcher: &[&std::ffi::OsStr],
) -> Output {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // Relaxed: only a distinct number per run is needed.
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let program = Program::for_uid(uid, &format!("exe-{run}"));
    let mut cmd = match launcher {
        [] => common::child_command(&program.path),
        [first, rest @ ..] => {
            let mut cmd = common::child_command(first);
            cmd.args(rest).arg(&program.path);
            cmd
        }
    };
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("OUTPUT_PATHS_CHILD", "1")
        .env("PERFGRAPH_LIVE", "off")
        // No control socket: a child run as another user could not enter this process's runtime
        // directory (tests/common/scratch.rs), and would make its own, `/tmp/perfgraph-<uid>`.
        .env("PERFGRAPH_LISTEN", "off")
        .env("PERFGRAPH_JSON", json)
        .envs(env.iter().copied())
        .stderr(Stdio::piped());
    match stdout {
        Out::Null => cmd.stdout(Stdio::null()),
        Out::File(file) => cmd.stdout(file),
    };
    if let Some(uid) = uid {
        // Our working directory may be closed to it too.
        cmd.uid(uid).gid(uid).current_dir("/");
    }
    let start = Instant::now();
    let out = spawn(&mut cmd).wait_with_output().unwrap();
    // Generous: catches a hang at exit, not slowness.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "child took {:?}",
        start.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stderr}");
    out
}

/// The lines perfgraph printed on the child's stderr (nothing else runs there with `PERFGRAPH_LIVE=off`).
fn perfgraph_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("perfgraph"))
        .map(str::to_owned)
        .collect()
}

/// A fresh, empty directory for one test, removed when dropped (whatever modes the test gave it).
fn fresh_dir(tag: &str) -> common::Scratch {
    common::scratch(&format!("paths-{tag}"))
}

/// Who the child that must meet a permission runs as: `nobody` when we are root (our own files' owner
/// says so), else ourselves.
fn unprivileged(dir: &Path) -> Option<u32> {
    (std::fs::metadata(dir).unwrap().uid() == 0).then_some(NOBODY)
}

/// Checks that `text` ends with the call-tree JSON of the child's run.
fn assert_ends_with_the_tree(text: &str) {
    // The JSON starts on a line of its own, after anything the child printed before.
    let start = if text.starts_with('{') {
        0
    } else {
        text.find("\n{")
            .unwrap_or_else(|| panic!("no JSON in {text:?}"))
            + 1
    };
    let tree: serde_json::Value = serde_json::from_str(text[start..].trim_end())
        .unwrap_or_else(|e| panic!("{e}: {:?}", &text[start..]));
    assert_eq!(tree["format"], "perfgraph-call-tree");
    assert!(text[start..].contains("\"paths::work\""), "{text}");
}

fn cannot_write(path: &Path, error: &str) -> String {
    format!(
        "perfgraph: error: cannot write PERFGRAPH_JSON file {:?}: {error}",
        path.display().to_string()
    )
}

#[test]
fn a_read_only_file_is_one_error_line_and_left_untouched() {
    let dir = fresh_dir("read-only");
    // Writable for whoever the child runs as: only the file's own mode stops the write.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = dir.join("t.json");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::metadata(&path).unwrap();

    let out = run_child(&path, unprivileged(&dir), Out::Null);
    assert_eq!(
        perfgraph_lines(&out),
        [cannot_write(&path, "Permission denied (os error 13)")]
    );
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    assert_eq!((after.ino(), after.mode()), (before.ino(), before.mode()));
    assert_eq!(names(&dir), ["t.json"]);
}

#[test]
fn a_directory_that_is_not_writable_is_one_error_line_and_the_file_is_left_untouched() {
    let dir = fresh_dir("read-only-dir");
    let path = dir.join("t.json");
    std::fs::write(&path, "old").unwrap();
    // The file itself may be written by anyone; the directory may not take a new name.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let uid = unprivileged(&dir);

    let out = run_child(&path, uid, Out::Null);
    assert_eq!(
        perfgraph_lines(&out),
        [cannot_write(&path, "Permission denied (os error 13)")]
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    assert_eq!(names(&dir), ["t.json"]);

    // A new file there: the same.
    let new = dir.join("new.json");
    let out = run_child(&new, uid, Out::Null);
    assert_eq!(
        perfgraph_lines(&out),
        [cannot_write(&new, "Permission denied (os error 13)")]
    );
    assert_eq!(names(&dir), ["t.json"]);
}

#[test]
fn a_symlink_is_written_through_and_stays_a_link() {
    let dir = fresh_dir("symlink");
    let target = dir.join("target.json");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();

    let out = run_child(&link, None, Out::Null);
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("target.json"));
    assert_ends_with_the_tree(&std::fs::read_to_string(&target).unwrap());
    assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(names(&dir), ["link.json", "target.json"]);
}

#[test]
fn links_planted_in_the_directory_redirect_nothing() {
    let dir = fresh_dir("planted");
    let elsewhere = fresh_dir("planted-victim");
    let victim = elsewhere.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // The old temporary name was `.<name>.perfgraph-<pid>`: plant it for the pids a child is likely to get,
    // and some other names, all pointing at the victim.
    let pid = std::process::id();
    let mut planted: Vec<String> = (pid..pid + 256)
        .map(|p| format!(".t.json.perfgraph-{p}"))
        .collect();
    planted.extend([".t.json".into(), ".t.json.tmp".into(), "t.json~".into()]);
    for name in &planted {
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
    }

    let path = dir.join("t.json");
    let out = run_child(&path, None, Out::Null);
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    assert_ends_with_the_tree(&std::fs::read_to_string(&path).unwrap());
    for name in &planted {
        assert_eq!(std::fs::read_link(dir.join(name)).unwrap(), victim);
    }
    // No temporary file is left: only the planted links and the file.
    planted.push("t.json".into());
    planted.sort();
    assert_eq!(names(&dir), planted);
    assert_eq!(names(&elsewhere), ["victim"]);
}

/// Whether Linux's `fs.protected_symlinks` is on here (`None`: it cannot be read).
fn protected_symlinks() -> Option<bool> {
    let value = std::fs::read_to_string("/proc/sys/fs/protected_symlinks").ok()?;
    Some(value.trim() != "0")
}

/// Whether `echo > link`, run by the shell as we are, may write through `link` (the kernel's own answer).
fn shell_may_write(link: &Path) -> bool {
    std::process::Command::new("sh")
        .args(["-c", "echo shell > \"$0\"", link.to_str().unwrap()])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Says past the test harness's capture (which hides what a passing test prints) what a test could not
/// check.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Makes the symbolic link `link` to `target` as `nobody`, as a user who plants it in `/tmp` would.
fn plant_as_nobody(target: &Path, link: &Path) {
    let planted = std::process::Command::new("ln")
        .arg("-s")
        .arg(target)
        .arg(link)
        .uid(NOBODY)
        .gid(NOBODY)
        .status()
        .unwrap();
    assert!(planted.success());
    assert_eq!(std::fs::symlink_metadata(link).unwrap().uid(), NOBODY);
}

/// A launcher ([`run_child_with`]) that runs the child where `/proc/sys/fs/protected_symlinks` reads 1: in
/// a mount namespace of its own (`unshare -m`, whose mounts stay private to it), with a file holding `1`
/// (made in `dir`) mounted over it. The machine's setting is not touched. `None` if that cannot be done
/// here (no `unshare`, or no right to mount).
fn with_protected_symlinks_on(dir: &Path) -> Option<Vec<std::ffi::OsString>> {
    let one = dir.join("protected_symlinks");
    std::fs::write(&one, "1\n").unwrap();
    let launcher: Vec<std::ffi::OsString> = vec![
        "unshare".into(),
        "-m".into(),
        "sh".into(),
        "-c".into(),
        "mount --bind \"$0\" /proc/sys/fs/protected_symlinks && exec \"$@\"".into(),
        one.into(),
    ];
    let works = std::process::Command::new(&launcher[0])
        .args(&launcher[1..])
        .args(["cat", "/proc/sys/fs/protected_symlinks"])
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout == b"1\n");
    works.then_some(launcher)
}

#[test]
fn another_users_link_in_a_sticky_world_writable_directory_is_refused_where_the_kernel_refuses() {
    const TEST: &str = "another_users_link_in_a_sticky_world_writable_directory_is_refused_where_the_kernel_refuses";
    let sticky = fresh_dir("sticky");
    if unprivileged(&sticky).is_none() {
        say(&format!(
            "{TEST}: DID NOT RUN: it needs root, to plant a link as another user (uid {NOBODY})"
        ));
        return;
    }
    // As `/tmp`: anyone may add a name, only its owner may remove it.
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // Files only root may reach, and links to them that nobody planted in the sticky directory.
    let victims = fresh_dir("sticky-victims");
    std::fs::set_permissions(&victims, std::fs::Permissions::from_mode(0o700)).unwrap();
    let plant = |name: &str| {
        let victim = victims.join(format!("{name}.victim"));
        std::fs::write(&victim, "precious").unwrap();
        let link = sticky.join(name);
        plant_as_nobody(&victim, &link);
        (link, victim)
    };
    let (json, json_victim) = plant("evil.json");
    let (trace, trace_victim) = plant("evil-trace.json");
    let (probe, probe_victim) = plant("probe.json");
    // The kernel's own answer: whether the shell may write through such a link.
    let kernel_follows = shell_may_write(&probe);
    assert_eq!(kernel_follows, protected_symlinks() == Some(false));
    assert_eq!(
        std::fs::read_to_string(&probe_victim).unwrap(),
        if kernel_follows {
            "shell\n"
        } else {
            "precious"
        }
    );

    // One line for each output, where `echo > link` gets `Permission denied` too, and nothing written.
    let refused = |out: &Output| {
        let refusal = |variable: &str, link: &Path| {
            format!(
                "perfgraph: error: cannot write {variable} file {:?}: Permission denied (os error 13): not \
                 following the symbolic link {:?}, which uid {NOBODY} owns in a sticky world-writable \
                 directory (fs.protected_symlinks)",
                link.display().to_string(),
                link.display().to_string()
            )
        };
        assert_eq!(
            perfgraph_lines(out),
            [
                refusal("PERFGRAPH_TRACE", &trace),
                refusal("PERFGRAPH_JSON", &json)
            ]
        );
        for victim in [&json_victim, &trace_victim] {
            assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious");
        }
    };
    let trace_env = [("PERFGRAPH_TRACE", trace.as_path())];
    if kernel_follows {
        // `fs.protected_symlinks = 0` here. Where it reads 1 (a mount namespace of the child's own), the
        // links are refused.
        match with_protected_symlinks_on(&victims) {
            Some(launcher) => {
                let launcher: Vec<&std::ffi::OsStr> =
                    launcher.iter().map(|a| a.as_os_str()).collect();
                refused(&run_child_with(
                    &json,
                    None,
                    Out::Null,
                    &trace_env,
                    &launcher,
                ));
            }
            None => say(&format!(
                "{TEST}: DID NOT RUN (the refusal): fs.protected_symlinks is 0 here, and `unshare -m` cannot \
                 show the child a 1 instead; the rule itself is checked by files::tests"
            )),
        }
        // And where it reads 0, they are followed, as the shell follows them.
        let out = run_child_with(&json, None, Out::Null, &trace_env, &[]);
        assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
        assert_ends_with_the_tree(&std::fs::read_to_string(&json_victim).unwrap());
        let traced = std::fs::read_to_string(&trace_victim).unwrap();
        assert!(traced.starts_with("[\n"), "{traced}");
    } else {
        refused(&run_child_with(&json, None, Out::Null, &trace_env, &[]));
    }
    // The links stay as nobody made them, and nothing else is left in the directory.
    for link in [&json, &trace, &probe] {
        assert_eq!(std::fs::symlink_metadata(link).unwrap().uid(), NOBODY);
    }
    assert_eq!(
        names(&sticky),
        ["evil-trace.json", "evil.json", "probe.json"]
    );

    // Our own link there is followed as always, and stays a link.
    let ours = sticky.join("ours.json");
    std::os::unix::fs::symlink(&json_victim, &ours).unwrap();
    let out = run_child(&ours, None, Out::Null);
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    assert_ends_with_the_tree(&std::fs::read_to_string(&json_victim).unwrap());
    assert_eq!(std::fs::read_link(&ours).unwrap(), json_victim);
}

#[test]
fn dev_stdout_redirected_to_a_file_is_appended_to_not_replaced() {
    let dir = fresh_dir("stdout-file");
    let captured = dir.join("stdout.txt");
    let file = std::fs::File::create(&captured).unwrap();
    let before = std::fs::metadata(&captured).unwrap().ino();

    let out = run_child(Path::new("/dev/stdout"), None, Out::File(file));
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    let text = std::fs::read_to_string(&captured).unwrap();
    // The test harness's own lines come first: the JSON went after them, not over them.
    assert!(text.contains("running 1 test"), "{text}");
    assert!(text.find("running 1 test") < text.find("\n{"), "{text}");
    assert_ends_with_the_tree(&text);
    assert_eq!(std::fs::metadata(&captured).unwrap().ino(), before);
    assert!(!std::fs::symlink_metadata("/dev/stdout").unwrap().is_file());
    assert_eq!(names(&dir), ["stdout.txt"]);
}

#[test]
fn dev_stdout_shares_the_programs_offset_with_a_child_that_writes_after_the_exit() {
    let dir = fresh_dir("stdout-shared");
    let captured = dir.join("stdout.txt");
    let done = dir.join("done");
    // `prog > stdout.txt`: no O_APPEND, so only a shared offset keeps the child's line off the JSON.
    let file = std::fs::File::create(&captured).unwrap();
    let out = run_child_with(
        Path::new("/dev/stdout"),
        None,
        Out::File(file),
        &[("OUTPUT_PATHS_LATE_CHILD", &done)],
        &[],
    );
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    // Generous: the child writes as soon as it sees its parent gone.
    let start = Instant::now();
    while !done.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no late child");
        std::thread::sleep(Duration::from_millis(10));
    }
    let text = std::fs::read_to_string(&captured).unwrap();
    let (before, late) = text
        .split_once("a line from a child that outlived its parent\n")
        .unwrap_or_else(|| panic!("the child's line is missing: {text}"));
    assert_eq!(late, "", "{text}");
    assert!(before.contains("running 1 test"), "{text}");
    assert_ends_with_the_tree(before);
}

#[test]
fn a_link_to_the_stdout_descriptor_is_written_through_and_stays_a_link() {
    if !Path::new("/proc/self/fd").exists() {
        return; // Linux only.
    }
    let dir = fresh_dir("stdout-link");
    let link = dir.join("out.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    // Stdout is a regular file: the link leads to it, and still names a stream.
    let captured = dir.join("stdout.txt");
    let file = std::fs::File::create(&captured).unwrap();

    let out = run_child(&link, None, Out::File(file));
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    let text = std::fs::read_to_string(&captured).unwrap();
    assert!(text.starts_with("\nrunning 1 test"), "{text}");
    assert_ends_with_the_tree(&text);
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("/proc/self/fd/1")
    );
    assert_eq!(names(&dir), ["out.json", "stdout.txt"]);
}

#[test]
fn a_named_pipe_is_written_as_a_stream() {
    let dir = fresh_dir("fifo");
    let fifo = dir.join("out.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        common::spawn_named("fifo-reader", move || {
            let mut text = String::new();
            // Blocks until the child opens the pipe for writing; ends when it closes it.
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        })
    };

    let out = run_child(&fifo, None, Out::Null);
    // Should the child never have opened the pipe, end the reader's wait with an empty write side
    // (no reader left: the open fails, and nothing is needed).
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    let text = reader.join().unwrap();
    assert_eq!(perfgraph_lines(&out), Vec::<String>::new());
    assert_ends_with_the_tree(&text);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(names(&dir), ["out.fifo"]);
}
