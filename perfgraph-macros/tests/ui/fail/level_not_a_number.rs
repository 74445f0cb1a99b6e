use perfgraph_core::timed;

#[timed(level = "high")]
fn solve() {}

fn main() {
    solve();
}
