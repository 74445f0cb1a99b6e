use perfgraph_core::time_section;

fn main() {
    time_section!("", level = 2);
}
