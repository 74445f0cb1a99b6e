use perfgraph_core::timed;

trait Physics {
    #[timed]
    fn step(&mut self);
}

fn main() {}
