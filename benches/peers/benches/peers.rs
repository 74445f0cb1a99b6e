//! One section enter + exit: perfgraph, the floors and the peers, side by side in one process, on one thread
//! and on two threads at once. Run by `benches/run.sh`; by hand: `cd benches/peers && cargo bench`.
//!
//! Each peer is set up as its own documentation recommends, and the set-up is written next to its leaf below.
//! Every leaf is an `#[inline(never)]` function holding one section around the same empty body, called in
//! batches of 1,000 inside an outer scope (or the root span / frame the peer needs).
//!
//! tracing's subscriber is process-global (`set_global_default`, as its docs recommend for applications;
//! a scoped `with_default` would add thread-local lookups to every span). So this binary installs the
//! `Registry` by default, and `PEERS_TRACING=chrome` makes it install `Registry` + tracing-chrome instead and
//! run only that case (with the floors): `run.sh` runs it twice.
//!
//! With `PEERS_LAYER_ROUNDS=R` (empty: 21) it runs only the side-by-side rounds of the `TracingLayer` target
//! (`perfgraph_benches::layer_rounds`) and prints one line per round and a summary; `record` runs it so.

use std::future::Future;
use std::hint::black_box;
use std::sync::{Once, OnceLock};
use std::task::{Context, Waker};

use perfgraph_benches::ids::case;
use perfgraph_benches::{
    Case, bench_cases, bench_cases_cpu, body, cases, criterion, layer_rounds, repeat,
};

// ---- puffin 0.20: `set_scopes_on(true)`, `profile_scope!`, `GlobalProfiler::lock().new_frame()` once per
// frame (here: per batch). No sink is attached, so frames are built and dropped (the cheapest set-up; a
// viewer would add a sink). ----

#[inline(never)]
fn puffin_leaf() {
    puffin::profile_scope!("leaf");
    body();
}

fn puffin_batch(n: u64) {
    {
        puffin::profile_scope!("batch");
        repeat(n, puffin_leaf);
    }
    puffin::GlobalProfiler::lock().new_frame();
}

// ---- fastrace 0.7 with `enable`: a reporter set once (`set_reporter`, here one that drops every span),
// `#[fastrace::trace]` on the leaf, a root span per batch made the local parent. ----

struct NoopReporter;

impl fastrace::collector::Reporter for NoopReporter {
    fn report(&mut self, spans: Vec<fastrace::prelude::SpanRecord>) {
        black_box(spans);
    }
}

fn fastrace_setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        fastrace::set_reporter(NoopReporter, fastrace::collector::Config::default());
    });
}

#[fastrace::trace]
#[inline(never)]
fn fastrace_leaf() {
    body();
}

fn fastrace_batch(n: u64) {
    let root = fastrace::Span::root("batch", fastrace::collector::SpanContext::random());
    let _guard = root.set_local_parent();
    repeat(n, fastrace_leaf);
}

fn fastrace_no_root_batch(n: u64) {
    repeat(n, fastrace_leaf);
}

/// `#[trace]` on an `async fn` (its span made with the future, entered as the local parent at each poll),
/// here one that never completes.
#[fastrace::trace]
async fn fastrace_pending() {
    std::future::pending::<()>().await
}

/// `n` polls of one pending traced future under a root span: what a poll costs.
fn fastrace_future_polls(n: u64) {
    let root = fastrace::Span::root("batch", fastrace::collector::SpanContext::random());
    let _guard = root.set_local_parent();
    poll_pending(n, fastrace_pending());
}

/// Polls `future` (which stays pending) `n` times with a no-op waker, after a first poll.
fn poll_pending(n: u64, future: impl Future<Output = ()>) {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    let _ = future.as_mut().poll(&mut cx);
    for _ in 0..n {
        let _ = black_box(future.as_mut().poll(&mut cx));
    }
}

// ---- tracing 0.1 + tracing-subscriber 0.3: `#[instrument(skip_all)]` on the leaf, an `info_span!` per
// batch, and a global `Registry` with one layer: a no-op layer (the cost every layer stack shares), or
// tracing-chrome writing to `io::sink()`. A `Registry` with no layer at all never frees closed spans
// (tokio-rs/tracing#900, open): here it grew to 3 GB in 6 s and spent its time in page faults. ----

/// A layer that does nothing: it makes the `Registry` free closed spans (see above) and adds no work.
struct NoopLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for NoopLayer {}

#[tracing::instrument(skip_all)]
#[inline(never)]
fn tracing_leaf() {
    body();
}

fn tracing_batch(n: u64) {
    let _span = tracing::info_span!("batch").entered();
    repeat(n, tracing_leaf);
}

