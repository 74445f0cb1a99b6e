//! The loop both `leaf_calls` programs run.

use perfgraph_core::time_section;

#[inline(never)]
fn leaf() {
    time_section!("leaf");
    std::hint::black_box(());
}

/// Calls `leaf` `argv[1]` times (1,000,000 without it).
pub fn run() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    for _ in 0..n {
        leaf();
    }
}
