//! Recursion 10,000 deep: one tree path per level, past the 64 frames live print can see, and back out.

mod common;

use perfgraph_core::timed;

const DEPTH: u32 = 10_000;

#[timed(name = "recurse")]
fn recurse(n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    1 + recurse(n - 1)
}

#[test]
fn ten_thousand_deep() {
    let handle = std::thread::Builder::new()
        .name("deep".into())
        .stack_size(256 << 20)
        .spawn(|| {
            assert_eq!(recurse(DEPTH), DEPTH as u64);
            // Twice, so the second descent re-uses the tree and the deep-frame storage.
            assert_eq!(recurse(DEPTH), DEPTH as u64);
        })
        .unwrap();
    handle.join().unwrap();
    let t = common::thread_named("deep");
    let recurse_nodes: Vec<_> = t
        .tree
        .nodes
        .iter()
        .filter(|n| n.name == "recurse")
        .collect();
    assert_eq!(
        recurse_nodes.len(),
        DEPTH as usize + 1,
        "one call path per level"
    );
    assert!(recurse_nodes.iter().all(|n| n.calls == 2));
    assert_eq!(recurse_nodes.iter().map(|n| n.depth).max(), Some(DEPTH + 1));
    assert!(t.running.is_empty());
    assert_eq!(t.recorded, 2 * (DEPTH as u64 + 1));
    let top = t.tree.find(&["recurse"]).unwrap();
    let sum_self: u64 = recurse_nodes.iter().map(|n| n.self_ns).sum();
    assert_eq!(top.total_ns, sum_self, "times add up along the whole chain");
}
