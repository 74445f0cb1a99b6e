use perfgraph_core::time_future;

async fn fetch() {}

fn main() {
    let _ = time_future!("fetch", fetch(), name = "other", level = 9);
}
