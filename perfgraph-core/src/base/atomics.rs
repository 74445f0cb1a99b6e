//! The atomics the lock-free code uses (crossbeam's seam for model checking).
//!
//! `ring.rs` depends on nothing but this module (and `poison`, and two calls of `sys`), so `tests/loom_ring.rs` includes that very file with its own
//! `atomics` module pointing at loom (and `MODEL = true`) and model-checks the production code, not a copy of it.

pub(crate) use std::sync::atomic;

/// True only in the loom model's stand-in for this module.
pub(crate) const MODEL: bool = false;

/// A busy reader's pause before it retries (loom's yield in the model, so it lets the writer run).
#[inline]
pub(crate) fn spin() {
    std::hint::spin_loop();
}
