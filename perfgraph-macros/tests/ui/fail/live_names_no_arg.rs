use perfgraph_core::{time_section, timed};

#[timed(args(level), live = "Refining level {lvl}")]
fn refine(level: u8) {}

fn step() {
    time_section!("load", live = "Loading {file}");
}

fn main() {
    refine(1);
    step();
}
