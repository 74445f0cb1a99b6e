//! `report()` against the real runtime: exact counts under a two-thread load (with the ring overflowing),
//! the tree invariants on every node, a report taken while threads are inside sections, and reports taken
//! over and over while two threads record.

mod common;

use std::sync::mpsc;

use perfgraph_core::{Report, time_section};

/// Every section node: `total = self + children` exactly, so `children <= total`; the root is the run.
fn check_invariants(r: &Report) {
    for (i, n) in r.tree.nodes.iter().enumerate().skip(1) {
        let children: u64 = n.children.iter().map(|&c| r.tree.nodes[c].total_ns).sum();
        assert!(
            children <= n.total_ns,
            "node {i} {}: children {children} > total {}",
            n.name,
            n.total_ns
        );
        assert_eq!(n.self_ns, n.total_ns - children, "node {i} {}", n.name);
        let mem: i64 = n
            .children
            .iter()
            .map(|&c| r.tree.nodes[c].total_mem_bytes)
            .sum();
        assert_eq!(
            n.self_mem_bytes,
            n.total_mem_bytes - mem,
            "node {i} {}",
            n.name
        );
        assert!(n.calls >= 1, "node {i} {}", n.name);
    }
    let root = r.tree.root();
    assert_eq!((root.calls, root.total_ns), (1, r.run.wall_ns));
    assert!(root.self_ns <= root.total_ns);
    for t in &r.threads {
        assert!(
            t.busy_ns <= t.alive_ns + 1_000,
            "{}: busy {} > alive {}; exited {}; wall {}; nodes {:?}",
            t.name,
            t.busy_ns,
            t.alive_ns,
            t.exited,
            r.run.wall_ns,
            t.tree
                .nodes
                .iter()
                .map(|n| (n.name, n.calls, n.running, n.self_ns, n.total_ns))
                .collect::<Vec<_>>()
        );
        assert_eq!(t.busy_ns, t.tree.root().total_ns);
    }
}

fn load(outer: u64, inner: u64) {
    for _ in 0..outer {
        time_section!("rt::outer");
        for _ in 0..inner {
            time_section!("rt::inner");
            std::hint::black_box(0);
        }
    }
}

#[test]
fn counts_are_exact_under_two_threads_even_when_the_ring_overflows() {
    const OUTER: u64 = 50;
    const INNER: u64 = 1_000; // 50,050 records per thread: the 8192-record rings overflow
    perfgraph_core::__test_hooks::pause_draining(true);
    let workers: Vec<_> = ["rt-a", "rt-b"]
        .into_iter()
        .map(|name| common::spawn_named(name, || load(OUTER, INNER)))
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    common::wait_passes(2);
    let r = perfgraph_core::report();
    check_invariants(&r);
    let outer = r.tree.find(&["rt::outer"]).unwrap();
    let inner = r.tree.find(&["rt::outer", "rt::inner"]).unwrap();
    assert_eq!(outer.calls, 2 * OUTER);
    assert_eq!(inner.calls, 2 * OUTER * INNER);
    assert!(outer.total_ns >= inner.total_ns);
    for name in ["rt-a", "rt-b"] {
        let t = r.threads.iter().find(|t| t.name == name).unwrap();
        assert_eq!(t.calls, OUTER + OUTER * INNER);
        assert_eq!(t.dropped, OUTER + OUTER * INNER - 8192, "{name}");
        assert!(t.exited);
    }
    // The overflow is counted; no output of this run needs every record, so nothing was lost to an
    // output and the tables do not alarm (the count is in the report's data and the JSON).
    assert!(r.dropped >= 2 * (OUTER + OUTER * INNER - 8192));
    assert!(!r.run.needs_every_record);
    let shown = r.to_string();
    assert!(!shown.contains("Dropped: "), "{shown}");
    assert!(r.json().contains(&format!("\"dropped\": {}", r.dropped)));
    // With the trace or interval statistics on, the line says what they lack.
    let mut r = r;
    r.run.needs_every_record = true;
    let shown = r.to_string();
    assert!(
        shown.contains("Dropped: ") && shown.contains("the trace and interval statistics lack"),
        "{shown}"
    );
    assert!(
        shown.contains("rt-a 41858") && shown.contains("rt-b 41858"),
        "{shown}"
    );
}

