use perfgraph_core::event;

fn main() {
    event!();
    event!(checkpoint);
    event!("saved", dots);
    event!("saved", live = "x");
}
