//! Hostile and broken call-tree files: the `perfgraph` command answers each with one line naming the file and
//! exit 2, never a panic, and stays within its memory limits (the child runs under an address-space limit,
//! as `ulimit -v` sets). Also the diff gates that must not pass in silence: two runs with nothing in common,
//! sections removed.

mod common;

use std::fmt::Write as _;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// The address-space limit the command runs under here, bytes: 1 GiB.
const LIMIT: u64 = 1 << 30;

/// A test's own directory, removed when dropped.
fn scratch(name: &str) -> common::Scratch {
    common::scratch("perfgraph-hostile", name)
}

/// `perfgraph args` under the address-space limit.
fn cli(args: &[&str]) -> Output {
    let mut c = Command::new(CLI);
    c.args(args);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    c.output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A call-tree JSON with the nodes `nodes` (each a JSON object's members, without braces) as its merged
/// tree and no thread.
fn file(nodes: &[String]) -> String {
    let mut out = String::from(
        "{\"clock\": \"tsc\", \"dropped\": 0, \"format\": \"perfgraph-call-tree\", \"host\": \"h\", \
         \"needs_every_record\": false, \"overhead_ns_per_section\": null, \"pid\": 1, \"program\": \"p\", \
         \"rank\": 0, \"skipped_sections\": [], \"start_unix_ns\": 0, \"threads\": [], \"tree\": [",
    );
    for (i, n) in nodes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "{{{n}}}").unwrap();
    }
    out.push_str("], \"verbosity\": 1, \"version\": 1, \"wall_ns\": 1000}");
    out
}

/// A node's members: `name` at `depth` under `parent`, with `extra` members.
fn node(name: &str, depth: u64, parent: Option<usize>, extra: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| p.to_string());
    let mut n = format!(
        "\"calls\": 1, \"depth\": {depth}, \"histogram\": null, \"level\": 0, \"name\": \"{name}\", \
         \"parent\": {parent}, \"running\": 0, \"section\": 1, \"self_mem_bytes\": 0, \"self_ns\": 10, \
         \"total_mem_bytes\": 0, \"total_ns\": 10"
    );
    if !extra.is_empty() {
        n = format!("{extra}, {n}");
    }
    n
}

/// A root and one section `name` under it, with `extra` members.
fn one_section(name: &str, extra: &str) -> String {
    file(&[node("p", 0, None, ""), node(name, 1, Some(0), extra)])
}

/// A chain `depth` deep of the recursion `r` (perfgraph's own shape for a recursive section).
fn recursion(depth: usize) -> String {
    let mut nodes = vec![node("p", 0, None, "")];
    for d in 1..=depth {
        nodes.push(node("r", d as u64, Some(d - 1), ""));
    }
    file(&nodes)
}

/// The command failed as it should: exit 2, one line naming `path`, which says `says`; no panic.
fn refused(out: &Output, path: &Path, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(s(path)), "{err}");
    assert!(err.contains(says), "expected {says:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn broken_fields_are_one_line_and_exit_2() {
    let dir = scratch("fields");
    let good = dir.join("good.json");
    std::fs::write(&good, one_section("a", "")).unwrap();
    assert_eq!(cli(&["report", s(&good)]).status.code(), Some(0));
    let histogram = "\"histogram\": {\"buckets\": [[3, 1]], \"sub_buckets\": 64}";
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "minmax.json",
            one_section("a", &format!("{histogram}, \"min_ns\": 600, \"max_ns\": 1"))
                .replace("\"histogram\": null, ", ""),
            "\"min_ns\" (600) is more than \"max_ns\" (1)",
        ),
        (
            "depth.json",
            file(&[node("p", 0, None, ""), node("a", 4294967295, Some(0), "")]),
            "\"depth\" is 4294967295",
        ),
        (
            "level.json",
            one_section("a", "").replace(
                "\"level\": 0, \"name\": \"a\"",
                "\"level\": 300, \"name\": \"a\"",
            ),
            "\"level\" is out of range (300)",
        ),
        (
            "long-name.json",
            one_section(&"x".repeat(65_536), ""),
            "limit: a string longer than 4096 bytes",
        ),
        (
            "endless-string.json",
            format!("{{\"format\": \"{}", "a".repeat(10 << 20)),
            "limit: a string longer than 4096 bytes",
        ),
        (
            "nested-array.json",
            one_section("a", "\"junk\": [[[[1]]]]").replace("\"calls\": 1", "\"calls\": [1]"),
            "an array where a single value belongs",
        ),
    ];
    for (name, content, says) in &cases {
        let f = dir.join(name);
        std::fs::write(&f, content).unwrap();
        refused(&cli(&["report", s(&f)]), &f, says);
        refused(&cli(&["diff", s(&good), s(&f)]), &f, says);
        refused(&cli(&["merge", s(&good), s(&f)]), &f, says);
    }
}

#[test]
fn an_endless_input_stops_at_once() {
    let zero = Path::new("/dev/zero");
    refused(&cli(&["report", "/dev/zero"]), zero, "not JSON");
    refused(&cli(&["diff", "/dev/zero", "/dev/zero"]), zero, "not JSON");
}

