//! perfgraph side by side with other Rust instrumentation crates. Everything is in `benches/peers.rs`; this
//! crate is kept out of the workspace so the peers' ~120 dependencies never slow down the workspace build
//! (see `benches/README.md`).
