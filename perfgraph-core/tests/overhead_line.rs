//! The `Instrumentation:` footer line on a run of two threads × 2,000,000 tiny sections: its per-section
//! figure is no more than twice what a section costs the threads that recorded (each thread measures its own
//! CPU time per section here, so the figures do not depend on how busy the machine is), and the share it
//! states is of the threads' CPU time, never above 100%. Before, a start-up calibration thrown off by load
//! claimed 428.8 ns a section, and a cost summed over threads was divided by the wall time (1290% of a run).

// Its control socket in a directory of this test binary's own (`common/scratch.rs`), not /tmp's.
mod common;

use perfgraph_core::time_section;

const THREADS: usize = 2;
const CALLS: u64 = 2_000_000;

fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[test]
fn the_footer_states_a_sane_cost_and_a_share_of_at_most_100_percent() {
    let per_section: Vec<f64> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(|| {
                let start = cpu_ns();
                for i in 0..CALLS {
                    time_section!("tiny");
                    std::hint::black_box(i);
                }
                (cpu_ns() - start) as f64 / CALLS as f64
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    // The start-up measurement goes a round per pass of the background thread: wait for it (bounded).
    let start = std::time::Instant::now();
    while perfgraph_core::report()
        .run
        .overhead_ns_per_section
        .is_none()
        && start.elapsed() < std::time::Duration::from_secs(60)
    {
        perfgraph_core::__test_hooks::wake_background();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let r = perfgraph_core::report();
    let ns = r
        .run
        .overhead_ns_per_section
        .expect("the cost is measured at start-up");
    let cheapest = per_section.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        ns <= 2.0 * cheapest,
        "the footer says {ns} ns a section; the threads measured {per_section:?}"
    );
    let text = r.to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("Instrumentation: "))
        .unwrap_or_else(|| panic!("no footer line:\n{text}"));
    let share: f64 = line
        .rsplit_once('(')
        .and_then(|(_, s)| s.split_once('%'))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no share in {line:?}"));
    assert!(share > 0.0 && share <= 100.0, "{line}");
    assert!(
        line.ends_with("% of the recording threads' CPU time)"),
        "{line}"
    );
    assert!(
        line.contains(&format!("over {} calls", THREADS as u64 * CALLS)),
        "{line}"
    );
}
