//! Causal profiling's CPU-time timer: a thread that spins for a while without any perfgraph call still
//! pays the delays the experiments insert (the profile's `ticked`), as coz's sampling timer makes it; and
//! it is interrupted only by its own timer, whose handler leaves `errno` as it found it.
//!
//! The test runs itself as a child (`CAUSAL_TIMER_CHILD=1`) with the mode on: a thread runs the sped-up
//! section (`selected`, sleeping), a thread ends a progress section every 2 ms (`tick`), and a thread
//! enters one section and then spins, checking `errno`, for 600 ms.

mod common;

use std::time::{Duration, Instant};

use perfgraph_core::time_section;

fn child() {
    let selected = std::thread::spawn(|| {
        let until = Instant::now() + Duration::from_millis(700);
        while Instant::now() < until {
            time_section!("selected");
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let ticks = std::thread::spawn(|| {
        let until = Instant::now() + Duration::from_millis(700);
        while Instant::now() < until {
            time_section!("tick");
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let spinner = std::thread::spawn(|| {
        {
            time_section!("spin_start");
        }
        // errno set by the program must survive the timer's ticks.
        // SAFETY: `__errno_location` is this thread's errno.
        unsafe { *libc::__errno_location() = 4242 };
        let start = Instant::now();
        let mut spins = 0u64;
        while start.elapsed() < Duration::from_millis(600) {
            spins = std::hint::black_box(spins + 1);
            // SAFETY: as above.
            assert_eq!(unsafe { *libc::__errno_location() }, 4242, "errno changed");
        }
        spins
    });
    selected.join().unwrap();
    ticks.join().unwrap();
    assert!(spinner.join().unwrap() > 0);
}

#[test]
fn a_thread_without_perfgraph_calls_pays_at_its_timer_ticks() {
    if std::env::var_os("CAUSAL_TIMER_CHILD").is_some() {
        child();
        return;
    }
    let dir = common::scratch::scratch("causal-timer");
    let profile = dir.to_path_buf().join("profile.coz");
    let out = common::child_command(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_thread_without_perfgraph_calls_pays_at_its_timer_ticks",
            "--nocapture",
        ])
        .env("CAUSAL_TIMER_CHILD", "1")
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAUSAL", &profile)
        .env("PERFGRAPH_CAUSAL_SECTIONS", "selected")
        .env("PERFGRAPH_CAUSAL_PROGRESS", "tick")
        .env("PERFGRAPH_CAUSAL_SPEEDUPS", "50")
        .env("PERFGRAPH_CAUSAL_EXPERIMENT", "0.05")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&profile).unwrap();
    let ticked: u64 = text
        .lines()
        .filter(|l| l.starts_with("experiment\t"))
        .filter_map(|l| l.split('\t').find_map(|f| f.strip_prefix("ticked=")))
        .map(|v| v.parse::<u64>().unwrap())
        .sum();
    assert!(ticked > 0, "no delay paid at a timer tick:\n{text}");
}
