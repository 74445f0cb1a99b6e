//! The streamed trace end to end, in child processes (this test binary, with `TRACE_CHILD` set):
//! - a Perfetto protobuf trace of the `workload` example, decoded by Perfetto's own Python classes
//!   (`tests/perfetto/check_trace.py`, with the `perfetto` and `protobuf` packages from PyPI: the Python
//!   named by `PERFETTO_CHECK_PYTHON`, as `.ci/run` sets it up, else a `python3` that has them, else the
//!   check is skipped with a line saying so); the same run's bytes framed as whole packets;
//! - live print's lines as instant events in the Chrome trace;
//! - timed futures' lives (finished and cancelled) and `tracing` events in both formats: async `b`/`e`
//!   events with the future's id and instant events in Chrome JSON, a track per future and instant events
//!   on the thread's track in protobuf (checked by Perfetto's classes); the process's identity (rank, host,
//!   wall-clock anchor) in both, and the per-thread CPU counters;
//! - a full disk (`/dev/full`): one warning line, and the run goes on; a real one (a small tmpfs) at the
//!   header and mid-run: no file and the previous one kept, or a valid trace up to what it holds;
//! - a thread that records through the exit: every call that ended before the trace's end is in it or
//!   counted lost;
//! - runs killed with SIGKILL in the middle, six of each format (protobuf with raw packets, deflated
//!   bundles and both): each trace is under the name asked for, with no temporary file left beside it, and
//!   holds whole events to its last byte (Chrome JSON lines each a whole event or padding, an array
//!   without its `]`; protobuf whole packets), wherever the kill landed, even inside a write (the kernel
//!   stops a write only at a page boundary, and no event crosses one);
//! - a previous trace at that name, replaced as the run starts in one step: the name always holds a file,
//!   the old one or the new one starting with its header.

mod common;
#[path = "trace_stream/cut.rs"]
mod cut;
#[path = "trace_stream/formats.rs"]
mod formats;
#[path = "../examples/workload.rs"]
mod workload;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use workload::{CHUNKS, ITERATIONS, RESIDUALS, TOTAL_CALLS};

