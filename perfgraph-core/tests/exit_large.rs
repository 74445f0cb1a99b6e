//! Large recordings at exit: many threads, and a very deep recursion. The exit's outputs take a while to
//! build and render for these, and the exit handler gives up only on an exit that makes no progress, so
//! their JSON must be written whole, and parseable, and building it must not multiply the process's
//! memory: the child's peak resident set with `PERFGRAPH_JSON` is at most twice that of the same run
//! without it (read by the parent from `wait4`'s `ru_maxrss`).
//!
//! The sizes here are small enough for a test run (larger with `TESTS_FULL=1`); `EXIT_LARGE_THREADS` and
//! `EXIT_LARGE_DEPTH` set the full-size figures (100,000 threads; 100,000 deep) by hand, e.g.
//! `EXIT_LARGE_THREADS=100000 cargo test --release -p perfgraph-core --test exit_large -- --nocapture`.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use perfgraph_core::{time_section, timed};
use serde_json::Value;

/// Threads, one section each: 10,000 at full size (`TESTS_FULL=1`, as `.ci/run` sets), 2,500 by default.
fn threads() -> usize {
    if common::full() { 10_000 } else { 2_500 }
}
/// Recursion depth, on one thread: 20,000 at full size, 5,000 by default.
fn depth() -> usize {
    if common::full() { 20_000 } else { 5_000 }
}

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[timed(name = "recurse")]
fn recurse(n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    1 + recurse(n - 1)
}

/// The child's work, chosen by `EXIT_LARGE_CHILD` (`threads` or `deep`), sized by `EXIT_LARGE_N`.
#[test]
fn child_entry() {
    let Some(kind) = std::env::var_os("EXIT_LARGE_CHILD") else {
        return;
    };
    let n = size("EXIT_LARGE_N", 0);
    match kind.to_str() {
        Some("threads") => {
            // In batches, so the test does not wait on one spawn at a time, nor hold thousands of stacks.
            let mut spawned = 0;
            while spawned < n {
                let batch: Vec<_> = (spawned..n.min(spawned + 64))
                    .map(|i| {
                        common::spawn_named(&format!("worker-{i}"), || {
                            time_section!("one");
                        })
                    })
                    .collect();
                spawned += batch.len();
                for h in batch {
                    h.join().unwrap();
                }
            }
        }
        Some("deep") => {
            let depth = n as u32;
            std::thread::Builder::new()
                .name("deep".into())
                .stack_size(1 << 30)
                .spawn(move || assert_eq!(recurse(depth), depth as u64))
                .unwrap()
                .join()
                .unwrap();
        }
        _ => panic!("EXIT_LARGE_CHILD={kind:?}"),
    }
    // For the parent: how long the exit took after this.
    eprintln!("exit_large: work done at {} ns", monotonic_ns());
}

/// `CLOCK_MONOTONIC` in ns: the same clock in the child and the parent.
fn monotonic_ns() -> u64 {
    // SAFETY: all-zero bytes are a valid `timespec`.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is valid for writes for the whole call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

struct Run {
    stderr: String,
    /// Peak resident set, KiB.
    max_rss_kb: i64,
    /// From the end of the child's work to its exit (the harness's last lines, then the exit handler).
    exit: Duration,
}

/// Runs the child for `kind` of size `n` with `env`, waits for it with `wait4` and returns its stderr and
/// peak resident set.
fn run_child(kind: &str, n: usize, env: &[(&str, &Path)]) -> Run {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = common::child_command(&exe);
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("EXIT_LARGE_CHILD", kind)
        .env("EXIT_LARGE_N", n.to_string())
        .env("PERFGRAPH_LIVE", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by `wait4` below, which returns its resource usage"
    )]
    let mut child = cmd.spawn().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let (status, max_rss_kb) = wait4(child.id());
    let exited = monotonic_ns();
    let elapsed = start.elapsed();
    // Generous: catches a hang at exit, not slowness.
    assert!(elapsed < Duration::from_secs(300), "child took {elapsed:?}");
    assert!(status == 0, "child failed ({status:#x}): {stderr}");
    let done: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("exit_large: work done at "))
        .and_then(|l| l.strip_suffix(" ns")?.parse().ok())
        .unwrap_or_else(|| panic!("the child did not finish its work: {stderr}"));
    Run {
        stderr,
        max_rss_kb,
        exit: Duration::from_nanos(exited.saturating_sub(done)),
    }
}

/// Waits for child `pid`: its wait status and its peak resident set (KiB; `ru_maxrss` is in KiB on
/// Linux). `std::process::Child::wait` does not return the child's resource usage.
fn wait4(pid: u32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: all-zero bytes are a valid `rusage` (integers and `timeval`s).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (`Child::wait` was never called); `status` and `usage`
    // are valid for writes for the whole call.
    let reaped = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid as libc::pid_t, "wait4");
    (status, usage.ru_maxrss)
}