// ---- perfgraph's `TracingLayer` (perfgraph-core's `tracing` feature) on tracing + `Registry`, against
// tracing + `Registry` alone. The process-global subscriber is already the one above, so each runs under a
// scoped dispatcher (`dispatcher::with_default`, entered once per batch of 1,000), built the same way but
// for its layer. "`Registry` alone" is the `Registry` with the no-op layer (without a layer it never frees
// closed spans, see above); with perfgraph's layer, it is the layer *in place of* the no-op one, as users
// install it (`registry().with(TracingLayer::new())`), so their difference is what the layer adds to a
// span's enter + exit (and its creation and close, which `#[instrument]` makes per call). Stacked on top of
// the no-op layer, it would also pay tracing-subscriber's dispatch to a second layer, which any added layer
// pays: that variant is timed only in the side-by-side rounds (`PEERS_LAYER_ROUNDS`, see `main`), as an
// aside. ----

/// `n` leaves under the scoped dispatcher in `cell`, made by `make` at its first use.
fn scoped_batch(
    cell: &'static OnceLock<tracing::Dispatch>,
    make: fn() -> tracing::Dispatch,
    n: u64,
) {
    let dispatch = cell.get_or_init(make);
    tracing::dispatcher::with_default(dispatch, || tracing_batch(n));
}

/// tracing + `Registry` + the no-op layer.
fn tracing_scoped_batch(n: u64) {
    use tracing_subscriber::layer::SubscriberExt;
    static D: OnceLock<tracing::Dispatch> = OnceLock::new();
    scoped_batch(
        &D,
        || tracing::Dispatch::new(tracing_subscriber::registry().with(NoopLayer)),
        n,
    );
}

/// tracing + `Registry` + perfgraph's layer, in place of the no-op layer.
fn tracing_layer_batch(n: u64) {
    use tracing_subscriber::layer::SubscriberExt;
    static D: OnceLock<tracing::Dispatch> = OnceLock::new();
    scoped_batch(
        &D,
        || {
            tracing::Dispatch::new(
                tracing_subscriber::registry().with(perfgraph_core::TracingLayer::new()),
            )
        },
        n,
    );
}

/// tracing + `Registry` + the no-op layer + perfgraph's layer on top (the rounds only).
fn tracing_stacked_batch(n: u64) {
    use tracing_subscriber::layer::SubscriberExt;
    static D: OnceLock<tracing::Dispatch> = OnceLock::new();
    scoped_batch(
        &D,
        || {
            tracing::Dispatch::new(
                tracing_subscriber::registry()
                    .with(NoopLayer)
                    .with(perfgraph_core::TracingLayer::new()),
            )
        },
        n,
    );
}

fn install_tracing(chrome: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    let registry = tracing_subscriber::registry();
    if chrome {
        let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
            .writer(std::io::sink())
            .build();
        // The guard flushes on drop; keep the writer for the whole process.
        std::mem::forget(guard);
        tracing::subscriber::set_global_default(registry.with(layer))
    } else {
        tracing::subscriber::set_global_default(registry.with(NoopLayer))
    }
    .expect("no other global subscriber");
}

// ---- time-graph 0.3: `enable_data_collection(true)`, `#[time_graph::instrument]`, `spanned!` per batch. ----

#[time_graph::instrument]
#[inline(never)]
fn time_graph_leaf() {
    body();
}

fn time_graph_batch(n: u64) {
    time_graph::spanned!("batch", {
        repeat(n, time_graph_leaf);
    })
}

fn time_graph_on() {
    time_graph::enable_data_collection(true);
}

fn time_graph_off() {
    time_graph::enable_data_collection(false);
}

// ---- hotpath 0.30 with the `hotpath` feature: a `HotpathGuard` alive for the run (what `#[hotpath::main]`
// makes; built here with `HotpathGuardBuilder`), `#[hotpath::measure]` on the leaf, `measure_block!` per
// batch. The guard is never dropped, so no report is printed. Building the guard also starts, by default
// (hotpath 0.30.3's source): the `hp-functions` thread that aggregates the measurements, an HTTP metrics
// server on 127.0.0.1:6770 (thread `hp-server`; `HOTPATH_METRICS_PORT` moves it,
// `HOTPATH_METRICS_SERVER_OFF` turns it off) and, with the default `threads` feature, `hp-threads`, which
// samples every thread's CPU time every 250 ms. They are left on, as a user gets them: they are part of what this peer costs, and they share
// the machine's cores with the measured threads. ----

fn hotpath_setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::mem::forget(hotpath::HotpathGuardBuilder::new("bench").build()));
}

