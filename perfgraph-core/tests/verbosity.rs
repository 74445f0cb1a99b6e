//! Verbosity: sections above the level are not recorded; `off` records nothing; a bad
//! `PERFGRAPH_VERBOSITY` gives one warning line and the default. Environment cases run this test binary
//! again as a child process, since the environment is read once per process.

mod common;

use perfgraph_core::{Verbosity, set_verbosity, time_section};

fn levels() {
    time_section!("v::phase", level = 0);
    time_section!("v::step", level = 1);
    time_section!("v::detail", level = 2);
    time_section!("v::fine", level = 3);
}

fn recorded_names(thread: &str) -> Vec<&'static str> {
    let t = common::thread_named(thread);
    let mut names: Vec<_> = t.tree.nodes.iter().skip(1).map(|n| n.name).collect();
    names.sort();
    names
}

#[test]
fn levels_above_the_verbosity_are_not_recorded() {
    if std::env::var_os("VERBOSITY_CHILD").is_some() {
        return child();
    }
    set_verbosity(Verbosity::Level(1));
    common::on_thread("level-1", levels);
    assert_eq!(recorded_names("level-1"), ["v::phase", "v::step"]);
    set_verbosity(Verbosity::Level(3));
    common::on_thread("level-3", levels);
    assert_eq!(recorded_names("level-3").len(), 4);
    set_verbosity(Verbosity::Off);
    common::on_thread("level-off", || {
        levels();
        time_section!("v::another", level = 0);
    });
    assert!(
        perfgraph_core::threads()
            .iter()
            .all(|t| t.name != "level-off")
    );
    set_verbosity(Verbosity::Level(1));
    // The report names every site that was reached while above the verbosity, once, in the order first
    // skipped; a site never reached (`never`) is not named.
    if false {
        time_section!("v::never", level = 3);
    }
    let r = perfgraph_core::report();
    assert_eq!(
        r.run.skipped,
        ["v::detail", "v::fine", "v::phase", "v::step", "v::another"]
    );
    assert!(
        r.footer().contains(
            "Not recorded: 5 sections skipped by the verbosity (now 1): v::detail, v::fine, \
             v::phase, v::step, v::another; PERFGRAPH_VERBOSITY=3 records every level."
        ),
        "{}",
        r.footer()
    );
}

/// Runs in the child: prints what it recorded on stdout.
fn child() {
    common::on_thread("child", levels);
    let names = perfgraph_core::threads()
        .iter()
        .find(|t| t.name == "child")
        .map(|t| {
            t.tree
                .nodes
                .iter()
                .skip(1)
                .map(|n| n.name)
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    println!("RECORDED={names}");
}

fn run_child(value: &str) -> (String, String) {
    run_child_with(value, &[])
}

/// [`run_child`] with more variables set.
fn run_child_with(value: &str, more: &[(&str, &str)]) -> (String, String) {
    let out = common::child_command(std::env::current_exe().unwrap())
        .envs(more.iter().copied())
        .args([
            "levels_above_the_verbosity_are_not_recorded",
            "--exact",
            "--nocapture",
        ])
        .env("VERBOSITY_CHILD", "1")
        .env("PERFGRAPH_VERBOSITY", value)
        .env("PERFGRAPH_LIVE", "off")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let recorded = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RECORDED="))
        .expect("child ran")
        .to_string();
    (recorded, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn environment_sets_the_level() {
    assert_eq!(run_child("0").0, "v::phase");
    assert_eq!(run_child("2").0, "v::phase,v::step,v::detail");
    assert_eq!(run_child("off").0, "");
}

#[test]
fn a_bad_value_warns_once_and_uses_the_default() {
    let (recorded, stderr) = run_child("loud");
    assert_eq!(recorded, "v::phase,v::step", "default level 1");
    let warnings: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("perfgraph: warning:"))
        .collect();
    assert_eq!(
        warnings,
        [
            r#"perfgraph: warning: PERFGRAPH_VERBOSITY="loud" is not valid (accepted: off, 0, 1, 2, 3); using the default, 1"#
        ]
    );
}

#[test]
fn a_misspelled_variable_warns_with_the_closest_name_and_is_ignored() {
    let (recorded, stderr) = run_child_with("1", &[("PERFGRAPH_VERBOSE", "3")]);
    assert_eq!(
        recorded, "v::phase,v::step",
        "the misspelled level is not applied"
    );
    let warnings: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("perfgraph: warning:"))
        .collect();
    assert_eq!(
        warnings,
        [
            "perfgraph: warning: PERFGRAPH_VERBOSE is not a perfgraph setting (did you mean PERFGRAPH_VERBOSITY?); it is ignored"
        ]
    );
}
