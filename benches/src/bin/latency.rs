//! Two measurements of issue 17, printed as a Markdown section for docs/performance.md:
//!
//! * the latency histogram's cost per section, before and after, in one process: the same leaf section
//!   timed on a call path that has a histogram (one of a thread's first 1,023) and on one that has not
//!   (past them, at the bottom of a recursion 1,100 deep), alternating rounds, best round of each;
//! * `perfgraph merge` of 256 files with 1,000 nodes each (made by `Report::merge_runs` from a synthetic
//!   tree), wall time of the real command.
//!
//! ```sh
//! cargo build --release -p perfgraph-cli && cargo run --release -p perfgraph-benches --bin latency -- target/release/perfgraph
//! ```

use std::time::Instant;

use perfgraph_core::{time_section, timed};

const CALLS: u64 = 200_000;
const ROUNDS: usize = 15;

#[timed]
#[inline(never)]
fn leaf() {
    std::hint::black_box(());
}

/// Times `CALLS` calls of `leaf` at the bottom of `depth` nested sections, `ns` per call.
#[timed]
fn descend(depth: u32, results: &mut Vec<f64>) {
    if depth > 1 {
        descend(depth - 1, results);
        return;
    }
    let start = Instant::now();
    for _ in 0..CALLS {
        leaf();
    }
    results.push(start.elapsed().as_nanos() as f64 / CALLS as f64);
}

fn histogram_cost() -> (f64, f64) {
    // 1,100 paths of `descend` first: the deepest ones get no histogram, nor does the leaf under them.
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        descend(1, &mut with);
        descend(1_100, &mut without);
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    (best(&with), best(&without))
}

/// A call-tree JSON of `n` nodes (a program root, then `n - 1` sections 3 deep) for rank `rank`.
fn synthetic(n: usize, rank: u32) -> String {
    let mut nodes = Vec::new();
    let mut total = 0u64;
    for i in 1..n {
        let parent = if i < 10 { 0 } else { i / 10 };
        let depth = if i < 10 {
            1
        } else if i < 100 {
            2
        } else {
            3
        };
        let ns = 1_000 + (i as u64 * 7_919 + rank as u64 * 31) % 100_000;
        total += ns;
        nodes.push(serde_json::json!({"calls": 10, "depth": depth, "id": i, "level": 1,
            "name": format!("section_{i}"), "parent": parent, "running": 0, "section": i,
            "self_mem_bytes": 0, "self_ns": ns, "total_mem_bytes": 0, "total_ns": ns,
            "min_ns": ns / 20, "max_ns": ns / 5, "p50_ns": ns / 10, "p90_ns": ns / 10, "p99_ns": ns / 10,
            "histogram": {"buckets": [[perfgraph_bucket(ns / 10), 10]], "sub_buckets": 64}}));
    }
    let mut tree = vec![
        serde_json::json!({"calls": 1, "depth": 0, "id": 0, "level": 0, "name": "prog",
        "parent": null, "running": 0, "section": 0, "self_mem_bytes": 0, "self_ns": 0,
        "total_mem_bytes": 0, "total_ns": total}),
    ];
    tree.extend(nodes);
    serde_json::json!({"clock": "tsc", "dropped": 0, "format": "perfgraph-call-tree", "host": "h",
        "needs_every_record": false, "overhead_ns_per_section": 20.0, "pid": 1000 + rank,
        "program": "prog", "rank": rank, "skipped_sections": [], "start_unix_ns": 1_700_000_000_000_000_000u64,
        "threads": [], "tree": tree, "verbosity": 1, "version": 1, "wall_ns": total})
    .to_string()
}

/// The bucket of `v` in the JSON's scheme (docs/json-schema.md).
fn perfgraph_bucket(v: u64) -> u64 {
    let shift = 57 - (v | 64).leading_zeros();
    ((shift as u64) << 6) + (v >> shift)
}

fn main() {
    let cli = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/release/perfgraph".to_owned());
    let (with, without) = histogram_cost();
    let dir = std::env::temp_dir().join(format!("perfgraph-merge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = (0..256)
        .map(|r| {
            let p = dir.join(format!("run.{r}.json"));
            std::fs::write(&p, synthetic(1_000, r)).unwrap();
            p.to_str().unwrap().to_owned()
        })
        .collect();
    let out = dir.join("all.json");
    let mut best = f64::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let status = std::process::Command::new(&cli)
            .arg("merge")
            .args(&files)
            .arg("-o")
            .arg(&out)
            .status()
            .expect("the perfgraph command (build it: cargo build --release -p perfgraph-cli)");
        assert!(status.success());
        best = best.min(start.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    time_section!("done");
    println!("## Latency histograms and `perfgraph merge`\n");
    println!(
        "Measured by `benches/src/bin/latency.rs` (`cargo run --release -p perfgraph-benches --bin latency`), \
         one process, best of {ROUNDS} alternating rounds of {CALLS} calls:\n"
    );
    println!("| leaf section (enter + exit) | ns per call |");
    println!("|---|---|");
    println!("| on a call path with a latency histogram | {with:.2} |");
    println!("| on a call path without one (past a thread's first 1,023) | {without:.2} |");
    println!("| the histogram's cost | {:.2} |\n", with - without);
    println!(
        "`perfgraph merge` of 256 files of 1,000 nodes each (release build, best of 3): {best:.2} s.\n"
    );
}