#[hotpath::measure]
#[inline(never)]
fn hotpath_leaf() {
    body();
}

/// `#[measure]` on an `async fn` (its guard around each poll), here one that never completes.
#[hotpath::measure]
async fn hotpath_pending() {
    std::future::pending::<()>().await
}

fn hotpath_future_polls(n: u64) {
    hotpath::measure_block!("future_batch", {
        poll_pending(n, hotpath_pending());
    })
}

fn hotpath_batch(n: u64) {
    hotpath::measure_block!("batch", {
        repeat(n, hotpath_leaf);
    })
}

// ---- coarse-prof 0.2: `profile!` in the leaf and around the batch; nothing to set up. ----

#[inline(never)]
fn coarse_prof_leaf() {
    coarse_prof::profile!("leaf");
    body();
}

fn coarse_prof_batch(n: u64) {
    coarse_prof::profile!("batch");
    repeat(n, coarse_prof_leaf);
}

const PEERS: [Case; 13] = [
    Case::new(case::PUFFIN_ON, puffin_batch).with_setup(|| puffin::set_scopes_on(true)),
    Case::new(case::PUFFIN_OFF, puffin_batch).with_setup(|| puffin::set_scopes_on(false)),
    Case::new(case::FASTRACE_ROOT_SPAN, fastrace_batch).with_setup(fastrace_setup),
    Case::new(case::FASTRACE_NO_ROOT, fastrace_no_root_batch).with_setup(fastrace_setup),
    Case::new(case::FASTRACE_FUTURE_POLL, fastrace_future_polls).with_setup(fastrace_setup),
    Case::new(case::TRACING_REGISTRY_NOOP_LAYER, tracing_batch),
    Case::new(case::TRACING_SCOPED_REGISTRY, tracing_scoped_batch),
    Case::new(case::TRACING_SCOPED_PERFGRAPH_LAYER, tracing_layer_batch),
    Case::new(case::TIME_GRAPH_ON, time_graph_batch).with_setup(time_graph_on),
    Case::new(case::TIME_GRAPH_OFF, time_graph_batch).with_setup(time_graph_off),
    Case::new(case::HOTPATH_ON, hotpath_batch).with_setup(hotpath_setup),
    Case::new(case::HOTPATH_FUTURE_POLL, hotpath_future_polls).with_setup(hotpath_setup),
    Case::new(case::COARSE_PROF_ON, coarse_prof_batch),
];

const TRACING_CHROME: Case = Case::new(case::TRACING_REGISTRY_CHROME, tracing_batch);

/// The `TracingLayer` target's side-by-side rounds (`perfgraph_benches::layer_rounds`): the layer alone
/// and stacked, their baseline, perfgraph's section and the empty call, one batch of each per round.
fn layer_rounds(rounds: usize) {
    let find = |cases: &[Case], id| *cases.iter().find(|c| c.name == id).expect("a case");
    let cases = layer_rounds::Cases {
        floor: find(&cases::FLOORS, case::EMPTY_CALL),
        enabled: find(&cases::PERFGRAPH, case::PERFGRAPH_ENABLED),
        registry: find(&PEERS, case::TRACING_SCOPED_REGISTRY),
        layer: find(&PEERS, case::TRACING_SCOPED_PERFGRAPH_LAYER),
        stacked: Case::new(
            "tracing/scoped_registry_stacked_layer",
            tracing_stacked_batch,
        ),
    };
    layer_rounds::run(&cases, rounds, layer_rounds::CALLS, |line| {
        println!("{line}")
    });
}

fn main() {
    if let Ok(value) = std::env::var(layer_rounds::ROUNDS_VAR) {
        // Only the rounds, under the same global subscriber as the Criterion cases.
        install_tracing(false);
        layer_rounds(layer_rounds::rounds_from(&value));
        return;
    }
    let chrome = std::env::var("PEERS_TRACING").is_ok_and(|v| v == "chrome");
    install_tracing(chrome);
    let mut all: Vec<Case> = cases::FLOORS.to_vec();
    if chrome {
        all.push(TRACING_CHROME);
    } else {
        all.extend(cases::PERFGRAPH);
        all.extend(cases::LOCKS);
        all.extend(PEERS);
    }
    let mut c = criterion();
    bench_cases(&mut c, &all);
    if !chrome {
        let mine: Vec<Case> = cases::FLOORS
            .iter()
            .chain(&cases::PERFGRAPH)
            .chain(&cases::LOCKS)
            .copied()
            .collect();
        bench_cases_cpu(&mut c, &mine);
    }
    c.final_summary();
}
