//! The names renamed in 0.2.0 still name the same types, for one release, with a deprecation warning.
#![allow(deprecated)]

// Its control socket in a directory of this test binary's own (`common/scratch.rs`), not /tmp's.
mod common;

use perfgraph_core::{ProcessSpread, ThreadGroup};

#[test]
fn old_names_still_name_the_renamed_types() {
    let spread: perfgraph_core::Spread = ProcessSpread::default();
    let _: ProcessSpread = spread;
    fn same(group: Option<perfgraph_core::Group>) -> Option<ThreadGroup> {
        group
    }
    assert!(same(None).is_none());
}

#[perfgraph_core::timed]
fn step() {}

#[test]
fn merged_and_merge_still_combine_the_threads() {
    step();
    let calls = |tree: perfgraph_core::data::CallTree| tree.find(&["step"]).map(|n| n.calls);
    assert_eq!(calls(perfgraph_core::merged()), Some(1));
    let threads = perfgraph_core::threads();
    let trees = || threads.iter().map(|t| &t.tree);
    assert_eq!(
        perfgraph_core::data::merge(trees()),
        perfgraph_core::data::combine(trees())
    );
}
