//! A small service's shape, for the OTLP export's tests: `serve` handles `REQUESTS` requests (default 8);
//! each `handle` runs a `query`, which takes 250 ms for every fourth request and 1 ms for the others; then
//! `TICKS` (default 5,000) calls of `tick` on a worker thread, for exact counts. 5,000 calls fit in a new
//! thread's ring (8,192 records): however late the background thread drains it, none is lost, so the
//! spans have nothing to say about them (a burst larger than that may overflow before the first drain,
//! and the exit line would count it).
//!
//! ```sh
//! PERFGRAPH_OTLP=http://127.0.0.1:4318 PERFGRAPH_OTLP_SLOW=0.2 cargo run -p perfgraph-cli --example requests
//! ```

use std::time::Duration;

use perfgraph_core::timed;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[timed]
fn query(slow: bool) {
    std::thread::sleep(Duration::from_millis(if slow { 250 } else { 1 }));
}

#[timed]
fn handle(i: u64) {
    query(i.is_multiple_of(4));
}

#[timed]
fn serve(requests: u64) {
    for i in 0..requests {
        handle(i);
    }
}

#[timed]
fn tick(i: u64) -> u64 {
    i.wrapping_mul(31)
}

fn main() {
    serve(env("REQUESTS", 8));
    let ticks = env("TICKS", 5_000);
    let sum = std::thread::Builder::new()
        .name("ticker".into())
        .spawn(move || (0..ticks).fold(0u64, |a, i| a.wrapping_add(tick(i))))
        .unwrap()
        .join()
        .unwrap();
    println!("served; {}", sum % 7);
}