#[test]
fn the_largest_counts_print_as_they_are() {
    let dir = scratch("max");
    let f = dir.join("max.json");
    std::fs::write(
        &f,
        one_section("a", "").replace(
            "\"calls\": 1, \"depth\": 1",
            "\"calls\": 18446744073709551615, \"depth\": 1",
        ),
    )
    .unwrap();
    let out = cli(&["report", s(&f), "--graph"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("18446744073709551615"), "{text}");
    assert!(!text.contains(" -1 "), "{text}");
}

#[test]
fn deep_recursions_diff_by_path_within_the_limit() {
    let dir = scratch("deep");
    // 100,000 deep takes most of a minute unoptimised: at full size only (`TESTS_FULL=1`), 25,000 by default.
    let deepest = if common::full() { 100_000 } else { 25_000 };
    for depth in [10_000, deepest] {
        let base = dir.join(format!("base-{depth}.json"));
        std::fs::write(&base, recursion(depth)).unwrap();
        let mut runs = vec![vec!["diff", "--paths", s(&base), s(&base)]];
        if depth == 10_000 {
            // The others are linear in the nodes: a 10,000-deep tree shows it, and keeps the test quick in
            // an unoptimised build.
            runs.push(vec!["diff", s(&base), s(&base)]);
            runs.push(vec!["report", s(&base)]);
        }
        for args in runs {
            let out = cli(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
            let text = String::from_utf8_lossy(&out.stdout);
            if args[1] == "--paths" {
                // Every path is a row; the deep ones are cut for display.
                assert_eq!(text.lines().count(), depth + 2, "{args:?}");
                assert!(text.lines().all(|l| l.chars().count() < 200), "{args:?}");
                assert!(text.contains("r;…;r;r"), "{args:?}");
            }
        }
    }
}

#[test]
fn a_diff_of_runs_with_nothing_in_common_fails() {
    let dir = scratch("disjoint");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, one_section("solve", "")).unwrap();
    std::fs::write(&b, one_section("renamed_solve", "")).unwrap();
    let out = cli(&["diff", s(&a), s(&b)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("have no section in common"), "{err}");
}

#[test]
fn a_removed_section_is_named_and_fails_only_when_asked() {
    let dir = scratch("removed");
    let (base, head) = (dir.join("base.json"), dir.join("head.json"));
    std::fs::write(
        &base,
        file(&[
            node("p", 0, None, ""),
            node("solve", 1, Some(0), ""),
            node("check", 1, Some(0), ""),
        ]),
    )
    .unwrap();
    std::fs::write(&head, one_section("solve", "")).unwrap();
    let out = cli(&["diff", s(&base), s(&head)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Removed: 1 section of the base is not in the head: check."),
        "{text}"
    );
    let out = cli(&["diff", "--fail-on-removed", s(&base), s(&head)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("(--fail-on-removed: this fails the diff)"),
        "{text}"
    );
}

#[test]
fn help_states_the_input_limits() {
    for sub in ["report", "diff", "merge"] {
        let out = Command::new(CLI).args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout).replace(',', "");
        for limit in [
            "8 GiB".to_owned(),
            perfgraph_core::Report::MAX_JSON_NODES.to_string(),
            perfgraph_core::Report::MAX_JSON_NAME_BYTES.to_string(),
        ] {
            assert!(help.contains(&limit), "{sub} --help lacks {limit}: {help}");
        }
    }
    assert_eq!(perfgraph_core::Report::MAX_JSON_BYTES, 8 << 30);
}

/// `one_section("a")` as process `pid`, started at `start`.
fn process_file(pid: u32, start: u64, calls: u64) -> String {
    one_section("a", "")
        .replace("\"pid\": 1,", &format!("\"pid\": {pid},"))
        .replace(
            "\"start_unix_ns\": 0,",
            &format!("\"start_unix_ns\": {start},"),
        )
        .replace(
            "\"calls\": 1, \"depth\": 1",
            &format!("\"calls\": {calls}, \"depth\": 1"),
        )
}

#[test]
fn a_merge_that_would_overflow_names_the_file_and_the_field() {
    let dir = scratch("overflow");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, process_file(10, 1, u64::MAX)).unwrap();
    std::fs::write(&b, process_file(11, 2, 199_998)).unwrap();
    refused(
        &cli(&["merge", s(&a), s(&b)]),
        &b,
        "\"calls\" overflows at a",
    );
}

#[test]
fn the_same_process_is_merged_once_unless_asked() {
    let dir = scratch("duplicates");
    let (a, b, all) = (dir.join("a.json"), dir.join("b.json"), dir.join("all.json"));
    std::fs::write(&a, process_file(10, 1, 5)).unwrap();
    std::fs::write(&b, process_file(11, 2, 7)).unwrap();
    refused(&cli(&["merge", s(&a), s(&a)]), &a, "is in");
    let out = cli(&["merge", s(&a), s(&b), "-o", s(&all)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // A merge with its own inputs again: refused, naming the merge's input it repeats.
    let out = cli(&["merge", s(&all), s(&a)]);
    refused(&out, &a, &format!("is in {} already", s(&all)));
    // Asked for, it counts twice.
    let out = cli(&["merge", "--allow-duplicates", s(&a), s(&a)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let merged = perfgraph_core::Report::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(merged.tree.find(&["a"]).unwrap().calls, 10);
}
