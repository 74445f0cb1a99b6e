//! `TracingLayer`: spans become sections (levels, `live` and `dots` fields, per-poll timing of
//! `#[instrument] async fn`), the `profiling` crate's scopes land through its tracing backend, and the fmt
//! layer writing through `perfgraph_core::stderr()` next to it works.
//!
//! One subscriber for the whole binary (set as the global default once), in one test function, so the
//! cases do not race for the default verbosity.

use std::time::Duration;

use perfgraph_core::TracingLayer;
use tracing::instrument;
use tracing_subscriber::layer::SubscriberExt;

#[instrument]
fn assemble(n: u32) -> u32 {
    tracing::info!(n, "assembling");
    n * 2
}

#[instrument(fields(live = "Loading mesh", dots = true))]
async fn load_mesh() -> u32 {
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    3
}

fn profiled() {
    profiling::scope!("profiled scope");
    std::hint::black_box(1 + 1);
}

#[test]
fn spans_become_sections() {
    let subscriber = tracing_subscriber::registry()
        .with(TracingLayer::default())
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(perfgraph_core::stderr)
                .with_ansi(false),
        );
    tracing::subscriber::set_global_default(subscriber).unwrap();

    assert_eq!(assemble(2), 4);
    assert_eq!(assemble(3), 6);
    {
        let outer = tracing::info_span!("outer phase");
        let _o = outer.enter();
        let fine = tracing::trace_span!("fine detail");
        let _f = fine.enter();
        let warn = tracing::warn_span!("warn phase");
        let _w = warn.enter();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(async { tokio::spawn(load_mesh()).await.unwrap() }),
        3
    );
    drop(rt);
    profiled();

    let tree = perfgraph_core::merged();
    let a = tree.find(&["assemble"]).unwrap();
    assert_eq!((a.calls, a.polls), (2, 0), "a span entered once is a call");
    let info = perfgraph_core::section_info(a.section).unwrap();
    assert_eq!(info.level, 1);
    assert!(info.module_path.starts_with("tracing_layer"));

    // TRACE is level 3, above the default verbosity (1): not recorded, so the WARN span (level 0) inside it
    // is the INFO span's child.
    assert!(tree.find(&["outer phase", "fine detail"]).is_none());
    let warn = tree.find(&["outer phase", "warn phase"]).unwrap();
    assert_eq!(perfgraph_core::section_info(warn.section).unwrap().level, 0);
    assert!(perfgraph_core::report().skipped.contains(&"fine detail"));

    let m = tree.find(&["load_mesh"]).unwrap();
    assert_eq!(m.calls, 1);
    assert!(m.polls >= 4, "{} polls", m.polls);
    assert!(m.total_ns <= m.wall_ns && m.wall_ns >= 5_000_000, "{m:?}");
    let info = perfgraph_core::section_info(m.section).unwrap();
    assert_eq!((info.live, info.dots), ("Loading mesh", true));

    let p = tree.find(&["profiled scope"]).unwrap();
    assert_eq!(p.calls, 1);
}
