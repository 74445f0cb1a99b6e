#![deny(warnings)]

use perfgraph_core::{time_section, timed};

#[timed]
fn plain() {}

#[timed(name = "mesh::refine", level = 2, live = "Refining mesh", dots = false)]
fn refine() {}

#[timed(live = "Solving nonlinear system", dots)]
fn solve() {
    time_section!("residual");
    time_section!("jacobian", live = "Computing Jacobian", dots, level = 2);
    time_section!("trailing comma", level = 0,);
    time_section!("measured", cpu);
    time_section!("not measured", cpu = false, dots);
    plain();
    refine();
}

mod reexport {
    pub use perfgraph_core as pg;
}

#[timed(crate = "reexport::pg", level = 0, cpu = true)]
fn via_reexport() {}

fn main() {
    solve();
    via_reexport();
}
