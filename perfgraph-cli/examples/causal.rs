//! Causal profiling's known-answer programs (`tests/causal.rs`): each has a real knob that makes a section
//! faster, so what `perfgraph causal` predicts for a virtual speed-up can be checked against the real one.
//! The work is sleeping (a sleep's length is a knob the machine's load barely moves); every program times
//! its own progress with `Instant` and prints `period_ns=<ns per progress visit>` on stdout at the end.
//!
//! `causal PROGRAM SECONDS [SECTION=PERCENT ...]`, where a `SECTION=PERCENT` makes that section's work
//! that much shorter (really). The programs, with their progress point:
//!
//! * `amdahl` (`step`): one thread; `a` is 30% of each step, `b` 70%. Speeding `a` by s gives 0.3·s.
//! * `joined` (`round`): each round two threads, `foo` (7 ms) and `bar` (10 ms), joined at its end.
//!   Speeding `foo` gives 0; speeding `bar` by s gives min(s, 30%).
//! * `lock` (`item`): three threads, each `outside` (3 ms) then `hold` (4 ms) inside one `sync::Mutex`.
//!   The lock binds: speeding `outside` gives 0, speeding `hold` by s gives s (while 3 holds outlast one
//!   `outside` and one hold: up to 50%).
//! * `pipeline` (`item`): a producer (`produce`, 1.5 ms an item) and a consumer (`consume`, 4 ms) over a
//!   bounded `sync` channel. Speeding `produce` gives 0; speeding `consume` by s gives s up to 1 − 1.5/4.
//!
//! ```sh
//! cargo run -p perfgraph-cli --example causal -- amdahl 5 a=25
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use perfgraph_core::sync::{Mutex, spawn, sync_channel};
use perfgraph_core::time_section;

/// The knobs: (section, percent faster).
struct Knobs(Vec<(String, u32)>);

impl Knobs {
    /// `base` ms of work for `section`, less its knob's percent.
    fn work(&self, section: &str, base_us: u64) -> Duration {
        let pct = self.0.iter().find(|(s, _)| s == section).map_or(0, |k| k.1);
        Duration::from_micros(base_us * (100 - pct as u64) / 100)
    }
}

/// Sleeps `$d` in section `$name` (a sleep of zero still enters the section).
macro_rules! work {
    ($name:literal, $d:expr) => {{
        let d = $d;
        time_section!($name);
        std::thread::sleep(d);
    }};
}

fn amdahl(k: &Knobs, until: Instant) -> u64 {
    let mut steps = 0;
    while Instant::now() < until {
        time_section!("step");
        work!("a", k.work("a", 3_000));
        work!("b", k.work("b", 7_000));
        steps += 1;
    }
    steps
}

fn joined(k: &Arc<Knobs>, until: Instant) -> u64 {
    let mut rounds = 0;
    while Instant::now() < until {
        time_section!("round");
        let (k1, k2) = (Arc::clone(k), Arc::clone(k));
        let first = spawn(move || work!("foo", k1.work("foo", 7_000)));
        let second = spawn(move || work!("bar", k2.work("bar", 10_000)));
        first.join().unwrap();
        second.join().unwrap();
        rounds += 1;
    }
    rounds
}

fn lock(k: &Arc<Knobs>, until: Instant) -> u64 {
    let items = Arc::new(Mutex::new("items", 0u64));
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let (k, items) = (Arc::clone(k), Arc::clone(&items));
            spawn(move || {
                while Instant::now() < until {
                    time_section!("item");
                    work!("outside", k.work("outside", 3_000));
                    let mut n = items.lock().unwrap();
                    work!("hold", k.work("hold", 4_000));
                    *n += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    *items.lock().unwrap()
}

fn pipeline(k: &Arc<Knobs>, until: Instant) -> u64 {
    let (tx, rx) = sync_channel::<u64>("items", 4);
    let producer = {
        let k = Arc::clone(k);
        spawn(move || {
            let mut i = 0;
            while Instant::now() < until {
                work!("produce", k.work("produce", 1_500));
                if tx.send(i).is_err() {
                    break;
                }
                i += 1;
            }
        })
    };
    let mut items = 0;
    while let Ok(_item) = rx.recv() {
        time_section!("item");
        work!("consume", k.work("consume", 4_000));
        items += 1;
    }
    producer.join().unwrap();
    items
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: causal amdahl|joined|lock|pipeline SECONDS [SECTION=PERCENT ...]";
    let (Some(program), Some(seconds)) = (args.first(), args.get(1)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let seconds: f64 = seconds.parse().expect("SECONDS is a number");
    let knobs = args[2..]
        .iter()
        .map(|a| {
            let (s, p) = a.split_once('=').expect("SECTION=PERCENT");
            (
                s.to_owned(),
                p.parse::<u32>().expect("a whole percent").min(100),
            )
        })
        .collect();
    let knobs = Arc::new(Knobs(knobs));
    // perfgraph starts at the first section: its start-up is not the program's progress.
    {
        time_section!("start");
    }
    let start = Instant::now();
    let until = start + Duration::from_secs_f64(seconds);
    let visits = match program.as_str() {
        "amdahl" => amdahl(&knobs, until),
        "joined" => joined(&knobs, until),
        "lock" => lock(&knobs, until),
        "pipeline" => pipeline(&knobs, until),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    let elapsed = start.elapsed().as_nanos() as u64;
    println!("visits={visits} period_ns={}", elapsed / visits.max(1));
}
