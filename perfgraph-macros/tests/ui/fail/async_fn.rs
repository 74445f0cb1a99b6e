use perfgraph_core::timed;

#[timed]
async fn fetch() -> u32 {
    1
}

fn main() {
    let _ = fetch();
}
