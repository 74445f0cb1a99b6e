use perfgraph_core::timed;

#[timed(live = "  ")]
fn solve() {}

fn main() {
    solve();
}
