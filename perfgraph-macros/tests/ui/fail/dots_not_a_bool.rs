use perfgraph_core::timed;

#[timed(dots = 1)]
fn solve() {}

fn main() {
    solve();
}
