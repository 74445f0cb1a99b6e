use perfgraph_core::time_section;

fn solve() {
    time_section!("solve", cpu = "yes");
}

fn main() {
    solve();
}
