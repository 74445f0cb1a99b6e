//! The counting allocator installed as the global allocator: exact allocation figures per section. Its
//! own test target, since `#[global_allocator]` is for the whole binary. Each test records on a thread of
//! its own name, so the tests (run in parallel by the harness) never share a call tree.

mod common;

use std::hint::black_box;

use perfgraph_core::{CallNode, CountingAllocator, time_section};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator::new(std::alloc::System);

fn node(thread: &str, path: &[&str]) -> CallNode {
    let t = common::thread_named(thread);
    t.tree
        .find(path)
        .unwrap_or_else(|| panic!("{path:?} not in {thread}'s tree"))
        .clone()
}

#[test]
fn a_thousand_vectors_are_a_thousand_allocations_self_and_inclusive() {
    common::on_thread("alloc-exact", || {
        time_section!("alloc::outer");
        {
            time_section!("alloc::inner");
            for _ in 0..1000 {
                black_box(Vec::<u8>::with_capacity(1024));
            }
        }
    });
    let inner = node("alloc-exact", &["alloc::outer", "alloc::inner"]);
    assert_eq!((inner.allocs, inner.alloc_bytes), (1000, 1_024_000));
    assert_eq!(
        (inner.self_allocs, inner.self_alloc_bytes),
        (1000, 1_024_000)
    );
    assert_eq!(inner.heap_growth_bytes, 0, "every vector was freed");
    assert_eq!(inner.heap_peak_bytes, 1024, "one vector at a time");
    let outer = node("alloc-exact", &["alloc::outer"]);
    assert_eq!((outer.allocs, outer.alloc_bytes), (1000, 1_024_000));
    assert_eq!((outer.self_allocs, outer.self_alloc_bytes), (0, 0));
    assert_eq!(outer.heap_peak_bytes, 1024);
    let report = perfgraph_core::report();
    assert!(report.run.heap_counted);
    let table = report.alloc_table();
    assert!(
        table.contains("Self alloc(MB)") && table.contains("alloc::inner"),
        "{table}"
    );
}

#[test]
fn realloc_growth_counts_each_reallocation_and_the_net_growth() {
    let capacity = common::on_thread("alloc-realloc", || {
        time_section!("alloc::grow");
        let mut v: Vec<u64> = Vec::with_capacity(1);
        for i in 0..1000 {
            v.push(black_box(i));
        }
        let capacity = v.capacity();
        // Kept past the section: its growth is the vector's final size.
        std::mem::forget(v);
        capacity
    });
    let n = node("alloc-realloc", &["alloc::grow"]);
    let bytes = capacity as u64 * 8;
    assert!(
        n.allocs >= 2,
        "the first allocation and reallocations: {n:?}"
    );
    assert_eq!(n.heap_growth_bytes, bytes as i64);
    assert!(n.alloc_bytes > bytes, "each realloc's new size: {n:?}");
    assert!(n.heap_peak_bytes >= bytes, "{n:?}");
}

#[test]
fn memory_freed_on_another_thread_counts_against_the_freeing_threads_section() {
    let buffer = common::on_thread("alloc-maker", || vec![1u8; 1 << 20]);
    common::on_thread("alloc-freer", move || {
        time_section!("alloc::free_other");
        drop(black_box(buffer));
    });
    let n = node("alloc-freer", &["alloc::free_other"]);
    assert_eq!(n.allocs, 0);
    assert_eq!(n.heap_growth_bytes, -(1 << 20));
    assert_eq!(n.heap_peak_bytes, 0);
}

#[test]
fn a_thread_that_allocates_before_its_first_section_counts_only_the_sections_own() {
    common::on_thread("alloc-early", || {
        let early = black_box(vec![7u8; 10 << 20]);
        {
            time_section!("alloc::after_early");
            black_box(Vec::<u8>::with_capacity(1000)).leak();
        }
        drop(early);
    });
    let n = node("alloc-early", &["alloc::after_early"]);
    assert_eq!((n.allocs, n.alloc_bytes), (1, 1000));
    assert_eq!(n.heap_growth_bytes, 1000);
    assert_eq!(n.heap_peak_bytes, 1000);
}

struct AllocatesOnDrop;

