//! `#[timed]` keeps doc comments (`missing_docs` stays quiet), outer attributes (`#[inline]`,
//! `#[allow]`) and inner attributes, and its expansion triggers no lint under `deny(warnings)`.
#![deny(warnings, missing_docs, unsafe_op_in_unsafe_fn)]

use perfgraph_core::{time_section, timed};

/// Documented, inlined, timed.
#[timed]
#[inline]
pub fn documented() -> u32 {
    #![allow(clippy::let_and_return)]
    let x = 1;
    x
}

/// A public type with a timed method.
pub struct Solver;

impl Solver {
    /// Documented method.
    #[timed(level = 2)]
    pub fn solve(&self) -> u32 {
        time_section!("residual");
        time_section!("jacobian");
        documented()
    }
}

/// # Safety
/// `ptr` must be valid for reads.
#[timed]
pub unsafe extern "C" fn read(ptr: *const u32) -> u32 {
    // SAFETY: the caller guarantees `ptr` is valid.
    unsafe { *ptr }
}

fn main() {
    let x = Solver.solve();
    // SAFETY: `&x` is valid.
    let _ = unsafe { read(&x) };
}
