//! `perfgraph merge` of 256 files of 1,000 nodes each, in seconds: the files are made here (a synthetic
//! call tree per rank, in the JSON the processes write), the command is the release build of perfgraph-cli
//! that `benches/run.sh` builds, timed from spawn to exit, best of [`RUNS`].

use std::path::Path;
use std::time::Instant;

/// Files merged.
pub const FILES: u32 = 256;
/// Nodes per file.
pub const NODES: usize = 1_000;
/// Runs of the command; the best is kept.
pub const RUNS: usize = 3;

/// The merge's wall time.
pub struct Merge {
    /// Best of [`RUNS`], seconds.
    pub best_s: f64,
}

impl Merge {
    /// Runs `perfgraph merge` (the binary `cli`) on [`FILES`] synthetic files; `None` without `cli`.
    pub fn measure(cli: Option<&Path>) -> Option<Merge> {
        let cli = cli?;
        let dir =
            std::env::temp_dir().join(format!("perfgraph-merge-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let files: Vec<_> = (0..FILES)
            .map(|rank| {
                let path = dir.join(format!("run.{rank}.json"));
                std::fs::write(&path, synthetic(NODES, rank)).expect("write a run");
                path
            })
            .collect();
        let out = dir.join("all.json");
        let mut best = f64::MAX;
        for _ in 0..RUNS {
            let start = Instant::now();
            let status = std::process::Command::new(cli)
                .arg("merge")
                .args(&files)
                .arg("-o")
                .arg(&out)
                .status()
                .expect("the perfgraph command (cargo build --release -p perfgraph-cli)");
            assert!(status.success(), "perfgraph merge failed");
            best = best.min(start.elapsed().as_secs_f64());
        }
        let _ = std::fs::remove_dir_all(&dir);
        Some(Merge { best_s: best })
    }
}

/// A call-tree JSON of `n` nodes (a program root, then `n - 1` sections 3 deep) for rank `rank`.
fn synthetic(n: usize, rank: u32) -> String {
    let mut tree = Vec::with_capacity(n);
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
        tree.push(serde_json::json!({"calls": 10, "depth": depth, "id": i, "level": 1,
            "name": format!("section_{i}"), "parent": parent, "running": 0, "section": i,
            "self_mem_bytes": 0, "self_ns": ns, "total_mem_bytes": 0, "total_ns": ns,
            "min_ns": ns / 20, "max_ns": ns / 5, "p50_ns": ns / 10, "p90_ns": ns / 10, "p99_ns": ns / 10,
            "histogram": {"buckets": [[bucket(ns / 10), 10]], "sub_buckets": 64}}));
    }
    tree.insert(
        0,
        serde_json::json!({"calls": 1, "depth": 0, "id": 0, "level": 0, "name": "prog",
            "parent": null, "running": 0, "section": 0, "self_mem_bytes": 0, "self_ns": 0,
            "total_mem_bytes": 0, "total_ns": total}),
    );
    serde_json::json!({"clock": "tsc", "dropped": 0, "format": "perfgraph-call-tree", "host": "h",
        "needs_every_record": false, "overhead_ns_per_section": 20.0, "pid": 1000 + rank,
        "program": "prog", "rank": rank, "skipped_sections": [],
        "start_unix_ns": 1_700_000_000_000_000_000u64, "threads": [], "tree": tree, "verbosity": 1,
        "version": 1, "wall_ns": total})
    .to_string()
}

/// The bucket of `v` in the JSON's scheme (docs/json-schema.md).
fn bucket(v: u64) -> u64 {
    let shift = 57 - (v | 64).leading_zeros();
    ((shift as u64) << 6) + (v >> shift)
}

#[cfg(test)]
mod tests {
    #[test]
    fn synthetic_runs_are_read_back_by_perfgraph_core() {
        let text = super::synthetic(50, 3);
        let run = perfgraph_core::Report::from_json(&text);
        assert!(run.is_ok(), "{:?}", run.err());
    }
}
