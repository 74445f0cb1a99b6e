//! Golden files of every at-exit output from one real recording under a fake clock: this test binary runs
//! itself as a child process (with `RECORDING_CHILD` set) that selects the manual clock and fake resident
//! memory (`__test_hooks::fake_clock`, `set_fake_rss_kb`) before the runtime starts, then runs a made-up
//! solver through real `#[timed]` functions and `time_section!`, moving the clock by exact amounts inside
//! the bodies. Everything after that is the real path: guards, per-thread call trees and rings, the
//! background thread's drains, snapshots, the merge, the reports on stderr and the three files, written by
//! the at-exit handler. The parent pins all four outputs, and checks the JSON's invariants and call counts.
//!
//! It has its own `main` (`harness = false`) so the child's work runs on the process's real main thread,
//! as in a user's program (the `main` thread and the root row's self time depend on it).
//!
//! Placeholders, each for something a fake clock cannot fix: the process id, host and wall-clock anchor
//! (`"[pid]"`, `"[host]"`, `"[start]"` in the JSON and in the trace's `process_name` args; the trace's
//! per-thread CPU counters are left out of its snapshot) and the threads' CPU time (`[cpu]` in the `Threads:` table, `"[cpu_ns]"` in the JSON, checked
//! for plausibility instead). Nothing else needs one: memory is sampled every `PERFGRAPH_MEM_INTERVAL=1000` ms, and the child
//! waits for the background thread's first pass (which takes the first sample) before it moves the clock,
//! so the counter track is that one sample at time 0 and its value again at the end.

mod common;

use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use perfgraph_core::__test_hooks::{advance_clock, fake_clock, passes, set_fake_rss_kb};
use perfgraph_core::{time_section, timed};
use serde_json::Value;

/// Selects the child.
const CHILD_VAR: &str = "RECORDING_CHILD";
/// The child's `argv[0]`: the root row's name.
const PROGRAM: &str = "recording-golden";
/// The fake clock's reading when the runtime starts (any value: times are measured from it).
const START_TICKS: u64 = 1_000_000_000_000;
/// Fake resident memory when the runtime starts, KiB.
const START_RSS_KB: u32 = 200 * 1024;

// ---- the child: a made-up solver under the fake clock ------------------------------------------------------

/// Moves the fake clock by `ms` milliseconds.
fn tick(ms: u64) {
    advance_clock(ms * 1_000_000);
}

/// The fake resident set, KiB (the child's own copy of what it told perfgraph).
static RSS_KB: AtomicU32 = AtomicU32::new(START_RSS_KB);

/// Grows (or with a negative `mib`, shrinks) the fake resident set.
fn grow(mib: i32) {
    let kb = RSS_KB.load(Ordering::Relaxed) as i64 + mib as i64 * 1024;
    RSS_KB.store(kb as u32, Ordering::Relaxed);
    set_fake_rss_kb(kb as u32);
}

#[timed(level = 0)]
fn app() {
    tick(5);
    setup();
    // The loader thread's work, between spawn and join: the clock moves only on one thread at a time.
    common::on_thread("loader", load);
    {
        time_section!("Simulation::time_steps");
        for step in 0..3 {
            time_step(step);
        }
    }
    tick(1);
}

#[timed(name = "Simulation::setup")]
fn setup() {
    // First thing: starts together with its parent (the trace must still put the parent first).
    residual();
    tick(20);
    grow(30);
    refine(3);
}

/// A recursion: `mesh::refine` under itself, three levels.
#[timed(name = "mesh::refine")]
fn refine(levels: u32) {
    tick(4);
    grow(8);
    if levels > 1 {
        refine(levels - 1);
    }
    tick(1);
}

/// On the `loader` thread.
#[timed(name = "io::load")]
fn load() {
    tick(40);
    grow(10);
    for _ in 0..2 {
        time_section!("io::parse");
        tick(7);
    }
}

#[timed(name = "Simulation::time_step")]
fn time_step(step: u32) {
    tick(2);
    solve();
    if step == 2 {
        output_step();
    }
}

#[timed(name = "Simulation::solve")]
fn solve() {
    tick(100);
    grow(4);
    for _ in 0..4 {
        residual();
    }
}

/// Called from `Simulation::setup` and from `Simulation::solve`: one section, two call paths.
#[timed(name = "Simulation::residual")]
fn residual() {
    tick(10);
    // Level 2 at verbosity 1: not recorded; its time is the residual's own.
    time_section!("residual::kernel", level = 2);
    tick(5);
}

