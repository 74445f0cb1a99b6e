use perfgraph_core::timed;

#[timed(level = 1, live = "Solving", level = 2)]
fn solve() {}

fn main() {
    solve();
}
