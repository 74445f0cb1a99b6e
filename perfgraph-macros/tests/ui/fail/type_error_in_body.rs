use perfgraph_core::timed;

#[timed(live = "Solving")]
fn solve(n: u32) -> u32 {
    let _tolerance: f64 = "small";
    n
}

fn main() {
    solve(1);
}
