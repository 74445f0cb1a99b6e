//! Sections with a `live` message read resident memory themselves at their start and end
//! (`PERFGRAPH_MEM_EXACT=live`, the default): a large `drop` just before such a section is not charged to it.
//! One test in its own process, so no other test's memory moves the figures.

mod common;

use std::hint::black_box;

use perfgraph_core::time_section;

const MB160: usize = 160_000_000;

#[test]
fn a_live_section_right_after_a_large_drop_shows_what_it_allocated() {
    let big = black_box(vec![1u8; MB160]);
    {
        time_section!("mem::warm_up");
    }
    // The sampled figure now includes `big`: a section reading it would start 160 MB too high.
    common::wait_passes(2);
    drop(big);
    let kept = {
        time_section!("mem::exact", live = "Allocating 160 MB");
        black_box(vec![1u8; MB160])
    };
    let tree = common::thread_named(&main_name()).tree;
    let n = tree.find(&["mem::exact"]).expect("the section");
    let mb = n.total_mem_bytes as f64 / 1e6;
    assert!(
        (150.0..=180.0).contains(&mb),
        "the live section shows {mb} MB, not +160"
    );
    drop(kept);
}

/// The harness's thread for this test (its name is the test's).
fn main_name() -> String {
    std::thread::current().name().unwrap_or("main").to_owned()
}

/// Such a section's own reads of resident memory (a `pread` of `/proc/self/statm`, microseconds, and as long
/// as any preemption at the system call's return: once 10 ms under load) are not in its time: the clock is
/// read after the start's read and before the end's. The shortest of 200 empty calls is well under the
/// shortest of 200 such reads (it was longer than one before: the start's read was inside).
#[test]
fn a_live_sections_own_memory_reads_are_not_in_its_time() {
    let read_ns = (0..200)
        .map(|_| {
            let t = std::time::Instant::now();
            black_box(perfgraph_core::__test_hooks::read_rss_bytes());
            t.elapsed().as_nanos() as u64
        })
        .min()
        .unwrap();
    let thread = "mem-empty";
    let min_ns = std::thread::Builder::new()
        .name(thread.into())
        .spawn(move || {
            for _ in 0..200 {
                time_section!("mem::empty", live = "Doing nothing");
            }
            let tree = common::thread_named(thread).tree;
            tree.find(&["mem::empty"])
                .expect("the section")
                .latency
                .min_ns
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(
        min_ns < read_ns / 2,
        "an empty section took {min_ns} ns at least; one memory read takes {read_ns} ns"
    );
}
