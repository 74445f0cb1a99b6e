use perfgraph_core::time_future;

fn main() {
    let _ = time_future!("fetch");
}
