//! perfgraph-core with `enabled` alone (`default-features = false, features = ["enabled"]`, what a library
//! depends on): sections are recorded and reported, and the binary links no socket code (no control
//! socket, Prometheus or OTLP). `tests/compile_out.rs` runs it and reads its symbols.

use perfgraph_core::{time_section, timed};

#[timed]
fn step(i: u64) -> u64 {
    time_section!("inner");
    i * 2
}

fn main() {
    let total: u64 = (0..10).map(step).sum();
    assert_eq!(total, 90);
    println!("sections={}", perfgraph_core::sections().len());
}
