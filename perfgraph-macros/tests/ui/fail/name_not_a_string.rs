use perfgraph_core::timed;

#[timed(name = solve)]
fn solve() {}

fn main() {
    solve();
}
