use perfgraph_core::time_section;

fn main() {
    time_section!("residual", lvl = 2);
}
