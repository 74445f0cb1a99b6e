use perfgraph_core::timed;

#[timed]
trait Physics {
    fn step(&mut self) {}
}

fn main() {}
