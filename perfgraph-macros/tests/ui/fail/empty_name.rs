use perfgraph_core::timed;

#[timed(name = "")]
fn solve() {}

fn main() {
    solve();
}
