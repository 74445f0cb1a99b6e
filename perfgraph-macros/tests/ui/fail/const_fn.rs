use perfgraph_core::timed;

#[timed]
const fn tolerance() -> f64 {
    1e-8
}

fn main() {
    let _ = tolerance();
}
