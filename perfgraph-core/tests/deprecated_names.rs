//! The names renamed in 0.2.0 still name the same types, for one release, with a deprecation warning.
#![allow(deprecated)]

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
