//! Without the default `enabled` feature, `#[timed]` and `time_section!` expand to the plain code: a crate
//! using every form builds and records nothing. Builds `tests/compile-out` (outside the workspace, since
//! features unify inside it) with the same cargo that runs this test.

mod common;

use std::path::Path;

#[test]
fn disabled_build_compiles_and_records_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = dir.join("../target/compile-out");
    let out = common::child_command(env!("CARGO"))
        .args(["run", "--quiet", "--manifest-path"])
        .arg(dir.join("tests/compile-out/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "compile-out crate failed:\n{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "threads=0 sections=0"
    );
}