/// The spinner's calls so far (`through_exit`).
static SPINS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Set by the exit handler registered after perfgraph's (so run before it): the exit has begun.
static EXITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Calls the spinner makes once the exit has begun, during perfgraph's final pass: `THROUGH_EXIT_TAIL`.
fn tail() -> u64 {
    std::env::var("THROUGH_EXIT_TAIL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
}

/// A tree 3^`depth` leaves wide, for a final pass whose reports take a while (on the manual clock, each
/// section 1 ns longer than what it holds).
fn wide(depth: u32) {
    if depth == 0 {
        return;
    }
    {
        perfgraph_core::time_section!("a");
        perfgraph_core::__test_hooks::advance_clock(1);
        wide(depth - 1);
        perfgraph_core::__test_hooks::advance_clock(1);
    }
    {
        perfgraph_core::time_section!("b");
        perfgraph_core::__test_hooks::advance_clock(1);
        wide(depth - 1);
        perfgraph_core::__test_hooks::advance_clock(1);
    }
    {
        perfgraph_core::time_section!("c");
        perfgraph_core::__test_hooks::advance_clock(1);
        wide(depth - 1);
        perfgraph_core::__test_hooks::advance_clock(1);
    }
}
/// The manual clock's reading when the runtime starts (`through_exit`): its ticks are nanoseconds.
const CLOCK_START: u64 = 1_000_000;

extern "C" fn exiting() {
    // Release: pairs with the spinner's Acquire load.
    EXITING.store(true, std::sync::atomic::Ordering::Release);
}

/// A thread that records through the exit: `main` returns while it spins on a section. On a manual clock
/// that only the spinner moves (1 ns in each call), so the time of every call is known. When the
/// exit begins it makes [`tail`] more calls, moves the clock once more, and writes `<total> <ns>` to
/// `THROUGH_EXIT_TOTAL`: its calls, and the trace time by which all of them had ended.
fn through_exit() {
    use std::sync::atomic::Ordering::{Acquire, Relaxed};
    perfgraph_core::__test_hooks::fake_clock(CLOCK_START);
    // perfgraph starts here and registers its exit handler; ours, registered after it, runs before it.
    {
        perfgraph_core::time_section!("main_start");
        perfgraph_core::__test_hooks::advance_clock(1);
    }
    wide(8);
    // SAFETY: a plain `extern "C" fn()` valid for the whole process.
    assert_eq!(unsafe { libc::atexit(exiting) }, 0);
    let tail = tail();
    let total_file = std::env::var("THROUGH_EXIT_TOTAL").unwrap();
    // Each call 1 ns long (slices of no length would tie their own begin and end).
    let spin = || {
        perfgraph_core::time_section!("spin");
        perfgraph_core::__test_hooks::advance_clock(1);
        SPINS.fetch_add(1, Relaxed);
    };
    std::thread::Builder::new()
        .name("spinner".into())
        .spawn(move || {
            loop {
                if EXITING.load(Acquire) {
                    for _ in 0..tail {
                        spin();
                    }
                    perfgraph_core::__test_hooks::advance_clock(1);
                    let done_ns = perfgraph_core::__test_hooks::clock_now() - CLOCK_START;
                    let total = SPINS.load(Relaxed);
                    std::fs::write(&total_file, format!("{total} {done_ns}")).unwrap();
                    loop {
                        std::thread::park();
                    }
                }
                spin();
            }
        })
        .unwrap();
    while SPINS.load(Relaxed) < 20_000 {
        std::thread::yield_now();
    }
}

#[test]
fn child_entry() {
    match std::env::var("TRACE_CHILD").as_deref() {
        Ok("workload") => {
            workload::run();
        }
        Ok("endless") => endless(),
        Ok("async") => futures(),
        Ok("through_exit") => through_exit(),
        Ok("args") => with_args(),
        Ok("fat_args") => fat_args(),
        Ok("locks") => locks(),
        _ => {}
    }
}

#[perfgraph_core::timed(args(tile, mesh), live = "Refining tile {tile} of {mesh}")]
fn refine(tile: u32, mesh: &str) -> u32 {
    perfgraph_core::time_section!(
        "load",
        args(
            bytes = tile as u64 * 1000,
            path = Path::new("/data/m.exo").display(),
            level = -1i8
        )
    );
    perfgraph_core::event!(
        "checkpoint written",
        args(tile, ok = tile.is_multiple_of(2), ratio = 0.25)
    );
    perfgraph_core::counter!("residual", 1.0 / f64::from(tile + 1));
    tile
}

#[perfgraph_core::timed(args(url))]
async fn download(url: String) -> usize {
    url.len()
}

/// Waits until `lock` has `n` threads waiting for it.
fn until_waiting<T>(lock: &perfgraph_core::sync::Mutex<T>, n: u32) {
    while lock.waiting() < n {
        std::thread::yield_now();
    }
}

/// Two locks with a known schedule. `handover`: the test's thread (`child_entry`) holds it while `w1`, `w2` and `w3` all
/// wait, then lets go (three waits naming it). `chain`: `a` holds it while `b` waits; `a` lets go,
/// and `b`, holding it, waits until `c` waits, then lets go (`b`'s wait names `a`, `c`'s names `b`).
fn locks() {
    use perfgraph_core::sync::Mutex;
    use std::sync::{Arc, mpsc};
    let handover = Arc::new(Mutex::new("handover", 0u32));
    let held = handover.lock().unwrap();
    let workers: Vec<_> = (1..=3)
        .map(|i| {
            let lock = Arc::clone(&handover);
            std::thread::Builder::new()
                .name(format!("w{i}"))
                .spawn(move || *lock.lock().unwrap() += 1)
                .unwrap()
        })
        .collect();
    until_waiting(&handover, 3);
    drop(held);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(*handover.lock().unwrap(), 3);

    let chain = Arc::new(Mutex::new("chain", ()));
    let (a_holds, a_held) = mpsc::channel();
    let (let_a_go, a_may_go) = mpsc::channel::<()>();
    let a = {
        let lock = Arc::clone(&chain);
        std::thread::Builder::new()
            .name("a".into())
            .spawn(move || {
                let g = lock.lock().unwrap();
                a_holds.send(()).unwrap();
                a_may_go.recv().unwrap();
                drop(g);
            })
            .unwrap()
    };
    a_held.recv().unwrap();
    let b = {
        let lock = Arc::clone(&chain);
        std::thread::Builder::new()
            .name("b".into())
            .spawn(move || {
                let g = lock.lock().unwrap();
                // `c` waits for `b` before `b` lets go.
                until_waiting(&lock, 1);
                drop(g);
            })
            .unwrap()
    };
    until_waiting(&chain, 1);
    let_a_go.send(()).unwrap();
    a.join().unwrap();
    // `b` holds it now (it waited, so nobody else could take it first): `c` waits for `b`.
    while chain.waiting() > 0 {
        std::thread::yield_now();
    }
    let c = {
        let lock = Arc::clone(&chain);
        std::thread::Builder::new()
            .name("c".into())
            .spawn(move || drop(lock.lock().unwrap()))
            .unwrap()
    };
    b.join().unwrap();
    c.join().unwrap();
}

/// Events with eight text args each at the longest a text arg keeps, all of it escaped in JSON (quotes and
/// control characters), under a small `PERFGRAPH_TRACE_LIMIT`.
fn fat_args() {
    let fat = "\"\u{1}".repeat(200);
    for i in 0..200u32 {
        perfgraph_core::event!(
            "fat",
            args(
                a_fairly_long_argument_name_number_one = fat,
                b = fat,
                c = fat,
                d = fat,
                e = fat,
                f = fat,
                g = fat,
                i
            )
        );
    }
}

/// Section args (integers, floats, bools, text, a name perfgraph uses itself), a future's, events.
fn with_args() {
    for tile in 0..3 {
        refine(tile, "mesh-A");
    }
    let f = download("https://example.org/x".to_owned());
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(f.as_mut().poll(&mut cx).is_ready());
    perfgraph_core::event!("done");
    // Two threads contending a lock: `contender` waits while this thread holds it.
    let lock = std::sync::Arc::new(perfgraph_core::sync::Mutex::new("results", 0u32));
    let held = lock.lock().unwrap();
    let contender = {
        let lock = std::sync::Arc::clone(&lock);
        std::thread::Builder::new()
            .name("contender".into())
            .spawn(move || *lock.lock().unwrap() += 1)
            .unwrap()
    };
    until_waiting(&lock, 1);
    drop(held);
    contender.join().unwrap();
}

#[perfgraph_core::timed(level = 1)]
fn leaf(i: u64) -> u64 {
    std::hint::black_box(i)
}

/// Records sections until killed: bursts of a thousand short calls, then a short sleep.
fn endless() {
    perfgraph_core::time_section!("endless");
    let mut i = 0u64;
    loop {
        for _ in 0..1000 {
            i = leaf(i + 1);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[perfgraph_core::timed(level = 0, cpu)]
async fn fetch(n: u32) -> u32 {
    for _ in 0..n {
        tokio::task::yield_now().await;
    }
    n
}

#[tracing::instrument]
fn lookup() {
    tracing::info!("cache miss");
}

/// Two timed futures that complete, one dropped before it does, and a `tracing` event inside a span; the
/// CPU counters need a memory sample or two, so it runs a little while.
fn futures() {
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber = tracing_subscriber::registry().with(perfgraph_core::TracingLayer::default());
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        assert_eq!(fetch(3).await + fetch(2).await, 5);
        let cancelled = tokio::time::timeout(
            Duration::from_millis(5),
            perfgraph_core::time_future!("never done", std::future::pending::<()>(), level = 0),
        );
        assert!(cancelled.await.is_err());
    });
    lookup();
    perfgraph_core::time_section!("busy", cpu);
    // 300 ms of this thread's CPU time, however long that takes on a busy machine (other tests' children),
    // so the background thread samples it a few times.
    let start = Instant::now();
    let mut i = 0u64;
    while thread_cpu() < Duration::from_millis(300) && start.elapsed() < Duration::from_secs(20) {
        i = leaf(i + 1);
    }
}

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A fresh directory for one test, removed when dropped.
fn fresh_dir(tag: &str) -> common::Scratch {
    common::scratch(&format!("trace-{tag}"))
}

fn child(mode: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("TRACE_CHILD", mode)
        .env("PERFGRAPH_LIVE", "off")
        .env("PERFGRAPH_CAPTURE", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The Python that can run `check_trace.py`, if any.
fn python() -> Option<String> {
    let candidates = std::env::var("PERFETTO_CHECK_PYTHON")
        .ok()
        .into_iter()
        .chain(["python3".to_owned()]);
    for python in candidates {
        let ok = Command::new(&python)
            .args([
                "-c",
                "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
            ])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(python);
        }
        assert!(
            std::env::var("PERFETTO_CHECK_PYTHON").ok().as_ref() != Some(&python),
            "PERFETTO_CHECK_PYTHON={python} cannot import perfetto's classes"
        );
    }
    None
}

/// What `check_trace.py` found in `path`, or `None` when no Python can run it.
fn decode_with_perfetto(path: &Path, partial: bool) -> Option<Value> {
    let Some(python) = python() else {
        // To the process's stderr itself (`eprintln!` is captured by the test harness): visible.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: the Perfetto check is skipped: no Python with the `perfetto` and `protobuf` packages \
             (set PERFETTO_CHECK_PYTHON; .ci/run does)"
        );
        return None;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto/check_trace.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(path);
    if partial {
        cmd.arg("--partial");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "check_trace.py failed on {}:\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The file is a sequence of whole `Trace.packet` fields (tag 0x0a, length, bytes) to its last byte, but
/// for a cut last one when `partial`: returns how many are whole and the length they take.
fn whole_packets(bytes: &[u8], partial: bool) -> (usize, usize) {
    let mut at = 0;
    let mut packets = 0;
    while at < bytes.len() {
        let start = at;
        assert_eq!(bytes[at], 0x0a, "a Trace.packet field at byte {at}");
        at += 1;
        let (mut len, mut shift) = (0usize, 0);
        loop {
            let Some(&b) = bytes.get(at) else {
                assert!(partial, "packet at byte {start} is cut off");
                return (packets, start);
            };
            at += 1;
            len |= ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        if at + len > bytes.len() {
            assert!(partial, "packet at byte {start} is cut off");
            return (packets, start);
        }
        at += len;
        packets += 1;
    }
    (packets, at)
}

/// Every 4 KB page boundary of the Perfetto file `bytes` lies between two packets (what makes a cut by a
/// kill or a power loss, which the kernel makes only there, leave whole packets).
fn pages_hold_whole_packets(bytes: &[u8]) {
    let mut at = 0;
    let mut starts = std::collections::HashSet::new();
    while at < bytes.len() {
        starts.insert(at);
        // The first packet's length: its tag, its varint length and its bytes.
        let mut len = 0usize;
        let mut i = 1;
        let mut shift = 0;
        loop {
            let b = bytes[at + i];
            i += 1;
            len |= ((b & 0x7f) as usize) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        at += i + len;
    }
    for page in (4096..bytes.len()).step_by(4096) {
        assert!(
            starts.contains(&page),
            "a packet crosses the page boundary at {page}"
        );
    }
}

/// Every 4 KB page boundary of the Chrome file `text` is at the start of a line.
fn pages_hold_whole_lines(text: &str) {
    for page in (4096..text.len()).step_by(4096) {
        assert_eq!(
            text.as_bytes()[page - 1],
            b'\n',
            "a line crosses the page boundary at {page}"
        );
    }
}

/// The workload traced to `path` with live print on and a time limit `solve` runs past.
fn workload_with_live_print(path: &Path, compress: &str) -> std::process::Output {
    child(
        "workload",
        &[
            ("PERFGRAPH_TRACE", path.to_str().unwrap()),
            ("PERFGRAPH_TRACE_COMPRESS", compress),
            ("PERFGRAPH_LIVE", "on"),
            // `solve` lasts 0.2 s at least (1000 residuals of 0.2 ms): past this limit, so it is printed.
            ("PERFGRAPH_TIME_LIMIT", "0.05"),
        ],
    )
    .output()
    .unwrap()
}
