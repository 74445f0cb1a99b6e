#![deny(unsafe_op_in_unsafe_fn)]

use perfgraph_core::timed;

/// The guard needs no `unsafe`, and the body is not turned into an unsafe block: an unsafe operation in a
/// timed `unsafe fn` still needs its own `unsafe {}` (Rust 2024).
///
/// # Safety
/// `ptr` must be valid for reads.
#[timed]
unsafe fn read(ptr: *const u32) -> u32 {
    *ptr
}

fn main() {
    let x = 1;
    // SAFETY: `&x` is valid.
    let _ = unsafe { read(&x) };
}