#[timed(name = "Simulation::output_step")]
fn output_step() {
    tick(30);
    grow(-12);
}

fn child() {
    fake_clock(START_TICKS);
    set_fake_rss_kb(START_RSS_KB);
    // Starts the runtime (clock base, first memory sample, background thread) without recording anything.
    assert_eq!(perfgraph_core::clock_source(), "manual");
    // The first pass samples memory at the clock's current reading: let it happen before the clock moves.
    let deadline = Instant::now() + Duration::from_secs(30);
    while passes() < 1 {
        assert!(Instant::now() < deadline, "no background pass in 30 s");
        std::thread::yield_now();
    }
    app();
    // Returning from `main` runs the at-exit outputs.
}

// ---- the parent --------------------------------------------------------------------------------------------

struct Outputs {
    stderr: String,
    pid: u32,
    trace: String,
    folded: String,
    json: String,
}

fn run_child() -> Outputs {
    let dir = common::scratch("recording");
    let file = |name: &str| dir.join(name);
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.arg0(PROGRAM)
        .env(CHILD_VAR, "1")
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_VERBOSITY", "1")
        .env("PERFGRAPH_MEM_INTERVAL", "1000")
        .env("PERFGRAPH_REPORT", "all")
        .env("PERFGRAPH_TRACE", file("trace.json"))
        .env("PERFGRAPH_FOLDED", file("stacks.folded"))
        .env("PERFGRAPH_JSON", file("tree.json"));
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert!(out.status.success(), "child failed: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let read = |name: &str| {
        std::fs::read_to_string(file(name)).unwrap_or_else(|e| panic!("{name}: {e}\n{stderr}"))
    };
    Outputs {
        trace: read("trace.json"),
        folded: read("stacks.folded"),
        json: read("tree.json"),
        stderr,
        pid,
    }
}

fn recording_under_a_fake_clock() {
    let out = run_child();
    insta::assert_snapshot!("stderr", cpu_cells_redacted(&out.stderr));
    insta::assert_snapshot!("folded", out.folded);

    let json: Value = serde_json::from_str(&out.json).expect("the JSON file is JSON");
    check_json(&json);
    for t in json["threads"].as_array().unwrap() {
        let (cpu, alive) = (&t["cpu_ns"], t["alive_ns"].as_u64().unwrap());
        assert!(cpu.is_u64(), "{t}");
        // The threads only move a fake clock: their real CPU time is far below the fake time alive.
        assert!(cpu.as_u64().unwrap() < alive, "{t}");
    }
    // What a fake clock cannot fix: the process, its host and the wall-clock anchor.
    let host = json["host"].as_str().unwrap().to_owned();
    let start = json["start_unix_ns"].as_u64().unwrap();
    assert!(
        start > 1_600_000_000_000_000_000,
        "a wall-clock time: {start}"
    );
    let identity = |text: &str, sep: &str| {
        text.replace(
            &format!("\"pid\":{sep}{}", out.pid),
            &format!("\"pid\":{sep}\"[pid]\""),
        )
        .replace(
            &format!("\"host\":{sep}{}", serde_json::json!(host)),
            &format!("\"host\":{sep}\"[host]\""),
        )
        .replace(
            &format!("\"start_unix_ns\":{sep}{start}"),
            &format!("\"start_unix_ns\":{sep}\"[start]\""),
        )
    };
    insta::assert_snapshot!("json", cpu_ns_redacted(&identity(&out.json, " ")));

    let trace: Value = serde_json::from_str(&out.trace).expect("the trace is JSON");
    check_trace(&trace);
    // The one thing a fake clock cannot fix: the child's process id.
    let pid = format!("\"pid\":{}", out.pid);
    assert!(out.trace.contains(&pid), "{}", out.trace);
    // The threads' CPU counters hold their real CPU time over the fake clock's: left out (a run that
    // takes less than the memory interval of real time has none anyway); so is the page rule's padding
    // (a blank line where an event would have crossed a 4 KB boundary), which moves with the pid's and
    // the host's lengths.
    let mut lines: Vec<&str> = out
        .trace
        .lines()
        .filter(|l| !l.starts_with("{\"name\":\"CPU ") && !l.trim().is_empty())
        .collect();
    // The threads' events go to the file in the order the background thread drained them, which depends
    // on when it ran (a thread's exit wakes it): each thread's own events keep their order, and the
    // threads' are put in thread order, in the places thread events hold.
    let tid = |l: &str| -> Option<u64> {
        let at = l.find("\"tid\":")? + 6;
        let n: String = l[at..].chars().take_while(char::is_ascii_digit).collect();
        n.parse().ok().filter(|&t| t > 0)
    };
    let slots: Vec<usize> = (0..lines.len())
        .filter(|&i| tid(lines[i]).is_some())
        .collect();
    let mut events: Vec<&str> = slots.iter().map(|&i| lines[i]).collect();
    events.sort_by_key(|l| tid(l));
    for (&slot, event) in slots.iter().zip(events) {
        lines[slot] = event;
    }
    let trace_text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    insta::assert_snapshot!(
        "trace",
        identity(&trace_text, "").replace(&pid, "\"pid\":\"[pid]\"")
    );
}

