//! The counting allocator against hotpath's allocation tracking: `benches/alloc-peers` (its own build,
//! since hotpath's `hotpath-alloc` feature changes its timing rows) measures `System`,
//! `perfgraph_core::CountingAllocator` and `hotpath::CountingAllocator` in one process and prints
//! `<name> <ns per pair>` lines, read here.

use std::path::Path;
use std::process::Command;

/// ns per `alloc` + `dealloc` pair of 64 bytes, best round, all three from one process.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocPeers {
    /// The bare `System` allocator.
    pub system_ns: f64,
    /// `perfgraph_core::CountingAllocator::new(System)`.
    pub perfgraph_ns: f64,
    /// `hotpath::CountingAllocator` with `hotpath-alloc`, its guard alive.
    pub hotpath_ns: f64,
    /// Pairs per round.
    pub pairs: u64,
    /// Rounds of each.
    pub rounds: u64,
}

impl AllocPeers {
    /// Runs `bin` and reads its lines; `None` (and a line on stderr) if it fails or says something else.
    pub fn measure(bin: &Path) -> Option<AllocPeers> {
        super::run_and_parse(
            &mut Command::new(bin),
            "allocator figures",
            AllocPeers::parse,
        )
    }

    /// The figures from the binary's output.
    pub fn parse(text: &str) -> Option<AllocPeers> {
        let get = |name: &str| {
            text.lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v.trim().parse::<f64>().ok())
        };
        Some(AllocPeers {
            system_ns: get("system")?,
            perfgraph_ns: get("perfgraph")?,
            hotpath_ns: get("hotpath")?,
            pairs: get("pairs")? as u64,
            rounds: get("rounds")? as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_binarys_lines() {
        let p = AllocPeers::parse(
            "pairs 2000000\nrounds 21\nsystem 8.5\nperfgraph 10.25\nhotpath 11\n",
        );
        assert_eq!(
            p,
            Some(AllocPeers {
                system_ns: 8.5,
                perfgraph_ns: 10.25,
                hotpath_ns: 11.0,
                pairs: 2_000_000,
                rounds: 21,
            })
        );
        assert_eq!(AllocPeers::parse("system 8.5\n"), None);
    }
}
