//! A panic unwinds through the guards and leaves the thread's section stack consistent.

mod common;

use perfgraph_core::{time_section, timed};

#[timed(name = "unwind::fails")]
fn fails(depth: u32) {
    time_section!("unwind::inner");
    if depth == 0 {
        panic!("deliberate panic inside a timed function");
    }
    fails(depth - 1);
}

#[timed(name = "unwind::after")]
fn after() {}

#[timed(name = "unwind::outer")]
fn outer() {
    let caught = std::panic::catch_unwind(|| fails(3));
    assert!(caught.is_err());
    // The next section nests under `outer`, where it should, not under the sections the panic unwound.
    after();
}

#[test]
fn next_section_nests_where_it_should() {
    common::on_thread("unwinder", || {
        std::panic::set_hook(Box::new(|_| {})); // keep the test output clean
        outer();
        after();
    });
    let t = common::thread_named("unwinder");
    assert_eq!(
        t.tree
            .find(&["unwind::outer", "unwind::after"])
            .unwrap()
            .calls,
        1
    );
    assert_eq!(t.tree.find(&["unwind::after"]).unwrap().calls, 1);
    let unwound = ["unwind::outer", "unwind::fails", "unwind::inner"];
    assert_eq!(t.tree.find(&unwound).unwrap().calls, 1);
    let deepest = [
        "unwind::outer",
        "unwind::fails",
        "unwind::inner",
        "unwind::fails",
        "unwind::inner",
        "unwind::fails",
        "unwind::inner",
        "unwind::fails",
        "unwind::inner",
    ];
    assert_eq!(t.tree.find(&deepest).unwrap().calls, 1);
    assert!(
        t.tree.nodes.iter().all(|n| n.running == 0),
        "nothing left open"
    );
    assert!(t.running.is_empty());
    assert_eq!(t.recorded, 1 + 8 + 2);
}
