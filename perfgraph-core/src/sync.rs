//! The atomics the lock-free code uses, swapped for loom's under `cfg(loom)` (crossbeam's seam).
//!
//! `ring.rs` depends on nothing but this module, so `tests/loom_ring.rs` includes that very file with
//! its own `sync` module pointing at loom and model-checks the production code, not a copy of it.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic;

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
