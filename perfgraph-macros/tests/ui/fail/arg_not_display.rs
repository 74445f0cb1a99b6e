use perfgraph_core::time_section;

struct Mesh;

fn main() {
    let mesh = Mesh;
    time_section!("load", args(mesh));
}
