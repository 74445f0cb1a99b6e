//! A `time_section!` leaf called N times (`argv[1]`, default 1,000,000), for `valgrind --tool=callgrind`: the
//! instructions of N = 2e6 minus those of N = 1e6, divided by 1e6, are one section's enter and exit.
//! `leaf_calls_counting` is the same program with the counting allocator installed (issue 16).
//!
//! ```sh
//! cargo build --release -p perfgraph-benches --bin leaf_calls --bin leaf_calls_counting
//! PERFGRAPH_LIVE=off PERFGRAPH_CAPTURE=off valgrind --tool=callgrind target/release/leaf_calls 1000000
//! ```

#[path = "../leaf_body.rs"]
mod body;

fn main() {
    body::run();
}
