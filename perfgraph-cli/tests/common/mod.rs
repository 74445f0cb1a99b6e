//! What the CLI's tests share: the example programs they run, scratch directories, and a running
//! `examples/service` stopped and reaped whatever happens.

#![allow(dead_code)]

pub mod truth;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether the long tests run at full size (`TESTS_FULL=1`, as `.ci/run` sets): larger inputs, more runs.
/// The default `cargo test` runs every case at a smaller size. (Not a `PERFGRAPH_*` name: perfgraph warns
/// about those it does not know.)
pub fn full() -> bool {
    std::env::var("TESTS_FULL").is_ok_and(|v| v == "1")
}

/// Generous: only catches a hang, on a machine with both cores busy.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Example program `name` of perfgraph-cli (`cargo test` builds the examples next to the test binaries).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join(name);
    assert!(path.exists(), "{} not built", path.display());
    path
}

/// A fresh scratch directory `<tmp>/<prefix>-<pid>-<name>`, mode 0700 (fit for an `XDG_RUNTIME_DIR`),
/// removed with all it holds when the returned guard is dropped.
pub fn scratch(prefix: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    Scratch(dir)
}

/// A test's own temporary directory ([`scratch`]): a `Path` (through `Deref`), removed when dropped. A
/// test that fails (its thread panicking) keeps it for a look and says where on stderr (captured and
/// shown with the failure); one that passes leaves nothing. Drop it after the processes that use it (a
/// `let` before theirs): a program listening there is then gone.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Takes over the directory `dir`, made by the caller: removed when dropped, as [`scratch`]'s.
    pub fn adopt(dir: PathBuf) -> Scratch {
        Scratch(dir)
    }

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
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The Perfetto trace at `path` decoded by Perfetto's own classes (`perfgraph-core/tests/perfetto/
/// check_trace.py`, which fails on anything trace processor would refuse): the JSON it prints. `None`,
/// said on stderr, where no Python has the classes (`what`: whose check is skipped).
pub fn check_pftrace(path: &Path, what: &str) -> Option<serde_json::Value> {
    let Some(python) = python_with(
        "PERFETTO_CHECK_PYTHON",
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    ) else {
        eprintln!(
            "note: the Perfetto check of {what} is skipped: no Python with the `perfetto` and \
             `protobuf` packages (set PERFETTO_CHECK_PYTHON; .ci/run does)"
        );
        return None;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perfgraph-core/tests/perfetto/check_trace.py");
    let out = Command::new(python).arg(script).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "check_trace.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// A Python that can `import module`: the one `env_var` names (which must), else `python3` if it can.
pub fn python_with(env_var: &str, module: &str) -> Option<String> {
    let can = |python: &str| {
        Command::new(python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Ok(python) = std::env::var(env_var) {
        assert!(can(&python), "{env_var}={python} cannot import {module}");
        return Some(python);
    }
    can("python3").then(|| "python3".to_owned())
}

/// A child killed and waited for when dropped, whatever happened.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The running `examples/service`, listening in its own runtime directory; stopped (its stdin closed)
/// and reaped when dropped.
pub struct Service {
    pub child: Child,
    stdin: Option<ChildStdin>,
    runtime: PathBuf,
}

impl Service {
    /// Starts it with `XDG_RUNTIME_DIR=runtime` and perfgraph quiet, and waits until its socket takes
    /// connections.
    pub fn start(runtime: &Path) -> Service {
        Service::start_example(runtime, "service", &[])
    }

    /// As [`start`](Service::start), the example `name` with `args` (one that runs until its stdin
    /// closes).
    pub fn start_example(runtime: &Path, name: &str, args: &[&str]) -> Service {
        let mut child = Command::new(example(name))
            .args(args)
            .env("XDG_RUNTIME_DIR", runtime)
            .env("PERFGRAPH_LIVE", "off")
            .env("PERFGRAPH_CAPTURE", "off")
            .env_remove("PERFGRAPH_LISTEN")
            .env_remove("PERFGRAPH_TRACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let s = Service {
            child,
            stdin,
            runtime: runtime.to_owned(),
        };
        let start = Instant::now();
        while UnixStream::connect(s.socket()).is_err() {
            assert!(start.elapsed() < PATIENCE, "the service never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn socket(&self) -> PathBuf {
        self.runtime
            .join("perfgraph")
            .join(format!("{}.sock", self.pid()))
    }

    /// Stops it; returns its output.
    pub fn stop(mut self) -> Output {
        drop(self.stdin.take());
        let mut out = Vec::new();
        let mut err = Vec::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_end(&mut err)
            .unwrap();
        let status = self.child.wait().unwrap();
        Output {
            status,
            stdout: out,
            stderr: err,
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
