use perfgraph_core::timed;

#[timed]
struct Solver {
    tolerance: f64,
}

fn main() {
    let _ = Solver { tolerance: 1e-8 }.tolerance;
}
