//! The `perfgraph` commands the README and docs/ show, run as written (through `sh`, so their globs
//! expand) against real files: four ranks' call-tree JSON and Chrome traces, a base and a head run. A command
//! in a code block of the docs that starts with `perfgraph ` (or a CI step `- run: perfgraph ...`) is run
//! in a directory holding the files its examples name; it must succeed (`diff` may also report a regression,
//! exit 1, or on bundles be undecided, exit 3). So an example that stops working (a renamed flag, a glob that matches the wrong files) fails here.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// An example program of the CLI's tests (built by `cargo test` next to the test binaries).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name);
    assert!(path.exists(), "{} not built", path.display());
    path
}

fn ranks_example() -> PathBuf {
    example("ranks")
}

/// Runs the example as `rank` in `dir`, with `vars`.
fn rank_run(dir: &Path, rank: u32, vars: &[(&str, &str)]) {
    let mut c = Command::new(ranks_example());
    for v in [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ] {
        c.env_remove(v);
    }
    for v in perfgraph_core::Config::VARIABLE_NAMES {
        c.env_remove(v);
    }
    let out = c
        .current_dir(dir)
        .env("RANK", rank.to_string())
        .env("PERFGRAPH_LIVE", "off")
        // No control socket: nothing of it left outside the test's directory.
        .env("PERFGRAPH_LISTEN", "off")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// The `perfgraph` command lines of the code blocks of `markdown`.
fn commands(markdown: &str) -> Vec<String> {
    let mut in_block = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let line = line.trim_start();
        let line = line.strip_prefix("- run: ").unwrap_or(line);
        if let Some(rest) = line.strip_prefix("perfgraph ") {
            // The comment that follows a command, aligned with spaces.
            let command = rest.split(" # ").next().unwrap().trim_end();
            found.push(format!("perfgraph {command}"));
        }
    }
    found
}

#[test]
fn the_docs_perfgraph_commands_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut all = Vec::new();
    let mut docs: Vec<PathBuf> = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for c in commands(&text) {
            all.push((doc.strip_prefix(root).unwrap().display().to_string(), c));
        }
    }
    assert!(
        all.len() >= 8,
        "the docs' perfgraph commands were not found: {all:?}"
    );

    let dir = common::scratch("perfgraph-doc-examples", "docs");
    // The files the examples name: four ranks (`run.{rank}.json`, `trace.{rank}.json`), one run
    // (`run.json`, and its trace `trace.json`), and a base and a head run for `diff`.
    for rank in 0..4 {
        rank_run(
            &dir,
            rank,
            &[
                ("PERFGRAPH_JSON", "run.{rank}.json"),
                ("PERFGRAPH_TRACE", "trace.{rank}.json"),
            ],
        );
    }
    for name in ["run.json", "base.json", "head.json", "baseline.json"] {
        rank_run(&dir, 0, &[("PERFGRAPH_JSON", name)]);
    }
    // The programs `record` runs (`./old`, `./new`, a CI job's two builds of `solver`) and their
    // inputs: the ranks example under each name; a git repository for `history add` to find a commit in
    // when this checkout is none.
    for program in [
        "old",
        "new",
        "old-solver",
        "new-solver",
        "target/release/solver",
        "base/target/release/solver",
    ] {
        let at = dir.join(program);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(ranks_example(), at).unwrap();
    }
    // `perfgraph causal`'s program: the known-answer programs of its tests.
    std::os::unix::fs::symlink(example("causal"), dir.join("causal")).unwrap();
    for input in ["input.dat", "bench.dat"] {
        std::fs::write(dir.join(input), "").unwrap();
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args([
                "-c",
                "user.name=perfgraph",
                "-c",
                "user.email=perfgraph@localhost",
            ])
            .args(args)
            .current_dir(&dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let in_git = git(&["init", "-q"]) && git(&["commit", "-q", "--allow-empty", "-m", "docs"]);
    // One run's trace (`trace.json`, for `report --critical-path`).
    rank_run(&dir, 0, &[("PERFGRAPH_TRACE", "trace.json")]);
    // The running program the commands that look into one name as process 12345 (`ps`, `report <pid>`,
    // `dump`, `trace`): the CLI's service example, in a runtime directory of its own.
    let runtime = dir.join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    let mut service = common::Reaped(
        Command::new(example("service"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("PERFGRAPH_LIVE", "off")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let socket = runtime.join(format!("perfgraph/{}.sock", service.0.id()));
    let start = std::time::Instant::now();
    while !socket.exists() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let path = format!(
        "{}:{}",
        Path::new(CLI).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failed = Vec::new();
    for (doc, command) in &all {
        if command.starts_with("perfgraph top ") {
            // Interactive: tests/top.rs runs it under a pseudo-terminal.
            continue;
        }
        if command.starts_with("perfgraph history add") && !in_git {
            eprintln!("note: `{command}` did not run: no git to find the bundle's commit with");
            continue;
        }
        if command.starts_with("perfgraph record ") {
            // A bundle is made new: the one an earlier example made goes first.
            for bundle in ["perfgraph-bundle", "gate"] {
                let _ = std::fs::remove_dir_all(dir.join(bundle));
            }
        }
        let command = command.replace("12345", &service.0.id().to_string());
        // A trace of the next N seconds (`perfgraph trace --seconds 5`) waits them out: half a second
        // shows the command works as written as well, 4.5 s sooner.
        let command = shorter_trace(&command);
        let out = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&dir)
            .env("PATH", &path)
            .env("XDG_RUNTIME_DIR", &runtime)
            .output()
            .unwrap();
        let code = out.status.code();
        // `diff` may find a regression (1), or on bundles be undecided (3).
        let ok = code == Some(0)
            || (command.starts_with("perfgraph diff ") && matches!(code, Some(1 | 3)));
        if !ok {
            failed.push(format!(
                "{doc}: `{command}` exited {code:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    drop(service.0.stdin.take());
    let _ = service.0.wait();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// `command` with the number after `--seconds` made `0.5`.
fn shorter_trace(command: &str) -> String {
    match command.split_once("--seconds ") {
        Some((head, tail)) => {
            let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            format!("{head}--seconds 0.5{rest}")
        }
        None => command.to_owned(),
    }
}
