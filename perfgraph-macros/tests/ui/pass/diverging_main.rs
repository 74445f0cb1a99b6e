use perfgraph_core::timed;

#[timed]
fn main() -> ! {
    std::process::exit(0)
}
