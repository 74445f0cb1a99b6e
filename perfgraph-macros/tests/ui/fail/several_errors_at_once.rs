use perfgraph_core::timed;

#[timed(level = 9, colour = "red", live = 5)]
fn solve() {}

fn main() {
    solve();
}