#[test]
fn a_report_while_threads_are_inside_sections() {
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let worker = common::spawn_named("rt-busy", move || {
        time_section!("rt::waiting");
        {
            time_section!("rt::done");
        }
        time_section!("rt::blocked");
        entered_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    entered_rx.recv().unwrap();
    let first = perfgraph_core::report();
    check_invariants(&first);
    let waiting = first.tree.find(&["rt::waiting"]).unwrap();
    let blocked = first.tree.find(&["rt::waiting", "rt::blocked"]).unwrap();
    assert_eq!((waiting.calls, waiting.running), (1, 1));
    assert_eq!((blocked.calls, blocked.running), (1, 1));
    assert_eq!(
        first
            .tree
            .find(&["rt::waiting", "rt::done"])
            .unwrap()
            .running,
        0
    );
    let t = first.threads.iter().find(|t| t.name == "rt-busy").unwrap();
    assert!(!t.exited);
    let table = first.to_string();
    assert!(table.contains("|   rt::waiting "), "{table}");
    assert!(table.contains("Running: "), "{table}");
    // Later, the same running call has more time: the report reads time so far.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let second = perfgraph_core::report();
    check_invariants(&second);
    let later = second.tree.find(&["rt::waiting", "rt::blocked"]).unwrap();
    assert!(later.total_ns > blocked.total_ns);
    assert!(second.run.wall_ns > first.run.wall_ns);
    release_tx.send(()).unwrap();
    worker.join().unwrap();
    let done = perfgraph_core::report();
    check_invariants(&done);
    assert_eq!(done.tree.find(&["rt::waiting"]).unwrap().running, 0);
}

#[test]
fn reports_taken_while_two_threads_record_hold_the_invariants_and_never_go_back() {
    const OUTER: u64 = 2_000;
    const INNER: u64 = 50;
    let workers: Vec<_> = ["rt-live-a", "rt-live-b"]
        .into_iter()
        .map(|name| {
            common::spawn_named(name, || {
                for _ in 0..OUTER {
                    time_section!("rt::live_outer");
                    for _ in 0..INNER {
                        time_section!("rt::live_inner");
                        std::hint::black_box(0);
                    }
                }
            })
        })
        .collect();
    let calls = |r: &Report, path: &[&str]| r.tree.find(path).map_or(0, |n| n.calls);
    let (mut outer, mut inner, mut reports) = (0, 0, 0u32);
    while !workers.iter().all(|w| w.is_finished()) || reports == 0 {
        let r = perfgraph_core::report();
        check_invariants(&r);
        let (o, i) = (
            calls(&r, &["rt::live_outer"]),
            calls(&r, &["rt::live_outer", "rt::live_inner"]),
        );
        assert!(
            o >= outer && i >= inner,
            "counts went back: {o} < {outer} or {i} < {inner}"
        );
        (outer, inner, reports) = (o, i, reports + 1);
    }
    for w in workers {
        w.join().unwrap();
    }
    let r = perfgraph_core::report();
    check_invariants(&r);
    assert_eq!(calls(&r, &["rt::live_outer"]), 2 * OUTER);
    assert_eq!(
        calls(&r, &["rt::live_outer", "rt::live_inner"]),
        2 * OUTER * INNER
    );
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), ns.
fn own_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(status, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A thread that computes for 300 ms of CPU time, then sleeps 300 ms, inside one section: the `Threads:`
/// figures tell the two apart (its CPU time about 0.3 s, its time alive at least 0.6 s), while it runs and
/// after it exited. It spins on its own CPU clock, not the wall clock, so a loaded machine changes nothing
/// but the wall time.
#[test]
fn threads_cpu_time_tells_computing_from_waiting() {
    const MS: u64 = 1_000_000;
    let (computed, ask) = (mpsc::channel(), mpsc::channel::<()>());
    let worker = std::thread::Builder::new()
        .name("cpu-then-sleep".into())
        .spawn(move || {
            time_section!("cpu_then_sleep");
            let start = own_cpu_ns();
            while own_cpu_ns() - start < 300 * MS {
                std::hint::spin_loop();
            }
            computed.0.send(()).unwrap();
            ask.1.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
        })
        .unwrap();
    computed.1.recv().unwrap();
    let find = |r: &Report| {
        r.threads
            .iter()
            .find(|t| t.name == "cpu-then-sleep")
            .cloned()
            .unwrap()
    };
    let running = find(&perfgraph_core::report());
    assert!(!running.exited);
    assert!(
        (290 * MS..=500 * MS).contains(&running.cpu_ns),
        "{running:?}"
    );
    ask.0.send(()).unwrap();
    worker.join().unwrap();
    let done = find(&perfgraph_core::report());
    assert!(done.exited && done.alive_ns >= 600 * MS, "{done:?}");
    assert!((290 * MS..=500 * MS).contains(&done.cpu_ns), "{done:?}");
    assert!(done.cpu_ns < done.alive_ns / 10 * 9, "{done:?}");
    let table = perfgraph_core::report().threads_table();
    let row = table
        .lines()
        .find(|l| l.contains("cpu-then-sleep"))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let cpu_s: f64 = cells[5].parse().unwrap();
    let cpu_pct: f64 = cells[6].parse().unwrap();
    assert!((0.29..=0.5).contains(&cpu_s), "{table}");
    assert!(cpu_pct < 90.0, "{table}");
}

/// Counters from threads that set them and exit, read over and over while they run: every reading whole
/// (each value is 2, so the sum is twice the samples), never going back, and exact at the end, the exited
/// threads' figures folded in once.
#[test]
fn counters_of_exiting_threads_are_exact_and_every_reading_is_whole() {
    const THREADS: u64 = 8;
    const EACH: u64 = 20_000;
    let counter = |r: &Report| {
        r.run
            .counters
            .iter()
            .find(|c| c.name == "report_runtime twos")
            .cloned()
    };
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..EACH {
                    perfgraph_core::counter!("report_runtime twos", 2u8);
                }
            })
        })
        .collect();
    let mut last = 0;
    while workers.iter().any(|w| !w.is_finished()) {
        if let Some(c) = counter(&perfgraph_core::report()) {
            assert_eq!(c.sum, 2.0 * c.samples as f64, "a torn reading: {c:?}");
            assert!(c.samples >= last, "went back from {last} to {}", c.samples);
            last = c.samples;
        }
    }
    for w in workers {
        w.join().unwrap();
    }
    perfgraph_core::counter!("report_runtime twos", 2u64);
    let c = counter(&perfgraph_core::report()).unwrap();
    assert_eq!(c.samples, THREADS * EACH + 1);
    assert_eq!((c.min, c.max, c.last, c.mean()), (2.0, 2.0, 2.0, 2.0));
}
