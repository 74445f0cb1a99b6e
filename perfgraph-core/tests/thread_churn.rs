//! Threads that come and go: 10,000 short threads, 8 at a time, 5 sections each, in a child process. Each
//! exited thread is folded into its name's tree and its state and ring go back, so the child's peak
//! resident set stays near that of the same program with `PERFGRAPH_VERBOSITY=off` (read by the parent
//! from `wait4`'s `ru_maxrss`), its wall time too (a generous ratio: it catches a regression, it is no
//! benchmark), and the counts are exact. The same churn runs under `ulimit -v 4000000` (an address-space
//! limit HPC batch systems set), and threads that find no memory at all for their ring still count exactly.
//!
//! `THREAD_CHURN_N=100000 cargo test --release -p perfgraph-core --test thread_churn -- --nocapture` runs
//! the full-size figure.

mod common;

use std::process::Stdio;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use perfgraph_core::time_section;

const THREADS: usize = 10_000;
const AT_ONCE: usize = 8;

/// `ulimit -v 4000000`: the address-space limit, in KiB, of the limited run.
const LIMIT_KB: u64 = 4_000_000;

fn size() -> usize {
    std::env::var("THREAD_CHURN_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(THREADS)
}

fn work() {
    for _ in 0..5 {
        time_section!("churn::step");
        std::hint::black_box(0);
    }
}

/// Caps the address space at `kb` KiB (`setrlimit(RLIMIT_AS)`, what `ulimit -v` sets).
fn limit_address_space(kb: u64) {
    let limit = libc::rlimit {
        rlim_cur: kb * 1024,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: `limit` is a valid `rlimit` for the duration of the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
}

/// The process's address space now, in KiB.
fn address_space_kb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split(' ').next().unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64 / 1024
}

/// The child's work: `THREAD_CHURN_CHILD` set. `THREAD_CHURN_LIMIT_KB` caps the address space first;
/// `THREAD_CHURN_NO_RINGS` runs `no_rings` instead of the churn.
#[test]
fn child_entry() {
    if std::env::var_os("THREAD_CHURN_CHILD").is_none() {
        return;
    }
    if std::env::var_os("THREAD_CHURN_NO_RINGS").is_some() {
        return no_rings();
    }
    let n = size();
    if let Some(kb) = std::env::var("THREAD_CHURN_LIMIT_KB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        limit_address_space(kb);
    }
    let mut spawned = 0;
    while spawned < n {
        let batch: Vec<_> = (spawned..n.min(spawned + AT_ONCE))
            .map(|_| {
                std::thread::Builder::new()
                    .name("churn-worker".into())
                    .stack_size(64 * 1024)
                    .spawn(work)
                    .unwrap()
            })
            .collect();
        spawned += batch.len();
        for h in batch {
            h.join().unwrap();
        }
    }
    // The peak address space, for the parent (`VmPeak`, what `ulimit -v` caps).
    if let Some(peak) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmPeak:"))
                .map(str::to_owned)
        })
    {
        eprintln!("churn {peak}");
    }
}

