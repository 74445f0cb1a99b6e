use perfgraph_core::timed;

#[timed(colour = "red")]
fn assemble() {}

fn main() {
    assemble();
}