/// The `Threads:` table's `CPU(s)` and `CPU %` cells as `[cpu]`, keeping the widths: a thread's CPU time is
/// the one figure of the table a fake clock cannot fix.
fn cpu_cells_redacted(stderr: &str) -> String {
    let mut in_threads = false;
    let mut out = String::new();
    for line in stderr.lines() {
        in_threads = match line {
            "Threads:" => true,
            "" => false,
            _ => in_threads,
        };
        let mut cells: Vec<String> = line.split('|').map(str::to_owned).collect();
        if in_threads && cells.len() == 9 && !line.contains("CPU(s)") {
            for cell in &mut cells[5..7] {
                *cell = format!("{:>w$} ", "[cpu]", w = cell.len() - 1);
            }
        }
        out.push_str(&cells.join("|"));
        out.push('\n');
    }
    out
}

/// Each `"cpu_ns": <number>` of the JSON as `"cpu_ns": "[cpu_ns]"` (see [`cpu_cells_redacted`]).
fn cpu_ns_redacted(json: &str) -> String {
    json.lines()
        .map(|line| match line.split_once("\"cpu_ns\": ") {
            Some((head, _)) => format!("{head}\"cpu_ns\": \"[cpu_ns]\",\n"),
            None => format!("{line}\n"),
        })
        .collect()
}

/// `self = total - children` and `children <= total` at every node but the merged root (whose time is the
/// wall time and whose self time is the main thread's time outside sections, see docs/json-schema.md), in
/// the merged tree and in every thread's; then the merged root's own rules and exact call counts.
fn check_json(json: &Value) {
    let check_tree = |tree: &Value, skip_root: bool, what: &str| {
        let nodes = tree.as_array().unwrap();
        for (i, node) in nodes.iter().enumerate() {
            assert_eq!(node["id"], i, "{what}: nodes in id order");
            if i == 0 && skip_root {
                continue;
            }
            let children: Vec<&Value> = nodes
                .iter()
                .filter(|c| c["parent"].as_u64() == Some(i as u64))
                .collect();
            let child_ns: u64 = children
                .iter()
                .map(|c| c["total_ns"].as_u64().unwrap())
                .sum();
            let child_mem: i64 = children
                .iter()
                .map(|c| c["total_mem_bytes"].as_i64().unwrap())
                .sum();
            let total = node["total_ns"].as_u64().unwrap();
            assert!(child_ns <= total, "{what}: children exceed {node}");
            assert_eq!(node["self_ns"], total - child_ns, "{what}: {node}");
            assert_eq!(
                node["self_mem_bytes"].as_i64().unwrap(),
                node["total_mem_bytes"].as_i64().unwrap() - child_mem,
                "{what}: {node}"
            );
        }
    };
    check_tree(&json["tree"], true, "merged tree");
    for t in json["threads"].as_array().unwrap() {
        check_tree(&t["tree"], false, t["name"].as_str().unwrap());
    }

    let nodes = json["tree"].as_array().unwrap();
    let root = &nodes[0];
    let threads = json["threads"].as_array().unwrap();
    let main = threads.iter().find(|t| t["main"] == true).unwrap();
    assert_eq!(root["name"], PROGRAM);
    assert_eq!(root["calls"], 1);
    assert_eq!(root["total_ns"], json["wall_ns"]);
    let wall = json["wall_ns"].as_u64().unwrap();
    assert_eq!(root["self_ns"], wall - main["busy_ns"].as_u64().unwrap());
    // What the child set minus what it started with: +30 +3*8 +10 +3*4 -12 MiB.
    assert_eq!(root["total_mem_bytes"], 64 * 1024 * 1024);

    // Exact calls per call path, found by names from the root.
    let path_of = |mut i: usize| {
        let mut names = Vec::new();
        while let Some(p) = nodes[i]["parent"].as_u64() {
            names.push(nodes[i]["name"].as_str().unwrap());
            i = p as usize;
        }
        names.reverse();
        names.join(";")
    };
    let calls: HashMap<String, u64> = (1..nodes.len())
        .map(|i| (path_of(i), nodes[i]["calls"].as_u64().unwrap()))
        .collect();
    let expected: HashMap<String, u64> = [
        ("app", 1),
        ("app;Simulation::setup", 1),
        ("app;Simulation::setup;Simulation::residual", 1),
        ("app;Simulation::setup;mesh::refine", 1),
        ("app;Simulation::setup;mesh::refine;mesh::refine", 1),
        ("app;Simulation::setup;mesh::refine;mesh::refine;mesh::refine", 1),
        ("app;Simulation::time_steps", 1),
        ("app;Simulation::time_steps;Simulation::time_step", 3),
        ("app;Simulation::time_steps;Simulation::time_step;Simulation::solve", 3),
        (
            "app;Simulation::time_steps;Simulation::time_step;Simulation::solve;Simulation::residual",
            12,
        ),
        ("app;Simulation::time_steps;Simulation::time_step;Simulation::output_step", 1),
        ("io::load", 1),
        ("io::load;io::parse", 2),
    ]
    .into_iter()
    .map(|(p, n)| (p.to_owned(), n))
    .collect();
    assert_eq!(
        calls, expected,
        "no residual::kernel: level 2 > verbosity 1"
    );
    let per_thread: Vec<(&str, u64)> = threads
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["calls"].as_u64().unwrap()))
        .collect();
    assert_eq!(per_thread, [("main", 26), ("loader", 3)]);
}

