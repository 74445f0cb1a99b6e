//! Programs with a known critical path, for `tests/critical_path.rs` (and to try `perfgraph report
//! --critical-path` on). The work is sleeps inside sections, so the answer holds on a busy machine; the
//! threads, locks, channels and joins are `perfgraph_core::sync`'s, which record who woke whom.
//!
//! * `fork-join`: `main` spawns A (200 ms) and B (600 ms) and joins both: the path is `main`, B, `main`;
//!   A has 400 ms of slack.
//! * `convoy HOLD_MS`: two threads, 6 rounds each of 10 ms outside and HOLD_MS holding `queue` (in
//!   section `update`): the path alternates between the holds.
//! * `nested`: T2 holds `L2` in `flush` (300 ms); T1 takes `L1`, then waits for `L2`; T3 waits for `L1`.
//! * `stuck`: `nested` with `flush` lasting until stdin closes, for `perfgraph top`'s wait chains.
//! * `many N`: N calls of a section that does nothing (a million by default): a run whose timeline
//!   outgrows the output budget of `PERFGRAPH_REPORT=critical`.
//! * `pipeline`: a producer (1 ms an item) and a consumer (3 ms an item), 100 items through a channel of 4.
//! * `pipeline-crossbeam`: the same through crossbeam-channel's channel (`sync::crossbeam`), with two
//!   consumers of 6 ms an item (3 ms an item between them, three times the producer's 1 ms, as in
//!   `pipeline`: at 3 ms each, 1.5 ms between them, a producer whose sleeps overshot on a busy machine was
//!   on the critical path a fifth of the time).
//! * `blind`: `main` waits 200 ms in section `wait_std` (measuring its CPU time) on std's `Condvar`, which
//!   records nothing: the wait is off the CPU, `blocked (unknown)`.
//! * `random SEED`: a program drawn from SEED: 2 to 4 workers spawned by `main`, each taking random steps
//!   (a sleep in `work`, a hold of `m` in `hold`), meeting at a barrier half-way, then counting themselves
//!   done under a condvar `main` waits on; beside them a producer and a consumer through a channel of 2.
//!
//! ```sh
//! PERFGRAPH_TRACE=run.json cargo run -p perfgraph-cli --example critical -- nested
//! cargo run -p perfgraph-cli -- report --critical-path run.json
//! ```

use std::sync::Arc;
use std::thread::sleep;
use std::time::Duration;

use perfgraph_core::__test_hooks::Rng;
use perfgraph_core::sync::{self, Builder, Mutex};
use perfgraph_core::timed;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> sync::JoinHandle<T> {
    Builder::new().name(name.into()).spawn(f).expect("a thread")
}

#[timed]
fn work_a() {
    sleep(ms(200));
}

#[timed]
fn work_b() {
    sleep(ms(600));
}

#[timed]
fn before() {
    sleep(ms(20));
}

#[timed]
fn after() {
    sleep(ms(20));
}

fn fork_join() {
    before();
    let a = named("A", work_a);
    let b = named("B", work_b);
    a.join().unwrap();
    b.join().unwrap();
    after();
}

#[timed]
fn update(hold: u64) {
    sleep(ms(hold));
}

#[timed]
fn prepare() {
    sleep(ms(10));
}

