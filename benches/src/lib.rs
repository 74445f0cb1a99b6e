//! The bench harness shared by `benches/overhead.rs` (this crate), the side-by-side comparison with the
//! peers (`benches/peers/`, a crate of its own so the peers' ~120 dependencies stay out of the workspace
//! build; see `benches/README.md`) and the compiled-out bench (`benches/compiled-out/`, which turns off the
//! `cases` feature so that this crate does not pull in perfgraph-core with `enabled`).
//!
//! Every measurement is the same shape: an `#[inline(never)]` leaf function holding one section (or, for the
//! floors, nothing or a pair of clock reads) is called `iters` times, in batches of [`BATCH`] calls inside
//! whatever per-batch context the tool asks for (an outer scope, a root span, a frame). The time per
//! iteration therefore includes the call itself; the report subtracts the empty-call floor measured in the
//! same run to get the cost the instrumentation adds.
//!
//! Each [`Case`] is measured on one thread (the Criterion thread) and on two threads at once ([`Pair`]: two
//! worker threads released together by a barrier, each timing its own loop; the figure is their mean, i.e.
//! the per-thread cost while both record), in wall time, and for perfgraph and the floors also in each
//! thread's CPU time ([`bench_cases_cpu`]), which other processes on the machine do not inflate.

use std::hint::black_box;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::Criterion;

#[cfg(feature = "cases")]
pub mod cases;
pub mod ids;
pub mod layer_rounds;
pub mod stats;
pub mod timing;

/// Leaf calls per batch (per outer scope / root span / frame).
pub const BATCH: u64 = 1000;

/// One thing to measure.
#[derive(Clone, Copy)]
pub struct Case {
    /// Criterion id within its group, one of [`ids::case`], e.g. `perfgraph/enabled`.
    pub name: &'static str,
    /// Runs before each timed run, on the thread that starts it (e.g. sets the verbosity).
    pub setup: fn(),
    /// Runs once on each worker thread before its first timed run (e.g. registers the thread with a peer).
    pub thread_setup: fn(),
    /// Makes `n <= BATCH` leaf calls inside one batch context.
    pub batch: fn(u64),
}

impl Case {
    /// A case with no set-up.
    pub const fn new(name: &'static str, batch: fn(u64)) -> Case {
        Case {
            name,
            setup: nothing,
            thread_setup: nothing,
            batch,
        }
    }

    /// The same case with `setup` run before each timed run.
    pub const fn with_setup(self, setup: fn()) -> Case {
        Case { setup, ..self }
    }

    /// The same case with `thread_setup` run once per worker thread.
    pub const fn with_thread_setup(self, thread_setup: fn()) -> Case {
        Case {
            thread_setup,
            ..self
        }
    }

    /// Makes `iters` leaf calls, in batches.
    pub fn run(&self, iters: u64) {
        let mut left = iters;
        while left > 0 {
            let n = left.min(BATCH);
            (self.batch)(n);
            left -= n;
        }
    }

    /// Times `iters` leaf calls on this thread.
    pub fn time(&self, iters: u64) -> Duration {
        (self.setup)();
        let start = Instant::now();
        self.run(iters);
        start.elapsed()
    }

    /// The CPU time this thread spends on `iters` leaf calls: unlike wall time, it does not count the time
    /// other processes hold the core, so it stays valid on a busy machine.
    pub fn cpu_time(&self, iters: u64) -> Duration {
        (self.setup)();
        let start = thread_cpu_time();
        self.run(iters);
        thread_cpu_time() - start
    }
}

/// Which clock a measurement reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clock {
    /// Elapsed time (`Instant`).
    Wall,
    /// The measuring thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`).
    ThreadCpu,
}

/// CPU time of the calling thread.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn nothing() {}

/// Calls `f` `n` times; the loop every batch function uses.
#[inline(always)]
pub fn repeat(n: u64, f: fn()) {
    for _ in 0..n {
        f();
    }
}

/// Two worker threads that run one [`Case`] at the same time.
pub struct Pair {
    /// One sender per worker: the iteration count of the next run.
    commands: Vec<Sender<u64>>,
    /// Each worker's elapsed time per run.
    results: Receiver<Duration>,
    workers: Vec<JoinHandle<()>>,
}

impl Pair {
    /// Starts the two workers for `case`, each timing its runs with `clock`.
    pub fn new(case: Case, clock: Clock) -> Pair {
        let barrier = Arc::new(Barrier::new(2));
        let (result_tx, results) = channel();
        let mut commands = Vec::new();
        let mut workers = Vec::new();
        for i in 0..2 {
            let (tx, rx) = channel::<u64>();
            commands.push(tx);
            let barrier = Arc::clone(&barrier);
            let result_tx = result_tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("bench-worker-{i}"))
                .spawn(move || {
                    (case.thread_setup)();
                    while let Ok(iters) = rx.recv() {
                        barrier.wait();
                        let took = match clock {
                            Clock::Wall => {
                                let start = Instant::now();
                                case.run(iters);
                                start.elapsed()
                            }
                            Clock::ThreadCpu => {
                                let start = thread_cpu_time();
                                case.run(iters);
                                thread_cpu_time() - start
                            }
                        };
                        if result_tx.send(took).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawn bench worker");
            workers.push(handle);
        }
        Pair {
            commands,
            results,
            workers,
        }
    }

    /// Runs `iters` leaf calls on both workers at once; returns their mean elapsed time.
    pub fn time(&self, case: &Case, iters: u64) -> Duration {
        (case.setup)();
        for tx in &self.commands {
            tx.send(iters).expect("bench worker alive");
        }
        let a = self.results.recv().expect("bench worker result");
        let b = self.results.recv().expect("bench worker result");
        (a + b) / 2
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.commands.clear();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Criterion settings shared by every bench binary: enough samples for a stable median on a noisy 2-core VM,
/// short enough that the whole comparison runs in a few minutes.
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

/// Registers every case in group `one_thread` and again in group `two_threads` (wall time).
pub fn bench_cases(c: &mut Criterion, cases: &[Case]) {
    bench_group(
        c,
        ids::group::ONE_THREAD,
        ids::group::TWO_THREADS,
        Clock::Wall,
        cases,
    );
}

/// Registers the cases in groups `cpu_one_thread` and `cpu_two_threads`, timed with each thread's CPU
/// time: the per-thread cost while two threads record, even when other processes share the cores.
pub fn bench_cases_cpu(c: &mut Criterion, cases: &[Case]) {
    bench_group(
        c,
        ids::group::CPU_ONE_THREAD,
        ids::group::CPU_TWO_THREADS,
        Clock::ThreadCpu,
        cases,
    );
}

fn bench_group(c: &mut Criterion, one: &str, two: &str, clock: Clock, cases: &[Case]) {
    {
        let mut group = c.benchmark_group(one);
        for case in cases {
            group.bench_function(case.name, |b| {
                b.iter_custom(|iters| match clock {
                    Clock::Wall => case.time(iters),
                    Clock::ThreadCpu => case.cpu_time(iters),
                })
            });
        }
        group.finish();
    }
    let mut group = c.benchmark_group(two);
    for case in cases {
        let pair = Pair::new(*case, clock);
        group.bench_function(case.name, |b| b.iter_custom(|iters| pair.time(case, iters)));
    }
    group.finish();
}

/// The empty body every leaf shares, so leaves differ only by their instrumentation.
#[inline(always)]
pub fn body() {
    black_box(());
}
