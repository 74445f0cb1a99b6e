//! A thread that records and exits before the background thread reads its ring hands everything over.

mod common;

use perfgraph_core::timed;

#[timed(name = "exit::job")]
fn job(n: u64) -> u64 {
    (0..n).map(step).sum()
}

#[timed(name = "exit::step")]
fn step(i: u64) -> u64 {
    std::hint::black_box(i * 2)
}

/// Held by each test while it pauses draining (a process-wide switch, which `common::wait_passes` turns
/// back on): tests run side by side, and one's pause must not end in the middle of the other's.
static DRAINING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn exited_thread_keeps_its_tree_and_records() {
    let _draining = DRAINING.lock().unwrap_or_else(|e| e.into_inner());
    perfgraph_core::__test_hooks::pause_draining(true);
    common::on_thread("short-lived", || job(100));

    // Before any drain: the exited thread's aggregates are already complete.
    let t = common::thread_named("short-lived");
    assert!(t.exited_ns.is_some(), "exit is recorded");
    assert_eq!(t.tree.find(&["exit::job"]).unwrap().calls, 1);
    assert_eq!(
        t.tree.find(&["exit::job", "exit::step"]).unwrap().calls,
        100
    );
    assert_eq!(t.recorded, 101);

    // After the consumer catches up: nothing was lost.
    common::wait_passes(2);
    let t = common::thread_named("short-lived");
    assert_eq!(t.dropped, 0);
    assert_eq!(
        t.tree.find(&["exit::job", "exit::step"]).unwrap().calls,
        100
    );
}

#[test]
fn threads_of_one_name_are_told_apart() {
    // Exited threads stay apart until the background thread drains them for the last time and folds
    // them into one entry (`twin ×2`): it must not, here, while the test reads them.
    let _draining = DRAINING.lock().unwrap_or_else(|e| e.into_inner());
    perfgraph_core::__test_hooks::pause_draining(true);
    for _ in 0..2 {
        common::on_thread("twin", || {
            perfgraph_core::time_section!("twin work");
        });
    }
    let names: Vec<String> = perfgraph_core::threads()
        .into_iter()
        .map(|t| t.name)
        .filter(|n| n.starts_with("twin"))
        .collect();
    assert_eq!(names, ["twin", "twin#2"]);
}
