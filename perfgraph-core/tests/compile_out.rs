//! Without the default `enabled` feature, `#[timed]` and `time_section!` expand to the plain code: a crate
//! using every form builds and records nothing. With `enabled` alone (a library's dependency), sections are
//! recorded and the binary links no socket code and none of the capture's calls. Builds `tests/compile-out`
//! (outside the workspace, since features unify inside it) with the same cargo that runs this test.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// `cargo run` of `tests/compile-out` with `args`, in its own target directory (returned with the output),
/// by the same cargo that runs this test.
fn cargo_run(args: &[&str]) -> (PathBuf, Output) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = dir.join("../target/compile-out");
    let out = common::child_command(env!("CARGO"))
        .args(["run", "--quiet"])
        .args(args)
        .arg("--manifest-path")
        .arg(dir.join("tests/compile-out/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    (target, out)
}

#[test]
fn disabled_build_compiles_and_records_nothing() {
    let (_, out) = cargo_run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "compile-out crate failed:\n{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "threads=0 sections=0"
    );
}

/// The calls into the C library that a listening or connecting socket needs; a binary without the
/// `listen`, `prometheus` and `otlp` features imports none of them.
const SOCKET_CALLS: [&str; 8] = [
    "socket",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "getaddrinfo",
    "getpeername",
];

#[test]
fn a_library_build_records_and_links_no_socket_code() {
    let (target, out) = cargo_run(&["--bin", "no-network", "--features", "enabled"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "no-network failed:\n{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "sections=2");
    let binary = target.join("debug/no-network");
    // The binary's dynamic imports: what it can call in the C library, whatever its code's names.
    let Ok(nm) = std::process::Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(&binary)
        .output()
    else {
        eprintln!("note: no `nm` (binutils): the check of no-network's imports did not run");
        return;
    };
    assert!(
        nm.status.success(),
        "{}",
        String::from_utf8_lossy(&nm.stderr)
    );
    let imports: Vec<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap().to_owned())
        .collect();
    // It does read the clock and write: the list is the binary's, not an empty one.
    assert!(imports.iter().any(|s| s == "write"), "{imports:?}");
    let socket: Vec<&String> = imports
        .iter()
        .filter(|s| SOCKET_CALLS.contains(&s.as_str()))
        .collect();
    assert!(socket.is_empty(), "socket calls linked: {socket:?}");
    // Nor the capture's (`capture` is off too): no pseudo-terminal, no forwarder child, no tee or splice.
    let capture: Vec<&String> = imports
        .iter()
        .filter(|s| CAPTURE_CALLS.contains(&s.as_str()))
        .collect();
    assert!(capture.is_empty(), "capture calls linked: {capture:?}");
}

/// The calls into the C library only the capture of the program's output makes.
const CAPTURE_CALLS: [&str; 6] = [
    "posix_openpt",
    "grantpt",
    "tee",
    "splice",
    "fork",
    "socketpair",
];
