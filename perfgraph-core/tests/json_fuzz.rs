//! `Report::from_json` on mutated call-tree files: a fixed budget of deterministic mutations (bytes flipped,
//! cut, repeated, replaced by numbers at the edges of their types) of a real run's JSON, each read back
//! without a panic: an error or a report. `JSON_FUZZ_ITERATIONS=N` runs more (CI runs 3,000, a few seconds).

// Its control socket in a directory of this test binary's own (`common/scratch.rs`), not /tmp's.
mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use perfgraph_core::{Report, time_section, timed};

#[timed(live = "Solving", level = 1)]
fn solve(n: u32) {
    for i in 0..n {
        time_section!("residual");
        if i % 3 == 0 {
            recurse(2);
        }
    }
}

#[timed]
fn recurse(depth: u32) {
    if depth > 0 {
        recurse(depth - 1);
    }
}

/// xorshift64*: a fixed sequence, so a failure is reproducible from its iteration number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that sit at the edges of what the fields hold.
const EDGES: [&str; 12] = [
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "300",
    "1e308",
    "null",
    "\"x\"",
    "[]",
    "{}",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(b.len());
        match rng.below(6) {
            0 => b[at] = rng.next() as u8,
            1 => b.truncate(at),
            2 => {
                let end = (at + rng.below(64)).min(b.len());
                let piece = b[at..end].to_vec();
                b.splice(at..at, piece);
            }
            3 => {
                let end = (at + rng.below(16)).min(b.len());
                b.drain(at..end);
            }
            _ => {
                // A number (a run of digits) replaced by an edge value.
                if let Some(start) = b[at..].iter().position(u8::is_ascii_digit).map(|p| p + at) {
                    let end = b[start..]
                        .iter()
                        .position(|c| !c.is_ascii_digit())
                        .map_or(b.len(), |p| p + start);
                    let edge = EDGES[rng.below(EDGES.len())].as_bytes();
                    b.splice(start..end, edge.iter().copied());
                }
            }
        }
        if b.is_empty() {
            break;
        }
    }
    b
}

#[test]
fn mutated_files_read_back_without_a_panic() {
    solve(20);
    let base = perfgraph_core::report().json().into_bytes();
    assert!(Report::from_json(std::str::from_utf8(&base).unwrap()).is_ok());
    let iterations: u64 = std::env::var("JSON_FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3_000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut refused) = (0u64, 0u64);
    for i in 0..iterations {
        let input = mutate(&mut rng, &base);
        let read = catch_unwind(AssertUnwindSafe(|| Report::read_json(&input[..])));
        match read {
            Ok(Ok(r)) => {
                ok += 1;
                // What was read renders, and its JSON reads back.
                let _ = r.to_string();
                let again = catch_unwind(AssertUnwindSafe(|| Report::from_json(&r.json())));
                assert!(
                    matches!(again, Ok(Ok(_))),
                    "iteration {i}: a report read from a file does not read back from its own JSON"
                );
            }
            Ok(Err(e)) => {
                refused += 1;
                assert!(!e.contains('\n'), "iteration {i}: a multi-line error: {e}");
            }
            Err(_) => panic!(
                "iteration {i}: Report::read_json panicked on {:?}",
                String::from_utf8_lossy(&input)
            ),
        }
    }
    assert_eq!(ok + refused, iterations);
    eprintln!("{iterations} mutated files: {ok} read, {refused} refused");
}
