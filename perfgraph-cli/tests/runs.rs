//! The subcommands that run a program (`perfgraph causal`, `perfgraph record`) as a user meets them when a
//! run goes wrong: a command that cannot run leaves the old profile as it was, and a Ctrl-C in the middle
//! of the runs keeps what they gathered (a causal run's experiments; a record's finished runs, the one
//! under way left out), prints what it says, and ends perfgraph as the signal would, with nothing left
//! behind. (`tests/causal.rs` checks what the predictions say, `tests/gate.rs` the bundles.)

mod common;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{example, scratch};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// `perfgraph causal ARGS` with perfgraph's settings cleared and live print off.
fn causal(args: &[&str]) -> Command {
    let mut c = Command::new(CLI);
    for (name, _) in std::env::vars() {
        if name.starts_with("PERFGRAPH_") {
            c.env_remove(name);
        }
    }
    c.env("PERFGRAPH_LIVE", "off").arg("causal").args(args);
    c
}

/// The names in `dir`, sorted.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_command_that_cannot_run_leaves_the_old_profile_as_it_was() {
    let dir = scratch("perfgraph-runs", "cannot-run");
    let profile = dir.join("p.coz");
    std::fs::write(&profile, "old").unwrap();
    let out = causal(&["-o", profile.to_str().unwrap(), "--", "/no/such/program"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("perfgraph: /no/such/program: cannot run"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&profile).unwrap(), "old");
    assert_eq!(names(&dir), ["p.coz"]);
}

/// Runs `cmd` in a process group of its own, as a shell runs a job, until `ready` says so, then sends
/// the group a SIGINT, as a Ctrl-C does: its output, once it has ended.
fn ctrl_c_when(mut cmd: Command, ready: impl Fn() -> bool) -> std::process::Output {
    let child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    while !ready() {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "not ready in 120 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let group = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with a process group this test made (negated id) and a signal number.
    assert_eq!(unsafe { libc::kill(-group, libc::SIGINT) }, 0);
    child.wait_with_output().unwrap()
}

#[test]
fn a_ctrl_c_between_causal_runs_keeps_what_they_gathered_and_ends_as_the_signal_would() {
    let dir = scratch("perfgraph-runs", "causal-ctrl-c");
    let profile = dir.join("p.coz");
    // Three runs of 30 s each: the Ctrl-C comes in the first, once it has reported an experiment at 0%
    // (the baseline the predictions need), which its file (named after perfgraph's pid) says.
    let mut cli = causal(&["-n", "3", "--experiment", "0.1", "--progress", "step"]);
    cli.args(["--speedups", "0,50", "-o"])
        .arg(&profile)
        .arg("--")
        .arg(example("causal"))
        .args(["amdahl", "30"]);
    let listing = dir.to_path_buf();
    let out = ctrl_c_when(cli, move || {
        names(&listing).iter().any(|n| {
            n.ends_with(".run")
                && std::fs::read_to_string(listing.join(n))
                    .is_ok_and(|t| t.contains("\tspeedup=0\t"))
        })
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains("perfgraph: SIGINT: the runs ended after run 1 of 3"),
        "{stderr}"
    );
    assert!(
        stdout.contains("Causal profile: 1 run, "),
        "{stdout}\n{stderr}"
    );
    let text = std::fs::read_to_string(&profile).unwrap();
    assert_eq!(text.matches("startup\t").count(), 1, "{text}");
    assert!(text.contains("\nexperiment\t"), "{text}");
    assert_eq!(names(&dir), ["p.coz"]);
}

#[test]
fn a_ctrl_c_during_a_record_keeps_the_finished_runs_and_leaves_out_the_one_under_way() {
    let dir = scratch("perfgraph-runs", "record-ctrl-c");
    // The first run ends at once; the second waits, and is under way once `count` says 2.
    let script =
        "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; [ $n = 0 ] || sleep 30";
    let mut cli = Command::new(CLI);
    cli.current_dir(&dir)
        .args(["record", "-n", "3", "-o", "b", "--", "sh", "-c", script]);
    let count = dir.join("count");
    let out = ctrl_c_when(cli, move || {
        std::fs::read_to_string(&count).is_ok_and(|c| c.trim() == "2")
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{stderr}");
    assert!(
        stderr.contains(
            "perfgraph: SIGINT: recording ended after 1 of 3 runs; the run under way was left out"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("perfgraph: 1 runs (1 of the command) in b"),
        "{stderr}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["runs"].as_array().map(Vec::len),
        Some(1),
        "{manifest}"
    );
    // The run under way left nothing in the bundle.
    assert_eq!(names(&dir.join("b/runs")), ["head-001.stderr"]);
    assert_eq!(names(&dir), ["b", "count"]);
}

#[test]
fn nohup_keeps_a_record_going_through_a_hangup() {
    let dir = scratch("perfgraph-runs", "record-nohup");
    let script = "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; sleep 0.3";
    let mut cli = Command::new(CLI);
    cli.current_dir(&dir)
        .args(["record", "-n", "3", "-o", "b", "--", "sh", "-c", script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec, signal(2) only, async-signal-safe: SIGHUP ignored, as `nohup` does.
    unsafe {
        cli.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = cli.spawn().unwrap();
    // The hangup comes once the first run's manifest is written.
    let waited = Instant::now();
    while !dir.join("b/manifest.json").exists() {
        assert!(waited.elapsed() < Duration::from_secs(120), "no manifest");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) with the child's pid and a signal number.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stderr.contains("perfgraph: 3 runs"), "{stderr}");
}