fn convoy(hold: u64) {
    let queue = Arc::new(Mutex::new("queue", 0u64));
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let queue = Arc::clone(&queue);
            named(&format!("T{i}"), move || {
                for _ in 0..6 {
                    prepare();
                    let mut q = queue.lock().unwrap();
                    update(hold);
                    *q += 1;
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

#[timed]
fn flush(hold: fn()) {
    hold();
}

fn nested() {
    nested_while(|| sleep(ms(300)));
}

/// `nested`, T2's `flush` lasting while `hold` runs.
fn nested_while(hold: fn()) {
    static L1: Mutex<()> = Mutex::new("L1", ());
    static L2: Mutex<()> = Mutex::new("L2", ());
    let t2 = named("T2", move || {
        let _l2 = L2.lock().unwrap();
        flush(hold);
    });
    let t1 = named("T1", || {
        sleep(ms(50));
        let _l1 = L1.lock().unwrap();
        let _l2 = L2.lock().unwrap();
    });
    let t3 = named("T3", || {
        sleep(ms(100));
        let _l1 = L1.lock().unwrap();
    });
    for t in [t2, t1, t3] {
        t.join().unwrap();
    }
}

#[timed]
fn produce(i: u64) -> u64 {
    sleep(ms(1));
    i
}

#[timed]
fn consume(i: u64) -> u64 {
    sleep(ms(3));
    i
}

/// `consume` for `pipeline-crossbeam`'s two consumers: twice as long, so that between them they are as
/// much slower than the producer as `pipeline`'s one consumer is.
#[timed]
fn consume_slowly(i: u64) -> u64 {
    sleep(ms(6));
    i
}

fn pipeline() {
    let (tx, rx) = sync::sync_channel("items", 4);
    let producer = named("producer", move || {
        for i in 0..100 {
            tx.send(produce(i)).unwrap();
        }
    });
    let consumer = named("consumer", move || rx.iter().map(consume).sum::<u64>());
    producer.join().unwrap();
    assert_eq!(consumer.join().unwrap(), 4950);
}

/// `pipeline` through crossbeam-channel's channel (`sync::crossbeam`), two consumers taking turns.
fn pipeline_crossbeam() {
    let (tx, rx) = sync::crossbeam::bounded("items", 4);
    let producer = named("producer", move || {
        for i in 0..100 {
            tx.send(produce(i)).unwrap();
        }
    });
    let consumers: Vec<_> = ["consumer", "consumer 2"]
        .into_iter()
        .map(|name| {
            let rx = rx.clone();
            named(name, move || rx.iter().map(consume_slowly).sum::<u64>())
        })
        .collect();
    drop(rx);
    producer.join().unwrap();
    let total: u64 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(total, 4950);
}

#[timed]
fn tick(i: u64) -> u64 {
    std::hint::black_box(i)
}

#[timed(cpu)]
fn wait_std() {
    let pair = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let other = Arc::clone(&pair);
    let t = std::thread::spawn(move || {
        sleep(ms(200));
        *other.0.lock().unwrap() = true;
        other.1.notify_one();
    });
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    drop(ready);
    t.join().unwrap();
}

#[timed]
fn work(ms_: u64) {
    sleep(ms(ms_));
}

#[timed]
fn hold(ms_: u64) {
    sleep(ms(ms_));
}

fn random(seed: u64) {
    use sync::{Barrier, Condvar};
    static M: Mutex<u64> = Mutex::new("m", 0);
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let workers = 2 + r.below(3) as usize;
    let barrier = Arc::new(Barrier::new("halfway", workers));
    let done = Arc::new((Mutex::new("done", 0usize), Condvar::new("all done")));
    let handles: Vec<_> = (0..workers)
        .map(|i| {
            let steps: Vec<(bool, u64)> = (0..4 + r.below(5))
                .map(|_| (r.below(2) == 0, 1 + r.below(4)))
                .collect();
            let (barrier, done) = (Arc::clone(&barrier), Arc::clone(&done));
            named(&format!("worker {i}"), move || {
                for (k, &(locked, t)) in steps.iter().enumerate() {
                    if k == steps.len() / 2 {
                        barrier.wait();
                    }
                    if locked {
                        let mut m = M.lock().unwrap();
                        hold(t);
                        *m += 1;
                    } else {
                        work(t);
                    }
                }
                *done.0.lock().unwrap() += 1;
                done.1.notify_all();
            })
        })
        .collect();
    let items = 5 + r.below(10);
    let (tx, rx) = sync::sync_channel("items", 2);
    let produce_ms = 1 + r.below(3);
    let producer = named("producer", move || {
        for i in 0..items {
            tx.send(produce(i)).unwrap();
            sleep(ms(produce_ms));
        }
    });
    let consumer = named("consumer", move || rx.iter().map(consume).count());
    let mut finished = done.0.lock().unwrap();
    while *finished < workers {
        finished = done.1.wait(finished).unwrap();
    }
    drop(finished);
    for h in handles {
        h.join().unwrap();
    }
    producer.join().unwrap();
    assert_eq!(consumer.join().unwrap() as u64, items);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fork-join") => fork_join(),
        Some("convoy") => convoy(args.get(1).and_then(|h| h.parse().ok()).unwrap_or(40)),
        Some("nested") => nested(),
        Some("pipeline") => pipeline(),
        // Until stdin closes.
        Some("stuck") => nested_while(|| {
            let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
        }),
        Some("pipeline-crossbeam") => pipeline_crossbeam(),
        Some("blind") => wait_std(),
        Some("random") => random(args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0)),
        Some("many") => {
            let n: u64 = args
                .get(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            assert_eq!((0..n).map(tick).sum::<u64>(), n * n.saturating_sub(1) / 2);
        }
        _ => {
            eprintln!(
                "usage: critical fork-join | convoy HOLD_MS | nested | stuck | pipeline | pipeline-crossbeam \
                 | blind | random SEED | many N"
            );
            std::process::exit(2);
        }
    }
}
