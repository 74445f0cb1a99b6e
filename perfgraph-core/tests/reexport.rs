//! A crate that reaches perfgraph-core only through another crate's re-export names the path with the
//! `crate` option (docs/user-guide.md, "Using perfgraph in a library"): here `mylib` stands for that
//! library, and every path the macros expand to goes through it.

mod common;

/// The library: it re-exports perfgraph-core.
mod mylib {
    pub use perfgraph_core;
}

use mylib::perfgraph_core::{time_future, time_section, timed};

#[timed(crate = "mylib::perfgraph_core", live = "Loading")]
fn load() -> u32 {
    time_section!("parse", crate = "mylib::perfgraph_core");
    7
}

#[test]
fn the_macros_work_through_a_reexport() {
    let value = common::on_thread("reexported", || {
        let ready = time_future!(
            "ready",
            std::future::ready(3),
            crate = "mylib::perfgraph_core"
        );
        let mut ready = std::pin::pin!(ready);
        let waker = std::task::Waker::noop();
        let polled = ready
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        load() + matches!(polled, std::task::Poll::Ready(3)) as u32
    });
    assert_eq!(value, 8);
    let tree = common::thread_named("reexported").tree;
    for path in [&["ready"][..], &["load"], &["load", "parse"]] {
        let node = tree.find(path).unwrap_or_else(|| panic!("no {path:?}"));
        assert_eq!(node.calls, 1, "{path:?}");
    }
}