/// A fresh directory for one test, removed when dropped.
fn temp_dir(tag: &str) -> common::Scratch {
    common::scratch(&format!("exit-large-{tag}"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// One measuring child at a time: two running side by side on two cores slow each other's background
/// thread, and a child's peak memory would then measure the other's load, not its own outputs.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `kind` of size `n` without any output and then with only `PERFGRAPH_JSON` (three times each);
/// checks the exits gave up nothing and the second one's peak resident set is at most twice the first's.
/// Returns the JSON.
fn with_and_without_json(kind: &str, n: usize) -> Value {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir(kind);
    let json_path = dir.join("tree.json");
    // The peak of one run moves by tens of MB on a loaded machine (when the background thread gets to fold
    // the exited threads), always upward: each side is the run with the lowest peak of three, alternated.
    let (mut plain, mut with) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        plain.push(run_child(kind, n, &[]));
        with.push(run_child(kind, n, &[("PERFGRAPH_JSON", &json_path)]));
    }
    let lowest = |runs: Vec<Run>| runs.into_iter().min_by_key(|r| r.max_rss_kb).unwrap();
    let (plain, with) = (lowest(plain), lowest(with));
    eprintln!(
        "{kind} {n}: peak resident {} KiB without PERFGRAPH_JSON (exit {:.3} s), {} KiB with it (exit \
         {:.3} s, {} bytes of JSON)",
        plain.max_rss_kb,
        plain.exit.as_secs_f64(),
        with.max_rss_kb,
        with.exit.as_secs_f64(),
        std::fs::metadata(&json_path).map_or(0, |m| m.len()),
    );
    for run in [&plain, &with] {
        assert!(!run.stderr.contains("perfgraph: error"), "{}", run.stderr);
    }
    assert!(
        with.max_rss_kb <= 2 * plain.max_rss_kb,
        "peak resident {} KiB with PERFGRAPH_JSON, {} KiB without",
        with.max_rss_kb,
        plain.max_rss_kb
    );
    read_json(&json_path)
}

#[test]
fn many_threads_get_their_json_written_at_exit() {
    let n = size("EXIT_LARGE_THREADS", threads());
    let json = with_and_without_json("threads", n);
    let threads = json["threads"].as_array().unwrap();
    // The workers (the test's own thread that spawned them recorded nothing: it is not listed).
    assert_eq!(threads.len(), n);
    for t in threads {
        assert!(t["name"].as_str().unwrap().starts_with("worker-"), "{t}");
        assert_eq!(t["calls"], 1);
        assert_eq!(t["exited"], true);
        assert_eq!(t["tree"].as_array().unwrap().len(), 2);
    }
    let tree = json["tree"].as_array().unwrap();
    assert_eq!(tree.len(), 2);
    assert_eq!(tree[1]["name"], "one");
    assert_eq!(tree[1]["calls"], n as u64);
}

/// Checks the JSON of a recursion `depth` deep: the root and one call path per level, in the merged tree
/// and in the thread's own.
fn check_deep(json: &Value, depth: usize) {
    let nodes = json["tree"].as_array().unwrap();
    assert_eq!(nodes.len(), depth + 2);
    let deepest = nodes.last().unwrap();
    assert_eq!(deepest["depth"], depth as u64 + 1);
    assert_eq!(deepest["calls"], 1);
    let threads = json["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["name"], "deep");
    assert_eq!(threads[0]["tree"].as_array().unwrap().len(), depth + 2);
}

#[test]
fn a_deep_recursion_gets_its_json_written_at_exit() {
    let depth = size("EXIT_LARGE_DEPTH", depth());
    check_deep(&with_and_without_json("deep", depth), depth);

    // With the graph too: its footer sends the paths it leaves out to the JSON, and they are there.
    let dir = temp_dir("deep-graph");
    let json_path = dir.join("tree.json");
    let run = run_child(
        "deep",
        depth,
        &[
            ("PERFGRAPH_JSON", &json_path),
            ("PERFGRAPH_REPORT", Path::new("graph")),
        ],
    );
    assert!(!run.stderr.contains("perfgraph: error"), "{}", run.stderr);
    let json = read_json(&json_path);
    check_deep(&json, depth);
    let table_depth = perfgraph_core::TABLE_DEPTH as usize;
    let not_shown = format!(
        "Not shown: {} call paths deeper than {table_depth} levels (they are in the JSON and folded exports).",
        depth + 1 - table_depth
    );
    assert!(run.stderr.lines().any(|l| l == not_shown), "{}", run.stderr);
    let in_json = json["tree"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["depth"].as_u64().unwrap() > table_depth as u64)
        .count();
    assert_eq!(in_json, depth + 1 - table_depth);
}
