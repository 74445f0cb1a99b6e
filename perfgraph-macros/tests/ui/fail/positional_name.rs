use perfgraph_core::timed;

#[timed("solve")]
fn solve() {}

fn main() {
    solve();
}
