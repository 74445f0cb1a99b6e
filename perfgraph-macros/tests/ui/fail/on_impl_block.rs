use perfgraph_core::timed;

struct Solver;

#[timed]
impl Solver {
    fn solve(&self) {}
}

fn main() {
    Solver.solve();
}
