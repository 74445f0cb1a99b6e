use perfgraph_core::timed;

#[timed(live = 5)]
fn solve() {}

fn main() {
    solve();
}
