//! Nothing here: see `benches/compiled_out.rs`. A crate of its own so that perfgraph-core really is built
//! without its `enabled` feature.