/// Every thread's complete events are sorted by start and properly nested (each inside the innermost one
/// still open), and memory was sampled only where the child made sure it was (see the module's comment).
fn check_trace(trace: &Value) {
    let ns = |v: &Value| (v.as_f64().unwrap() * 1000.0).round() as u64;
    let mut open: HashMap<u64, Vec<(u64, String)>> = HashMap::new();
    let mut last_start: HashMap<u64, u64> = HashMap::new();
    let mut counters = 0;
    // Calls are written as they end; a viewer orders them by thread, start, and outer call first.
    let mut events: Vec<&Value> = trace.as_array().unwrap().iter().collect();
    events.sort_by_key(|e| {
        let start = e["ts"].as_f64().map_or(0, |_| ns(&e["ts"]));
        let dur = e["dur"].as_f64().map_or(0, |_| ns(&e["dur"]));
        (
            e["tid"].as_u64().unwrap_or(0),
            start,
            std::cmp::Reverse(dur),
        )
    });
    for e in events {
        match e["ph"].as_str().unwrap() {
            "X" => {
                let tid = e["tid"].as_u64().unwrap();
                let (start, end) = (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"]));
                let last = last_start.entry(tid).or_insert(0);
                assert!(start >= *last, "not sorted by start: {e}");
                *last = start;
                let stack = open.entry(tid).or_default();
                while stack.last().is_some_and(|&(top_end, _)| top_end <= start) {
                    stack.pop();
                }
                if let Some((top_end, top)) = stack.last() {
                    assert!(end <= *top_end, "{e} overlaps {top} without nesting");
                }
                stack.push((end, e["name"].as_str().unwrap().to_owned()));
            }
            "C" => counters += 1,
            _ => {}
        }
    }
    assert_eq!(
        counters, 2,
        "memory samples: the first pass's and its value again at the end; another one means the child \
         stalled for longer than PERFGRAPH_MEM_INTERVAL (1 s), which the golden cannot absorb"
    );
}

// ---- a minimal harness -------------------------------------------------------------------------------------

fn main() {
    if std::env::var_os(CHILD_VAR).is_some() {
        child();
        return;
    }
    let name = "recording_under_a_fake_clock";
    // `cargo test -- <filter>`: run only if the name contains it. Flags (`--nocapture`, ...) are ignored.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.is_some_and(|f| !name.contains(f.as_str())) {
        println!("\nrunning 0 tests\n");
        return;
    }
    println!("\nrunning 1 test");
    recording_under_a_fake_clock();
    println!("test {name} ... ok\n");
}
