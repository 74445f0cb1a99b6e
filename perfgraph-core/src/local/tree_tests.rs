//! Unit tests of `tree.rs`. They live outside it because `tests/loom_snapshot.rs` compiles `tree.rs` itself
//! against loom's atomics, where these tests cannot run.

use crate::local::tree::*;

#[test]
fn locate_maps_segments() {
    assert_eq!(locate(0), (0, 0));
    assert_eq!(locate(63), (0, 63));
    assert_eq!(locate(64), (1, 0));
    assert_eq!(locate(191), (1, 127));
    assert_eq!(locate(192), (2, 0));
}

#[test]
fn children_are_found_and_created_once() {
    let t = Tree::new();
    let a = t.child(0, 7);
    let b = t.child(0, 8);
    assert_eq!(t.child(0, 7), a);
    assert_eq!(t.child(0, 8), b);
    let aa = t.child(a, 8);
    assert_ne!(aa, b);
    assert_eq!(t.len(), 4);
    assert_eq!(t.children(0).collect::<Vec<_>>(), vec![b, a]);
    for i in 0..10_000 {
        t.child(aa, 100 + i);
    }
    assert_eq!(t.len(), 10_004);
    assert_eq!(t.children(aa).count(), 10_000);
}
