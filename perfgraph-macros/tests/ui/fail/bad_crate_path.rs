use perfgraph_core::timed;

#[timed(crate = "not a path")]
fn solve() {}

fn main() {
    solve();
}