/// `AT_ONCE` threads are started and wait (their stacks and std's alternate signal stacks mapped), then the
/// address space is capped a little above what is mapped: room for the threads' small allocations (one
/// malloc arena, `MALLOC_ARENA_MAX=1`, so none of them has a 64 MiB arena reserved to carve a ring from;
/// each thread's one call path takes a 30 KiB latency histogram), none for a 320 KiB ring. Then each records, and the cap is lifted for the exit.
fn no_rings() {
    // The runtime first (its own thread, the main thread's ring), and the background thread's first passes
    // with the start-up measurement of the instrumentation's cost, a round after each, which allocates. Two
    // passes counted, not the cost alone: the background thread measures the cost before it builds its
    // state (some 700 KiB of buffers), and a busy machine can hold it off the cores in between, past the
    // limit below (the child then died of that allocation: 2 CI runs of 3 at load 6).
    perfgraph_core::threads();
    let start = std::time::Instant::now();
    while (perfgraph_core::report()
        .run
        .overhead_ns_per_section
        .is_none()
        || perfgraph_core::__test_hooks::passes() < 2)
        && start.elapsed() < std::time::Duration::from_secs(30)
    {
        perfgraph_core::__test_hooks::wake_background();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let ready = Arc::new(Barrier::new(AT_ONCE + 1));
    let go = Arc::new(Barrier::new(AT_ONCE + 1));
    let threads: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let (ready, go) = (Arc::clone(&ready), Arc::clone(&go));
            std::thread::Builder::new()
                .name("churn-worker".into())
                .stack_size(64 * 1024)
                .spawn(move || {
                    ready.wait();
                    go.wait();
                    work();
                })
                .unwrap()
        })
        .collect();
    ready.wait();
    limit_address_space(address_space_kb() + 256);
    go.wait();
    for t in threads {
        t.join().unwrap();
    }
    limit_address_space(libc::RLIM_INFINITY / 1024);
}

struct Run {
    stderr: String,
    max_rss_kb: i64,
    secs: f64,
    json: Option<serde_json::Value>,
}

