//! What a recording thread pays to wake the background thread, for the two ways it could be done: the
//! `crossbeam-channel` inbox perfgraph uses (`try_send` on a bounded channel) and `Thread::unpark`. Each is
//! timed with the waker's target in the two states a recording thread meets: already woken (a message is
//! waiting, or the park token is set: the common case when several sections end close together), and
//! blocked (the call must wake it). `cargo bench -p perfgraph-benches --bench wake`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use criterion::Criterion;
use perfgraph_benches::criterion;

/// A thread that waits in `park` until told to stop; returns its handle and the stop flag.
fn parked_thread() -> (thread::JoinHandle<()>, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            thread::park();
        }
    });
    (handle, stop)
}

fn unpark(c: &mut Criterion) {
    // Already woken: the token is set and the target is busy elsewhere (it never parks).
    let busy = thread::spawn(|| thread::sleep(Duration::from_secs(3600)));
    let target = busy.thread().clone();
    c.bench_function("wake/unpark/already_woken", |b| b.iter(|| target.unpark()));
    // Blocked: each unpark wakes a thread that parks again at once.
    let (handle, stop) = parked_thread();
    let target = handle.thread().clone();
    c.bench_function("wake/unpark/blocked", |b| b.iter(|| target.unpark()));
    stop.store(true, Ordering::Relaxed);
    target.unpark();
    handle.join().unwrap();
}

fn channel(c: &mut Criterion) {
    // Already woken: the inbox is full (a message waits), so `try_send` fails at once.
    let (tx, _rx) = crossbeam_channel::bounded::<u8>(8);
    for _ in 0..8 {
        tx.try_send(0).unwrap();
    }
    c.bench_function("wake/try_send/already_woken", |b| {
        b.iter(|| tx.try_send(0).is_ok())
    });
    // Blocked: a receiver waits in `recv`; each `try_send` hands it a message and wakes it.
    let (tx, rx) = crossbeam_channel::bounded::<u8>(8);
    let receiver = thread::spawn(move || while rx.recv().is_ok_and(|m| m == 0) {});
    c.bench_function("wake/try_send/blocked", |b| {
        b.iter(|| tx.try_send(0).is_ok())
    });
    let _ = tx.send(1);
    receiver.join().unwrap();
}

fn main() {
    let mut c = criterion();
    unpark(&mut c);
    channel(&mut c);
    c.final_summary();
}
