use perfgraph_core::counter;

struct Depth;

fn main() {
    counter!("queue depth");
    counter!(depth, 3);
    counter!("queue depth", Depth);
    counter!("queue depth", "3");
    counter!("queue depth", 3, level = 1);
}
