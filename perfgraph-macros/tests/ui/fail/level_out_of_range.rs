use perfgraph_core::timed;

#[timed(level = 4)]
fn solve() {}

fn main() {
    solve();
}
