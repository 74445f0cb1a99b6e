fn main() {
    let depth: usize = 3;
    perfgraph_core::counter!("queue depth", depth);
    perfgraph_core::counter!("residual", 1e-9f32);
    perfgraph_core::counter!("balance", -4i64, crate = "perfgraph_core");
}
