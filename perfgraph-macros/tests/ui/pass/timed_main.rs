#![deny(warnings)]

use perfgraph_core::timed;

/// `fn main` itself, timed: the section is named `main` and returns normally.
#[timed(level = 0)]
fn main() {
    let t = perfgraph_core::threads();
    let main = t.iter().find(|t| t.is_main).expect("main thread recorded");
    assert_eq!(main.running[0].name, "main");
}
