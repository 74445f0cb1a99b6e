//! `perfgraph causal`'s runs as a user meets them: a command that cannot run leaves the old profile as it
//! was, and a Ctrl-C in the middle of `-n` runs keeps what they gathered, prints the predictions from it and
//! ends perfgraph as the signal would, with nothing left beside the profile. (`tests/causal.rs` checks
//! what the predictions say.)

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
    let dir = scratch("perfgraph-causal-runs", "cannot-run");
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

#[test]
fn a_ctrl_c_between_runs_keeps_what_they_gathered_and_ends_as_the_signal_would() {
    let dir = scratch("perfgraph-causal-runs", "ctrl-c");
    let profile = dir.join("p.coz");
    let program = example("causal");
    // Three runs of 30 s each: the Ctrl-C comes in the first, once it has reported an experiment at 0%
    // (the baseline the predictions need).
    let cli = causal(&["-n", "3", "--experiment", "0.1", "--progress", "step"])
        .args(["--speedups", "0,50", "-o"])
        .arg(&profile)
        .arg("--")
        .arg(&program)
        .args(["amdahl", "30"])
        // Its own process group, as a shell's job: the Ctrl-C goes to perfgraph and the program both.
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let part = dir.join(format!("p.coz.{}.run", cli.id()));
    let waited = Instant::now();
    while !std::fs::read_to_string(&part).is_ok_and(|t| t.contains("\tspeedup=0\t")) {
        assert!(
            waited.elapsed() < Duration::from_secs(120),
            "no experiment at 0% reported in {}",
            part.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = i32::try_from(cli.id()).unwrap();
    // SAFETY: kill(2) with a process group this test made (negated id) and a signal number.
    assert_eq!(unsafe { libc::kill(-group, libc::SIGINT) }, 0);
    let out = cli.wait_with_output().unwrap();
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
