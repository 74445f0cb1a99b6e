//! CPU time per section (the `cpu` option, `PERFGRAPH_CPU=all`): the thread's CPU clock read at each
//! call's start and end. Computing against waiting, self against inclusive, summed over a future's polls,
//! nothing for sections without it; and with `PERFGRAPH_CPU=all`, every section, in the `CPU:` table and
//! the JSON.

mod common;

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use perfgraph_core::{CallNode, time_future, time_section, timed};

/// This thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is always a valid clock.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Keeps this thread computing until it has run `d` on a CPU: on a loaded machine that takes longer in
/// wall time (the difference is waiting for a core), but the CPU time is `d` whatever the load.
fn spin(d: Duration) {
    let until = thread_cpu_ns() + d.as_nanos() as u64;
    let mut x = 0u64;
    while thread_cpu_ns() < until {
        for _ in 0..1000 {
            x = x.wrapping_add(black_box(1));
        }
    }
    black_box(x);
}

/// The node at `path` in this test thread's tree (threads are named after their test).
fn node(path: &[&str]) -> CallNode {
    let name = std::thread::current().name().unwrap_or("main").to_owned();
    let tree = common::thread_named(&name).tree;
    tree.find(path)
        .unwrap_or_else(|| panic!("no {path:?}"))
        .clone()
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

#[test]
fn spinning_is_cpu_and_sleeping_is_waiting() {
    {
        time_section!("cpu::spin_then_sleep", cpu);
        spin(Duration::from_millis(300));
        std::thread::sleep(Duration::from_millis(300));
    }
    let n = node(&["cpu::spin_then_sleep"]);
    let cpu = n.cpu.expect("a section with `cpu` has CPU figures");
    let waiting = n.total_ns.saturating_sub(cpu.cpu_ns);
    // Generous bounds (the spin is 300 ms of CPU time; a loaded machine adds waiting, not CPU).
    assert!(
        (0.2..=0.45).contains(&secs(cpu.cpu_ns)),
        "CPU {} s of {} s",
        secs(cpu.cpu_ns),
        secs(n.total_ns)
    );
    assert!(
        secs(waiting) >= 0.25,
        "waiting {} s of {} s",
        secs(waiting),
        secs(n.total_ns)
    );
    assert_eq!(cpu.self_cpu_ns, cpu.cpu_ns, "no measured child");
}

#[timed(name = "cpu::inner", cpu)]
fn inner() {
    spin(Duration::from_millis(60));
}

#[test]
fn self_cpu_is_inclusive_minus_the_measured_children() {
    {
        time_section!("cpu::outer", cpu);
        spin(Duration::from_millis(40));
        inner();
        inner();
    }
    let outer = node(&["cpu::outer"]).cpu.expect("outer measured");
    let inner = node(&["cpu::outer", "cpu::inner"])
        .cpu
        .expect("inner measured");
    assert_eq!(inner.self_cpu_ns, inner.cpu_ns);
    assert_eq!(outer.self_cpu_ns, outer.cpu_ns - inner.cpu_ns);
    assert!(inner.cpu_ns > outer.self_cpu_ns, "{inner:?} {outer:?}");
}

#[test]
fn a_section_without_the_option_has_no_cpu_figures() {
    {
        time_section!("cpu::not_measured");
        time_section!("cpu::measured_inside", cpu);
        spin(Duration::from_millis(5));
    }
    assert_eq!(node(&["cpu::not_measured"]).cpu, None);
    assert!(
        node(&["cpu::not_measured", "cpu::measured_inside"])
            .cpu
            .is_some()
    );
}

/// A future that spins `per_poll` at each poll and is ready at its `polls`th.
struct Spinner {
    left: u32,
    per_poll: Duration,
}

impl Future for Spinner {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        spin(self.per_poll);
        self.left -= 1;
        if self.left == 0 {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[test]
fn a_futures_cpu_time_is_summed_over_its_polls() {
    let spinner = Spinner {
        left: 3,
        per_poll: Duration::from_millis(40),
    };
    let mut fut = pin!(time_future!("cpu::future", spinner, cpu));
    let mut cx = Context::from_waker(Waker::noop());
    let mut polls = 0;
    while fut.as_mut().poll(&mut cx).is_pending() {
        polls += 1;
        // Off the CPU between polls: not the future's time, nor its CPU.
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(polls, 2);
    let n = node(&["cpu::future"]);
    let cpu = n.cpu.expect("measured");
    assert_eq!(n.polls, 3);
    // Three polls of 40 ms spinning; the 60 ms of sleep between them counts in neither.
    assert!(
        (0.08..=0.2).contains(&secs(cpu.cpu_ns)),
        "CPU {} s",
        secs(cpu.cpu_ns)
    );
    assert!(cpu.cpu_ns <= n.total_ns + 5_000_000, "{cpu:?} {n:?}");
}

/// What a test child run with `setting` left, besides the `CPU:` table (`PERFGRAPH_REPORT=cpu`, live print
/// and capture off): its stderr, its JSON's bytes and its Chrome trace's events, written to a scratch
/// directory that is removed once read.
struct Outputs {
    stderr: String,
    json: Vec<u8>,
    events: serde_json::Value,
}

fn run_child(test: &str, setting: (&str, &str)) -> Outputs {
    let dir = common::scratch(test);
    let (json, trace) = (dir.join("run.json"), dir.join("run.trace.json"));
    let stderr = common::test_child_stderr(
        test,
        &[
            setting,
            ("PERFGRAPH_REPORT", "cpu"),
            ("PERFGRAPH_LIVE", "off"),
            ("PERFGRAPH_CAPTURE", "off"),
            ("PERFGRAPH_JSON", json.to_str().unwrap()),
            ("PERFGRAPH_TRACE", trace.to_str().unwrap()),
        ],
    );
    Outputs {
        stderr,
        json: std::fs::read(&json).unwrap(),
        events: serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap(),
    }
}

/// The complete-event slice of section `name` in a trace's `events`.
fn slice<'a>(events: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["ph"] == "X" && e["name"] == name)
        .expect("the slice")
}

/// `PERFGRAPH_CPU=all`: sections without the option measure their CPU too; `PERFGRAPH_REPORT=cpu` prints
/// the `CPU:` table with them, the JSON has `cpu_ns` and `self_cpu_ns` on their nodes, and the trace in
/// their slices' args. Runs itself as a child with those settings.
#[test]
fn cpu_all_measures_every_section() {
    const TEST: &str = "cpu_all_measures_every_section";
    if common::is_test_child(TEST) {
        {
            time_section!("cpu::everywhere");
            time_section!("cpu::inside");
            spin(Duration::from_millis(20));
        }
        assert!(node(&["cpu::everywhere"]).cpu.is_some());
        return;
    }
    let out = run_child(TEST, ("PERFGRAPH_CPU", "all"));
    let text = &out.stderr;
    assert!(text.contains("\nCPU:\n"), "{text}");
    assert!(
        text.contains("| Calls |  Total(s)  |   CPU(s)   | Waiting(s) |  CPU % |"),
        "{text}"
    );
    assert!(text.contains("cpu::everywhere"), "{text}");
    // The JSON: both sections' nodes carry the fields, self CPU is inclusive minus the child's.
    let run: serde_json::Value = serde_json::from_slice(&out.json).unwrap();
    let nodes = run["tree"].as_array().expect("the merged tree");
    let named = |name: &str| {
        nodes
            .iter()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {run}"))
    };
    let (outer, inner) = (named("cpu::everywhere"), named("cpu::inside"));
    let ns = |n: &serde_json::Value, k: &str| n[k].as_u64().unwrap_or_else(|| panic!("{k} in {n}"));
    assert_eq!(
        ns(outer, "self_cpu_ns"),
        ns(outer, "cpu_ns") - ns(inner, "cpu_ns")
    );
    assert!(ns(inner, "cpu_ns") >= 15_000_000, "{inner}");
    // The trace: the slices' args.
    let slice = slice(&out.events, "cpu::inside");
    assert_eq!(slice["args"]["cpu_ns"], inner["cpu_ns"], "{slice}");
    assert_eq!(slice["args"]["self_cpu_ns"], inner["cpu_ns"], "{slice}");
    // Context switches are not counted without `PERFGRAPH_SWITCHES=on`: no field, no column.
    assert!(inner.get("voluntary_switches").is_none(), "{inner}");
    assert!(!text.contains("switches"), "{text}");
}

/// `PERFGRAPH_SWITCHES=on`: a CPU-measuring section that sleeps 20 times has at least 20 voluntary context
/// switches, in the `CPU:` table's column, the JSON (read back the same) and its trace slice's args.
#[test]
fn switches_are_counted_with_the_setting() {
    const TEST: &str = "switches_are_counted_with_the_setting";
    if common::is_test_child(TEST) {
        {
            time_section!("cpu::naps", cpu);
            for _ in 0..20 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let cpu = node(&["cpu::naps"]).cpu.expect("measured");
        assert!(cpu.voluntary_switches >= 20, "{cpu:?}");
        return;
    }
    let out = run_child(TEST, ("PERFGRAPH_SWITCHES", "on"));
    let text = &out.stderr;
    assert!(text.contains("| Voluntary switches |"), "{text}");
    let run: serde_json::Value = serde_json::from_slice(&out.json).unwrap();
    let naps = run["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "cpu::naps")
        .unwrap_or_else(|| panic!("no cpu::naps in {run}"));
    let voluntary = naps["voluntary_switches"].as_u64().expect("counted");
    assert!(voluntary >= 20, "{naps}");
    let read = perfgraph_core::data::Report::read_json(&out.json[..]).unwrap();
    let cpu = read.tree.find(&["cpu::naps"]).unwrap().cpu.unwrap();
    assert_eq!(cpu.voluntary_switches, voluntary);
    let slice = slice(&out.events, "cpu::naps");
    assert_eq!(slice["args"]["voluntary_switches"], voluntary, "{slice}");
}
