//! The critical-path analysis (`perfgraph_core::critical`) on a synthetic run: `critical_scale [EVENTS]`
//! (10,000,000 by default) builds 8 threads of nested calls, each thread taking a shared lock every few
//! calls (a wait with its holder and waker when another holds it), analyses it with a what-if, and prints
//! the events, the seconds each step took and the process's peak resident memory.
//!
//! ```sh
//! cargo run --release -p perfgraph-benches --bin critical_scale -- 10000000
//! ```

use std::time::Instant;

use perfgraph_core::__test_hooks::Rng;
use perfgraph_core::critical::{self, Blocked, Call, Options, Timeline, Wake};

fn build(events: usize) -> Timeline {
    const THREADS: usize = 8;
    let mut t = Timeline::default();
    let names: Vec<u32> = (0..64).map(|i| t.name(&format!("section {i}"))).collect();
    let lock = t.name("queue");
    for i in 0..THREADS {
        t.thread(&format!("worker {i}"), 0, 0);
    }
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut at = [0u64; THREADS];
    // Who released the lock last, and when; the lock is free from then on.
    let mut free = (0usize, 0u64);
    let mut made = 0;
    while made < events {
        let th = r.below(THREADS as u64) as usize;
        let start = at[th];
        // An outer call with two inner ones: three events.
        let len = 1_000 + r.below(20_000);
        let line = &mut t.threads[th];
        line.calls
            .push(Call::new(names[r.below(64) as usize], start, start + len));
        line.calls.push(Call::new(
            names[r.below(64) as usize],
            start + 10,
            start + len / 3,
        ));
        line.calls.push(Call::new(
            names[r.below(64) as usize],
            start + len / 2,
            start + len - 10,
        ));
        made += 3;
        at[th] = start + len;
        if r.below(4) == 0 {
            // The lock: a wait when it is not free yet.
            let request = at[th];
            let acquired = request.max(free.1);
            if acquired > request && free.0 != th {
                let w = Wake {
                    thread: free.0 as u32,
                    at_ns: free.1,
                };
                let b = Blocked::new(lock, request, acquired)
                    .held_by(free.0 as u32)
                    .woken_by(w);
                t.threads[th].blocked.push(b);
                made += 2;
            }
            let hold = 500 + r.below(3_000);
            free = (th, acquired + hold);
            at[th] = acquired + hold;
        }
    }
    for (th, end) in at.iter().enumerate() {
        t.threads[th].end_ns = *end;
    }
    t
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let events: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000_000);
    let t0 = Instant::now();
    let mut t = build(events);
    t.settle();
    let built = t0.elapsed();
    let mut o = Options::default();
    o.what_if = Some(("section 7".into(), 50.0));
    let t1 = Instant::now();
    let p = critical::analyse(&t, &o).expect("analyses");
    let analysed = t1.elapsed();
    println!(
        "events {} built {:.2} s analysed {:.2} s peak RSS {} MiB (pieces {}, chains {})",
        t.events(),
        built.as_secs_f64(),
        analysed.as_secs_f64(),
        peak_rss_kib() / 1024,
        p.pieces.len(),
        p.chains.len()
    );
}