impl Drop for AllocatesOnDrop {
    fn drop(&mut self) {
        time_section!("alloc::in_tls_destructor");
        black_box(Vec::<u8>::with_capacity(512));
    }
}

thread_local! {
    static ON_EXIT: AllocatesOnDrop = const { AllocatesOnDrop };
}

#[test]
fn allocation_during_thread_local_destruction_is_counted() {
    common::on_thread("alloc-tls", || {
        time_section!("alloc::before_exit");
        ON_EXIT.with(|_| {});
    });
    // The destructor's section ran during the thread's teardown, on a state of its own.
    let found: Vec<CallNode> = perfgraph_core::threads()
        .iter()
        .filter_map(|t| t.tree.find(&["alloc::in_tls_destructor"]).cloned())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].allocs, found[0].alloc_bytes), (1, 512));
    assert_eq!(found[0].heap_growth_bytes, 0);
}

#[test]
fn the_process_heap_counts_every_threads_net_heap_within_the_publishing_step() {
    type Counting = CountingAllocator;
    const MB: i64 = 1 << 20;
    let before = Counting::process_heap_bytes();
    // Kept by a thread that never records, then freed by one that does.
    let kept = std::thread::spawn(|| black_box(vec![1u8; 64 * MB as usize]))
        .join()
        .unwrap();
    let grown = Counting::process_heap_bytes() - before;
    // Other tests of this binary allocate and free up to about 10 MB at the same time (the buffer freed on
    // another thread): the figure is the whole process's.
    assert!((48 * MB..80 * MB).contains(&grown), "grew {grown} B");
    common::on_thread("alloc-process-heap", move || {
        time_section!("alloc::free");
        drop(kept);
    });
    let now = Counting::process_heap_bytes() - before;
    assert!((-16 * MB..16 * MB).contains(&now), "{now} B after the free");
}

/// With the counting allocator and a trace, the trace has a `Heap` counter track next to resident memory,
/// which sees what the program holds. Runs itself as a child with those settings.
#[test]
fn the_trace_has_a_heap_counter_track() {
    const TEST: &str = "the_trace_has_a_heap_counter_track";
    if common::is_test_child(TEST) {
        time_section!("alloc::hold");
        let kept = black_box(vec![1u8; 48 << 20]);
        // Memory samples (every pass at a 1 ms interval, since the resident set just moved) see it.
        common::wait_passes(20);
        drop(kept);
        return;
    }
    let dir = common::scratch("heap-track");
    let trace = dir.join("run.trace.json");
    common::test_child_stderr(
        TEST,
        &[
            ("PERFGRAPH_LIVE", "off"),
            ("PERFGRAPH_CAPTURE", "off"),
            ("PERFGRAPH_MEM_INTERVAL", "1"),
            ("PERFGRAPH_TRACE", trace.to_str().unwrap()),
        ],
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let events: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let heap: Vec<f64> = events
        .iter()
        .filter(|e| e["name"] == "Heap" && e["ph"] == "C")
        .map(|e| e["args"]["MB"].as_f64().unwrap())
        .collect();
    assert!(
        events.iter().any(|e| e["name"] == "Resident memory"),
        "{text}"
    );
    let most = heap.iter().copied().fold(0.0, f64::max);
    assert!((50.0..80.0).contains(&most), "Heap samples (MB): {heap:?}");
}

/// A timed future that allocates nothing is charged nothing: the async figures' storage, made at its
/// first poll, is perfgraph's own (it was charged to the future's section: 1 allocation, 2,560 bytes).
#[test]
fn a_timed_future_is_not_charged_perfgraphs_own_storage() {
    use std::task::{Context, Poll, Waker};
    common::on_thread("alloc-future", || {
        let mut cx = Context::from_waker(Waker::noop());
        let mut polls = 0;
        let mut future = std::pin::pin!(perfgraph_core::time_future!(
            "alloc::future",
            std::future::poll_fn(|cx| {
                polls += 1;
                if polls < 3 {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })
        ));
        while future.as_mut().poll(&mut cx).is_pending() {}
    });
    let future = node("alloc-future", &["alloc::future"]);
    assert_eq!(
        (future.allocs, future.alloc_bytes, future.heap_growth_bytes),
        (0, 0, 0)
    );
}
