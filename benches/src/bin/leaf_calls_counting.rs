//! `leaf_calls` with the counting allocator installed: what a section costs when it also takes the heap
//! counters (see `leaf_calls.rs`).

#[global_allocator]
static ALLOC: perfgraph_core::CountingAllocator =
    perfgraph_core::CountingAllocator::new(std::alloc::System);

#[path = "../leaf_body.rs"]
mod body;

fn main() {
    body::run();
}
