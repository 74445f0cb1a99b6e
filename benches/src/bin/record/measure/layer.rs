//! The `TracingLayer` target, side by side: the peers bench run in its rounds mode
//! (`perfgraph_benches::layer_rounds`), its lines read back into plain data.

use std::path::Path;
use std::process::Command;

use perfgraph_benches::layer_rounds::{self, Round};

/// The rounds of [`layer_rounds::PROCESSES`] processes of the peers bench, pooled.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerRounds {
    /// Calls per batch.
    pub calls: u64,
    /// How many processes the rounds come from.
    pub processes: usize,
    /// Every round, in the order measured, process after process.
    pub rounds: Vec<Round>,
}

impl LayerRounds {
    /// Runs `bench` [`layer_rounds::PROCESSES`] times, one after the other, and pools their rounds; `None`
    /// if none gave rounds.
    pub fn measure(bench: &Path) -> Option<LayerRounds> {
        let runs: Vec<LayerRounds> = (0..layer_rounds::PROCESSES)
            .filter_map(|_| LayerRounds::measure_one(bench))
            .collect();
        let first = runs.first()?;
        Some(LayerRounds {
            calls: first.calls,
            processes: runs.len(),
            rounds: runs.iter().flat_map(|r| r.rounds.iter().copied()).collect(),
        })
    }

    /// Runs `bench` once with [`layer_rounds::ROUNDS_VAR`] set to [`layer_rounds::DEFAULT_ROUNDS`]; `None`
    /// (and a line on stderr) if it fails or prints no rounds.
    fn measure_one(bench: &Path) -> Option<LayerRounds> {
        let mut cmd = Command::new(bench);
        cmd.env(
            layer_rounds::ROUNDS_VAR,
            layer_rounds::DEFAULT_ROUNDS.to_string(),
        );
        super::run_and_parse(&mut cmd, "layer rounds", LayerRounds::parse)
    }

    /// The rounds from the bench's output: its header line and one line per round.
    pub fn parse(text: &str) -> Option<LayerRounds> {
        let calls = text.lines().find_map(layer_rounds::header_calls)?;
        let rounds: Vec<Round> = text.lines().filter_map(Round::parse).collect();
        (!rounds.is_empty()).then_some(LayerRounds {
            calls,
            processes: 1,
            rounds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rounds_and_skips_the_rest() {
        let text = "layer-rounds rounds=2 calls=1000\n\
                    round 0 floor=1.5 enabled=21.5 registry=150 layer=180 stacked=200 ratio=1.5\n\
                    some other line\n\
                    round 1 floor=1.5 enabled=21.5 registry=140 layer=180 stacked=190 ratio=2.0\n\
                    summary rounds=2 calls=1000 ratio=2.000\n";
        let r = LayerRounds::parse(text).unwrap();
        assert_eq!(r.calls, 1000);
        assert_eq!(r.rounds.len(), 2);
        assert_eq!(r.rounds[1].registry, 140.0);
        assert_eq!(
            LayerRounds::parse("layer-rounds rounds=2 calls=1000\n"),
            None
        );
        assert_eq!(
            LayerRounds::parse("round 0 floor=1 enabled=2 registry=3 layer=4 stacked=5\n"),
            None
        );
    }
}
