use perfgraph_core::timed;

#[timed(level, live)]
fn solve() {}

fn main() {
    solve();
}