fn run_child(env: &[(&str, &str)], json: bool) -> Run {
    let tag: String = env
        .iter()
        .map(|(k, _)| k.chars().last().unwrap_or('_'))
        .collect();
    // A directory per run: tests run at once in this process, some with the same tag.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::scratch(&format!("churn-{tag}-{n}"));
    let path = dir.join("tree.json");
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("THREAD_CHURN_CHILD", "1")
        .env("THREAD_CHURN_N", size().to_string())
        .env("PERFGRAPH_LIVE", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if json {
        cmd.env("PERFGRAPH_JSON", &path)
            .env("PERFGRAPH_REPORT", "threads");
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    #[expect(clippy::zombie_processes, reason = "reaped by `wait4` below")]
    let mut child = cmd.spawn().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let mut status = 0;
    // SAFETY: all-zero bytes are a valid `rusage`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child` is our own child, not yet reaped; `status` and `usage` are valid for writes.
    let reaped = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(reaped, child.id() as libc::pid_t);
    let secs = start.elapsed().as_secs_f64();
    assert!(status == 0, "child failed ({status:#x}): {stderr}");
    let json =
        json.then(|| serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap());
    Run {
        stderr,
        max_rss_kb: usage.ru_maxrss,
        secs,
        json,
    }
}

fn check_counts(run: &Run, n: usize) {
    let n = n as u64;
    let json = run.json.as_ref().unwrap();
    let tree = json["tree"].as_array().unwrap();
    let step = tree.iter().find(|t| t["name"] == "churn::step").unwrap();
    assert_eq!(step["calls"], 5 * n);
    let threads = json["threads"].as_array().unwrap();
    let group = threads
        .iter()
        .find(|t| t["name"] == format!("churn-worker ×{n}"))
        .unwrap_or_else(|| panic!("{threads:?}"));
    assert_eq!(group["calls"], 5 * n);
    assert_eq!(group["exited"], true);
    assert!(
        run.stderr.contains(&format!("churn-worker ×{n}")),
        "{}",
        run.stderr
    );
}

#[test]
fn churned_threads_cost_little_memory_and_time() {
    let off = run_child(&[("PERFGRAPH_VERBOSITY", "off")], false);
    let on = run_child(&[], true);
    // One line `benches/run.sh` reads for docs/performance.md.
    eprintln!(
        "churn: threads {} on_kib {} on_s {:.3} off_kib {} off_s {:.3}",
        size(),
        on.max_rss_kb,
        on.secs,
        off.max_rss_kb,
        off.secs
    );
    check_counts(&on, size());
    // Generous bounds: every state kept (the old way) cost about 19 KiB per thread, ~190 MB at 10,000
    // threads. A quiet machine shows about 2 KiB per thread; a loaded one more, transiently (the background
    // thread, short of CPU, folds exited threads later: 68 MB more at load average 7).
    let allowed_kb = off.max_rss_kb + 12 * size() as i64 + 16 * 1024;
    assert!(
        on.max_rss_kb <= allowed_kb,
        "{} KiB vs {} KiB",
        on.max_rss_kb,
        off.max_rss_kb
    );
    assert!(
        on.secs <= 5.0 * off.secs + 5.0,
        "{:.2} s vs {:.2} s",
        on.secs,
        off.secs
    );
}

#[test]
fn churn_under_ulimit_v_4000000_finishes() {
    let limit = LIMIT_KB.to_string();
    let run = run_child(&[("THREAD_CHURN_LIMIT_KB", limit.as_str())], true);
    check_counts(&run, size());
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    // One line `benches/run.sh` reads for docs/performance.md (printed once the counts are checked).
    eprintln!(
        "churn limited: threads {} limit_kib {LIMIT_KB} on_kib {} on_s {:.3}",
        size(),
        run.max_rss_kb,
        run.secs
    );
}

/// The child's peak address space, KiB (its `VmPeak` line).
fn vm_peak_kb(run: &Run) -> u64 {
    run.stderr
        .lines()
        .find_map(|l| l.strip_prefix("churn VmPeak:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmPeak line: {}", run.stderr))
}

/// `ulimit -v 1000000` with a trace: each thread's ring is then 10 MiB, and the pool of rings, and the
/// rings of exited threads waiting to be folded, must stay within what the live threads need. The churn
/// finishes with exact counts, every thread has a ring (a new one waits for an exited one's), and its peak
/// address space stays under twice the run without recording plus 200 MB.
#[test]
fn churn_with_a_trace_under_ulimit_v_1000000_finishes() {
    const TRACED_LIMIT_KB: u64 = 1_000_000;
    let dir = common::scratch("churn-trace");
    let trace = dir.join("churn.pftrace");
    // Two malloc arenas: glibc reserves 64 MiB of address space for each (up to 8 a core), which left
    // alone takes 824 MB of this limit without any recording, and no room for a ring whatever perfgraph
    // does; what is measured here is perfgraph's own use.
    let off = run_child(
        &[("PERFGRAPH_VERBOSITY", "off"), ("MALLOC_ARENA_MAX", "2")],
        false,
    );
    let limit = TRACED_LIMIT_KB.to_string();
    let run = run_child(
        &[
            ("THREAD_CHURN_LIMIT_KB", limit.as_str()),
            ("PERFGRAPH_TRACE", trace.to_str().unwrap()),
            ("MALLOC_ARENA_MAX", "2"),
        ],
        true,
    );
    drop(dir);
    check_counts(&run, size());
    assert!(!run.stderr.contains("memory allocation"), "{}", run.stderr);
    // No thread went without a ring: each new one reuses an exited one's (8 live threads need 80 MiB of
    // rings; those of exited threads not folded yet took the rest, and 18,378 of 100,000 had none).
    assert!(
        !run.stderr.contains("out of memory for a thread's ring"),
        "{}",
        run.stderr
    );
    let (on, off) = (vm_peak_kb(&run), vm_peak_kb(&off));
    // One line `benches/run.sh` can read for docs/performance.md.
    eprintln!(
        "churn traced: threads {} limit_kib {TRACED_LIMIT_KB} vm_peak_kib {on} off_vm_peak_kib {off} on_s {:.3}",
        size(),
        run.secs
    );
    assert!(
        on <= 2 * off + 200_000,
        "peak address space {on} KiB with a trace, {off} KiB without recording"
    );
}

#[test]
fn threads_without_memory_for_a_ring_count_exactly() {
    let run = run_child(
        &[("THREAD_CHURN_NO_RINGS", "1"), ("MALLOC_ARENA_MAX", "1")],
        true,
    );
    check_counts(&run, AT_ONCE);
    assert!(!run.stderr.contains("memory allocation"), "{}", run.stderr);
    let warnings: Vec<_> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(
        warnings[0].contains("out of memory for a thread's ring"),
        "{}",
        run.stderr
    );
}
