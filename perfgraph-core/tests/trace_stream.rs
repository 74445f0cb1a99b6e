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

#[test]
fn a_perfetto_trace_reads_back_with_perfettos_own_classes() {
    // Raw packets, and packets deflated in `compressed_packets` bundles.
    for compress in ["off", "on"] {
        perfetto_trace_reads_back(compress);
    }
}

fn perfetto_trace_reads_back(compress: &str) {
    let dir = fresh_dir(&format!("pftrace-{compress}"));
    let path = dir.join("run.pftrace");
    let out = workload_with_live_print(&path, compress);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bytes = std::fs::read(&path).unwrap();
    let (packets, _) = whole_packets(&bytes, false);
    if compress == "off" {
        assert!(packets as u64 > 2 * TOTAL_CALLS);
    } else {
        // Bundles of a few hundred calls each.
        assert!((packets as u64) < TOTAL_CALLS, "{packets} packets");
    }
    pages_hold_whole_packets(&bytes);
    // Nothing else is left in the directory: the temporary file took the name.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    if let Some(t) = decode_with_perfetto(&path, false) {
        if compress == "on" {
            assert!(t["compressed"].as_u64().unwrap() > 0, "{t}");
            // Most calls are in bundles; a drain that found too few packets for one writes them raw, which
            // depends on when drains happen. Every call is there either way (`calls` below).
            assert!(t["inflated_packets"].as_u64().unwrap() > 0, "{t}");
        } else {
            assert_eq!(t["compressed"], 0, "{t}");
        }
        assert_eq!(t["calls"], TOTAL_CALLS, "{t}");
        assert_eq!(t["names"]["residual"], ITERATIONS * RESIDUALS);
        assert_eq!(t["names"]["write_chunk"], CHUNKS);
        // Nesting kept: run > solve > residual on the main thread, write_output > write_chunk on the other.
        assert_eq!(t["threads"]["child_entry"], 3, "{t}");
        assert_eq!(t["threads"]["io-worker"], 2, "{t}");
        assert_eq!(t["sections"]["solve"]["message"], "Solving");
        assert_eq!(t["sections"]["solve"]["category"], "level 0");
        assert_eq!(t["sections"]["residual"]["category"], "level 1");
        assert!(t["memory_samples"].as_u64().unwrap() >= 2, "{t}");
        let markers = t["markers"].as_array().unwrap();
        assert!(
            markers
                .iter()
                .any(|m| m.as_str().unwrap().ends_with(" Solving")),
            "{t}"
        );
        assert_eq!(t["end"]["events"], TOTAL_CALLS);
        assert_eq!(t["end"]["dropped_ring_overflow"], 0);
        assert!(
            t["process"][0]["process"]
                .as_str()
                .unwrap()
                .starts_with("trace_stream")
        );
    }
}

#[test]
fn live_print_lines_are_instant_events_in_the_chrome_trace() {
    let dir = fresh_dir("markers");
    let path = dir.join("trace.json");
    let out = workload_with_live_print(&path, "auto");
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    pages_hold_whole_lines(&text);
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let markers: Vec<&str> = events
        .iter()
        .filter(|e| e["cat"] == "live print")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Each line as printed, without colours and padding: the thread's prefix, the message, the figures.
    assert!(markers.contains(&"child_entry: Solving"), "{markers:?}");
    assert!(
        markers
            .iter()
            .any(|m| m.starts_with("child_entry: Finished run [") && m.ends_with(" MB]")),
        "{markers:?}"
    );
}

#[test]
fn args_and_events_are_in_both_formats() {
    let dir = fresh_dir("args");
    let json = dir.join("args.json");
    let out = child("args", &[("PERFGRAPH_TRACE", json.to_str().unwrap())])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let find =
        |name: &str| -> Vec<&Value> { events.iter().filter(|e| e["name"] == name).collect() };
    let refine = find("refine");
    assert_eq!(refine.len(), 3);
    for (tile, e) in refine.iter().enumerate() {
        assert_eq!(e["args"]["tile"], tile);
        assert_eq!(e["args"]["mesh"], "mesh-A");
    }
    assert_eq!(
        find("load")[2]["args"],
        serde_json::json!({"level": 1, "bytes": 2000, "path": "/data/m.exo", "arg.level": -1})
    );
    let checkpoints = find("checkpoint written");
    assert_eq!(checkpoints.len(), 3);
    assert_eq!(checkpoints[1]["ph"], "i");
    assert_eq!(
        checkpoints[1]["args"],
        serde_json::json!({"tile": 1, "ok": false, "ratio": 0.25})
    );
    assert_eq!(find("done")[0]["args"], serde_json::json!({}));
    let residual: Vec<&Value> = find("residual");
    assert_eq!(residual.len(), 3);
    assert_eq!(residual[1]["ph"], "C");
    assert_eq!(residual[1]["args"]["residual"], 0.5);
    // The contended lock: a wait naming the holder, two holds, the hand-over.
    let wait = find("wait: results");
    assert_eq!(wait.len(), 1);
    assert_eq!(wait[0]["args"]["holder"], "child_entry");
    assert_eq!(find("hold: results").len(), 2);
    assert_eq!(
        find("results")
            .iter()
            .map(|e| e["ph"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["s", "f"]
    );
    let download = find("download");
    let life = download.iter().find(|e| e["ph"] == "b").unwrap();
    assert_eq!(life["args"]["url"], "https://example.org/x");

    let pftrace = dir.join("args.pftrace");
    let out = child(
        "args",
        &[
            ("PERFGRAPH_TRACE", pftrace.to_str().unwrap()),
            ("PERFGRAPH_INTERVAL", "0.05"),
        ],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = decode_with_perfetto(&pftrace, false) {
        assert_eq!(d["sections"]["refine"]["tile"], 2);
        assert_eq!(d["sections"]["refine"]["mesh"], "mesh-A");
        assert_eq!(d["sections"]["load"]["bytes"], 2000);
        assert_eq!(d["sections"]["load"]["arg.level"], -1);
        assert_eq!(d["sections"]["load"]["path"], "/data/m.exo");
        assert_eq!(
            d["events"],
            serde_json::json!([
                ["checkpoint written", {"tile": 0, "ok": true, "ratio": 0.25}],
                ["checkpoint written", {"tile": 1, "ok": false, "ratio": 0.25}],
                ["checkpoint written", {"tile": 2, "ok": true, "ratio": 0.25}],
                ["done", {}]
            ])
        );
        assert_eq!(
            d["counters"]["residual"],
            serde_json::json!([1.0, 0.5, 1.0 / 3.0])
        );
        assert!(
            d["locks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l[0] == "contender" && l[1] == "wait: results" && l[2] == "child_entry"),
            "{d}"
        );
        assert_eq!(
            d["flows"],
            serde_json::json!([[
                "child_entry",
                "contender",
                "release: results",
                "acquire: results"
            ]])
        );
        // The interval statistics (at least the last interval, closed at exit) on the thread's tracks.
        let intervals = &d["intervals"]["child_entry"];
        let share = intervals["In sections %"]
            .as_array()
            .expect("the share track");
        assert!(
            share
                .iter()
                .all(|p| (0.0..=100.0).contains(&p.as_f64().unwrap())),
            "{intervals}"
        );
        assert_eq!(
            share.len(),
            intervals["Sections/s"].as_array().unwrap().len(),
            "{intervals}"
        );
        assert_eq!(
            d["future_args"],
            serde_json::json!([["download", {"url": "https://example.org/x"}]])
        );
    }
}

#[test]
fn events_with_the_longest_args_keep_the_limit_and_the_page_rule() {
    let dir = fresh_dir("fat");
    let json = dir.join("fat.json");
    let out = child(
        "fat_args",
        &[
            ("PERFGRAPH_TRACE", json.to_str().unwrap()),
            ("PERFGRAPH_TRACE_LIMIT", "16384"),
        ],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).unwrap();
    pages_hold_whole_lines(&text);
    let closing = text
        .rfind("perfgraph trace end")
        .expect("the closing event");
    let before = text[..closing].rfind("\n{").unwrap();
    let kept = text[..before].trim_end_matches([',', '\n', ' ']).len();
    assert!(kept <= 16384, "{kept} bytes before the closing event");
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let fat: Vec<&Value> = events.iter().filter(|e| e["name"] == "fat").collect();
    assert!(
        !fat.is_empty() && fat.len() < 200,
        "{} of 200 written",
        fat.len()
    );
    let b = fat[0]["args"]["b"].as_str().unwrap();
    assert!(
        b.len() <= 192 && b.ends_with('…') && !b.contains('\u{1}'),
        "{b:?}"
    );
}

#[test]
fn lock_waits_holds_and_hand_overs_are_in_both_formats_and_the_report() {
    let dir = fresh_dir("locks");
    let json = dir.join("locks.json");
    let out = child(
        "locks",
        &[
            ("PERFGRAPH_TRACE", json.to_str().unwrap()),
            ("PERFGRAPH_REPORT", "locks"),
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The report: exact counts.
    let row = |name: &str| -> Vec<String> {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no {name} row in\n{stderr}"));
        line.split('|').map(|c| c.trim().to_owned()).collect()
    };
    // Lock | Acquisitions | Contended | Wait(s) | Max wait(ms) | Hold(s) | Max hold(ms) | Max waiters
    let handover = row("handover");
    assert_eq!(
        (&handover[2][..], &handover[3][..], &handover[8][..]),
        ("5", "3", "3"),
        "{stderr}"
    );
    let chain = row("chain");
    assert_eq!(
        (&chain[2][..], &chain[3][..], &chain[8][..]),
        ("3", "2", "1"),
        "{stderr}"
    );

    // Chrome: the waits with their holders, a hold per acquisition, a flow per hand-over.
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let thread_of = |tid: &Value| -> String {
        events
            .iter()
            .find(|e| e["name"] == "thread_name" && &e["tid"] == tid)
            .map_or("?".into(), |e| {
                e["args"]["name"].as_str().unwrap().to_owned()
            })
    };
    let mut waits: Vec<(String, String, String)> = events
        .iter()
        .filter(|e| {
            e["cat"] == "lock"
                && e["ph"] == "X"
                && e["name"].as_str().unwrap().starts_with("wait: ")
        })
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                thread_of(&e["tid"]),
                e["args"]["holder"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    waits.sort();
    // Every wait (by name), its thread and the holder it names: the same in both formats.
    let w = |l: &str, t: &str, h: &str| (format!("wait: {l}"), t.to_owned(), h.to_owned());
    let expected_waits = [
        w("chain", "b", "a"),
        w("chain", "c", "b"),
        w("handover", "w1", "child_entry"),
        w("handover", "w2", "child_entry"),
        w("handover", "w3", "child_entry"),
    ];
    assert_eq!(waits, expected_waits);
    let holds = events
        .iter()
        .filter(|e| {
            e["cat"] == "lock"
                && e["ph"] == "X"
                && e["name"].as_str().unwrap().starts_with("hold: ")
        })
        .count();
    assert_eq!(holds, 8);
    let starts = events
        .iter()
        .filter(|e| e["cat"] == "lock" && e["ph"] == "s")
        .count();
    let ends = events
        .iter()
        .filter(|e| e["cat"] == "lock" && e["ph"] == "f")
        .count();
    assert_eq!((starts, ends), (5, 5));

    // Perfetto, decoded by Perfetto's own classes.
    let pftrace = dir.join("locks.pftrace");
    let out = child("locks", &[("PERFGRAPH_TRACE", pftrace.to_str().unwrap())])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = decode_with_perfetto(&pftrace, false) {
        let mut waits: Vec<(String, String, String)> = d["locks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l[1].as_str().unwrap().starts_with("wait: "))
            .map(|l| {
                let s = |i: usize| l[i].as_str().unwrap_or("").to_owned();
                (s(1), s(0), s(2))
            })
            .collect();
        waits.sort();
        assert_eq!(waits, expected_waits, "{d}");
        let mut chain_flows: Vec<(String, String)> = d["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f[2] == "release: chain")
            .map(|f| {
                (
                    f[0].as_str().unwrap().to_owned(),
                    f[1].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        chain_flows.sort();
        assert_eq!(
            chain_flows,
            [
                ("a".to_owned(), "b".to_owned()),
                ("b".to_owned(), "c".to_owned())
            ],
            "{d}"
        );
        assert_eq!(d["flows"].as_array().unwrap().len(), 5, "{d}");
    }
}

#[test]
fn futures_events_and_identity_are_in_both_formats() {
    let dir = fresh_dir("async");
    let env = |path: &Path| {
        let out = child(
            "async",
            &[
                ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                ("PMI_RANK", "5"),
            ],
        )
        .output()
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // Chrome JSON; its name's placeholders are filled in.
    env(&dir.join("run.{rank}.json"));
    let text = std::fs::read_to_string(dir.join("run.5.json")).unwrap();
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let process = events.iter().find(|e| e["name"] == "process_name").unwrap();
    assert_eq!(process["args"]["tool"], "perfgraph");
    assert_eq!(process["args"]["rank"], 5);
    assert!(process["args"]["start_unix_ns"].as_u64().unwrap() > 1_600_000_000_000_000_000);
    assert!(process["args"]["host"].is_string());
    let phase = |ph: &str, name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == ph && e["name"] == name)
            .collect()
    };
    let (b, e) = (phase("b", "fetch"), phase("e", "fetch"));
    assert_eq!((b.len(), e.len()), (2, 2), "{text}");
    for (b, e) in b.iter().zip(&e) {
        assert_eq!(b["cat"], "async");
        assert_eq!(b["id"], e["id"]);
        assert!(b["ts"].as_f64() <= e["ts"].as_f64());
        assert_eq!(e["args"]["cancelled"], false);
    }
    assert_ne!(b[0]["id"], b[1]["id"]);
    let never = phase("e", "never done");
    assert_eq!(never.len(), 1, "{text}");
    assert_eq!(never[0]["args"]["cancelled"], true);
    let miss = phase("i", "cache miss");
    assert_eq!(miss.len(), 1, "{text}");
    assert_eq!(miss[0]["args"]["span"], "lookup");
    // Measured CPU time in the slices' args: `busy` (its `leaf` calls measure none, so self = inclusive)
    // and each poll of `fetch`.
    let busy = phase("X", "busy");
    assert_eq!(busy.len(), 1, "{text}");
    assert!(busy[0]["args"]["cpu_ns"].as_u64().unwrap() > 0, "{text}");
    assert_eq!(busy[0]["args"]["self_cpu_ns"], busy[0]["args"]["cpu_ns"]);
    let polls = phase("X", "fetch");
    assert!(
        !polls.is_empty() && polls.iter().all(|p| p["args"]["cpu_ns"].is_u64()),
        "{text}"
    );
    assert!(
        phase("X", "leaf")
            .iter()
            .all(|l| l["args"]["cpu_ns"].is_null())
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["name"].as_str().unwrap().starts_with("CPU child_entry")),
        "no CPU counter: {text}"
    );
    // Perfetto protobuf.
    let path = dir.join("run.pftrace");
    env(&path);
    if let Some(t) = decode_with_perfetto(&path, false) {
        let futures = t["futures"].as_array().unwrap();
        let named = |name: &str| futures.iter().filter(|f| f[0] == name).count();
        assert_eq!((named("fetch"), named("never done")), (2, 1), "{t}");
        assert!(t["sections"]["busy"]["cpu_ns"].as_u64().unwrap() > 0, "{t}");
        assert!(t["sections"]["busy"]["self_cpu_ns"].is_u64(), "{t}");
        assert!(t["sections"]["fetch"]["cpu_ns"].is_u64(), "{t}");
        assert!(
            futures.iter().any(|f| f[0] == "never done" && f[2] == true),
            "{t}"
        );
        assert!(
            futures.iter().any(|f| f[0] == "fetch" && f[2] == false),
            "{t}"
        );
        assert_eq!(
            t["instants"],
            serde_json::json!([["cache miss", "lookup"]]),
            "{t}"
        );
        let labels = &t["process"][0]["labels"];
        assert_eq!(labels[0], "rank=5", "{t}");
        assert!(
            labels
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().unwrap().starts_with("start_unix_ns=")),
            "{t}"
        );
        assert!(t["cpu"]["child_entry"].as_u64().unwrap() >= 1, "{t}");
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Starts the endless child tracing to `path`.
fn start_endless(path: &Path, compress: &str) -> std::process::Child {
    let env = [
        ("PERFGRAPH_TRACE", path.to_str().unwrap()),
        ("PERFGRAPH_TRACE_COMPRESS", compress),
    ];
    child("endless", &env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Kills `process` (our child, still running) with SIGKILL and reaps it.
fn sigkill(mut process: std::process::Child) {
    // SAFETY: `kill` with the pid of our own child, which has not been reaped (it cannot exit by itself).
    assert_eq!(unsafe { libc::kill(process.id() as i32, libc::SIGKILL) }, 0);
    let status = process.wait().unwrap();
    assert!(!status.success());
}

/// Runs the endless child writing `name` in a fresh directory until its unfinished trace, under that name,
/// holds `bytes`, kills it with SIGKILL, and returns the directory and the trace's path. The trace is the
/// only file left there: no temporary one.
fn killed_run(tag: &str, name: &str, bytes: u64, compress: &str) -> (common::Scratch, PathBuf) {
    let dir = fresh_dir(tag);
    let path = dir.join(name);
    let mut process = start_endless(&path, compress);
    let start = Instant::now();
    while !std::fs::metadata(&path).is_ok_and(|m| m.len() >= bytes) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the trace did not grow under its name while the program ran: {:?}",
            names(&dir)
        );
        assert!(process.try_wait().unwrap().is_none(), "the child ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    sigkill(process);
    assert_eq!(names(&dir), [name], "a temporary file is left");
    (dir, path)
}

#[test]
fn a_previous_trace_is_replaced_in_one_step_by_one_that_starts_with_its_header() {
    for (name, compress) in [("trace.json", "auto"), ("run.pftrace", "off")] {
        let dir = fresh_dir("replace");
        let path = dir.join(name);
        let old = b"the previous run's whole trace".to_vec();
        std::fs::write(&path, &old).unwrap();
        let process = start_endless(&path, compress);
        // Read the name over and over while the run starts: there is always a file there, the old one until
        // the new one takes its place, and the new one has its header from the first moment.
        let start = Instant::now();
        let new = loop {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{name}: no file at the name while the run started: {e}")
            });
            if bytes != old {
                break bytes;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{name}: the old file was never replaced"
            );
            std::thread::sleep(Duration::from_micros(200));
        };
        if name.ends_with(".json") {
            // `[`, then the header's whole lines: the process's name and its sort index.
            assert!(
                new.starts_with(b"[\n"),
                "{name}: {:?}",
                String::from_utf8_lossy(&new)
            );
            let text = String::from_utf8_lossy(&new);
            let header: Vec<Value> = text[2..]
                .lines()
                .take(2)
                .map(|l| serde_json::from_str(l.trim_end_matches(',')).unwrap())
                .collect();
            assert_eq!(header[0]["name"], "process_name", "{text}");
            assert_eq!(header[0]["args"]["tool"], "perfgraph", "{text}");
            assert_eq!(header[1]["name"], "process_sort_index", "{text}");
        } else {
            // Whole packets, the first of them the header's.
            let (packets, _) = whole_packets(&new, true);
            assert!(packets >= 1, "{name}: {new:?}");
        }
        sigkill(process);
        assert_eq!(names(&dir), [name], "a temporary file is left");
    }
}

/// Kills this many runs of each format, at different sizes: 6 at full size (`TESTS_FULL=1`), 3 by default
/// (still each of the Perfetto trace's three compression settings).
fn kills() -> u64 {
    if common::full() { 6 } else { 3 }
}

/// The unfinished Chrome trace `text` as viewers read it: every line a whole event and its comma, or
/// padding (blank); the last line may be padding cut short, never part of an event.
fn whole_lines(text: &str) -> Vec<Value> {
    assert!(text.starts_with("[\n"));
    let mut events = Vec::new();
    for (i, line) in text[2..].split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some(event) = line.strip_suffix(',') else {
            panic!("line {} is not a whole event: {line:?}", i + 2);
        };
        events.push(
            serde_json::from_str(event).unwrap_or_else(|e| panic!("line {}: {e}: {line}", i + 2)),
        );
    }
    events
}

#[test]
fn a_chrome_trace_cut_by_sigkill_is_an_array_without_its_bracket() {
    for kill in 0..kills() {
        let (_dir, path) = killed_run("kill-json", "trace.json", 300_000 + kill * 350_000, "auto");
        let text = std::fs::read_to_string(&path).unwrap();
        // Whole lines only, wherever the kill landed (in a write the kernel stops only at a page
        // boundary, and no event crosses one).
        let events = whole_lines(&text);
        pages_hold_whole_lines(&text);
        assert!(events.iter().filter(|e| e["name"] == "leaf").count() > 1000);
        assert!(events.iter().all(|e| e["name"] != "perfgraph trace end"));
        assert!(
            events
                .iter()
                .any(|e| e["name"] == "thread_name" && e["args"]["name"] == "child_entry")
        );
        // As viewers read it: the trailing comma dropped, the bracket added.
        let array = format!("{}]", text.trim_end().trim_end_matches(','));
        let parsed: Vec<Value> = serde_json::from_str(&array).unwrap();
        assert_eq!(parsed.len(), events.len());
    }
}

#[test]
fn a_perfetto_trace_cut_by_sigkill_holds_whole_packets() {
    for kill in 0..kills() {
        // Raw packets, deflated bundles, and the two mixed as the budget allows.
        let compress = ["off", "on", "auto"][kill as usize % 3];
        let (_dir, path) = killed_run(
            "kill-pftrace",
            "run.pftrace",
            100_000 + kill * 150_000,
            compress,
        );
        let bytes = std::fs::read(&path).unwrap();
        // Whole packets to the last byte, wherever the kill landed.
        let (_, whole) = whole_packets(&bytes, false);
        assert_eq!(whole, bytes.len());
        pages_hold_whole_packets(&bytes);
        if let Some(t) = decode_with_perfetto(&path, true) {
            assert!(t["names"]["leaf"].as_u64().unwrap() > 1000, "{t}");
            assert!(t["end"].is_null());
        }
    }
}

#[test]
fn a_full_disk_is_one_warning_line_and_the_run_goes_on() {
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    let out = child("workload", &[("PERFGRAPH_TRACE", "/dev/full")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("perfgraph: warning: the disk is full"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with(
            "perfgraph: warning: the disk is full: the PERFGRAPH_TRACE file \"/dev/full\" stops at "
        ) && warnings[0].ends_with(" bytes; later calls are counted, not written"),
        "{stderr}"
    );
    // The lines that follow it: the trace could not be finished either.
    assert!(
        stderr.contains(
            "perfgraph: error: cannot write PERFGRAPH_TRACE file \"/dev/full\": No space left on device"
        ),
        "{stderr}"
    );
}

/// A small tmpfs mounted for one test (a disk that fills), unmounted and removed when dropped.
struct Tmpfs {
    dir: common::Scratch,
}

impl Tmpfs {
    /// A tmpfs of `kib` KiB at a fresh directory; `None`, said visibly, where it cannot be mounted (not
    /// root, no `mount`, a container without the capability).
    fn mount(tag: &str, kib: u64) -> Option<Tmpfs> {
        let dir = fresh_dir(tag);
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={kib}k,mode=0755"),
                "tmpfs",
            ])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            other => {
                use std::io::Write;
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                };
                // To the process's stderr itself: the test harness does not capture it.
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "{tag}: DID NOT RUN: cannot mount a small tmpfs to fill ({why}); it needs root"
                );
                None
            }
        }
    }

    /// Fills what is left of it with a file named `filler`.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        // Whatever partial block went in, the disk is full now.
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// A disk with no room even for the trace's header: no trace file, one line that says so, and the previous
/// trace at that name left as it was; nothing else left in the directory. Both formats.
#[test]
fn a_disk_too_full_for_the_header_leaves_the_previous_trace_and_no_file() {
    for name in ["run.json", "run.pftrace"] {
        let Some(disk) = Tmpfs::mount(&format!("full-header-{name}"), 64) else {
            return;
        };
        let path = disk.dir.join(name);
        std::fs::write(&path, b"the previous run's trace").unwrap();
        disk.fill();
        let out = child("workload", &[("PERFGRAPH_TRACE", path.to_str().unwrap())])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("perfgraph"))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].starts_with(&format!(
                "perfgraph: error: cannot write PERFGRAPH_TRACE file {:?}: No space left on device",
                path.display().to_string()
            )) && lines[0].contains("not even the trace's header fits"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"the previous run's trace",
            "{name}"
        );
        assert_eq!(names(&disk.dir), ["filler", name], "{name}");
    }
}

/// A disk that fills during the run: one warning line, and the file under its name is a valid trace up to
/// what it holds (Chrome: the array from its `[`, whole events; Perfetto: whole packets, the tracks
/// described before their events), with no temporary file beside it. Both formats.
#[test]
fn a_disk_that_fills_mid_run_leaves_a_valid_trace() {
    // The workload's trace takes about 110 KB in Chrome JSON, 30 KB in raw packets.
    for (name, kib) in [("run.json", 48), ("run.pftrace", 16)] {
        let Some(disk) = Tmpfs::mount(&format!("full-mid-{name}"), kib) else {
            return;
        };
        let path = disk.dir.join(name);
        let out = child(
            "workload",
            &[
                ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                ("PERFGRAPH_TRACE_COMPRESS", "off"),
                ("PERFGRAPH_VERBOSITY", "3"),
            ],
        )
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("perfgraph: warning: the disk is full"),
            "the workload's trace must not fit in the tmpfs: {stderr}"
        );
        assert_eq!(names(&disk.dir), [name], "{name}: {stderr}");
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".json") {
            let text = String::from_utf8(bytes).unwrap();
            let events = match text.trim_end().strip_suffix(']') {
                // The closing event went in after all.
                Some(_) => serde_json::from_str::<Vec<Value>>(&text).unwrap(),
                None => whole_lines(&text),
            };
            assert_eq!(
                events[0]["name"], "process_name",
                "{name}: the header first"
            );
            assert!(events.len() > 10, "{name}: {} events", events.len());
        } else {
            let (packets, _) = whole_packets(&bytes, true);
            assert!(packets > 10, "{name}: {packets} packets");
            if let Some(t) = decode_with_perfetto(&path, true) {
                assert!(t["calls"].as_u64().unwrap() > 0, "{t}");
            }
        }
    }
}

/// A thread still recording while the program exits (a worker `main` did not join): every call of it that
/// ended before the trace's end is in the trace or in the loss its closing event states for that thread,
/// in both formats. On the manual clock the spinner knows when its last call ended; a run where that is
/// before the trace's end must account for every call it made. (A run where the exit was quicker than the
/// spinner's last calls proves nothing, and is tried again.)
#[test]
fn calls_made_during_the_exit_are_in_the_trace_or_counted() {
    for name in ["run.json", "run.pftrace"] {
        let mut conclusive = 0;
        for attempt in 0..20 {
            // Tails of many lengths: some end before the trace does, some after.
            let tail = (1_000u64 << (2 * (attempt % 5))).to_string();
            let dir = fresh_dir(&format!("through-exit-{name}-{attempt}"));
            let path = dir.join(name);
            let total_file = dir.join("total");
            let out = child(
                "through_exit",
                &[
                    ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                    ("THROUGH_EXIT_TOTAL", total_file.to_str().unwrap()),
                    ("PERFGRAPH_TRACE_COMPRESS", "off"),
                    ("PERFGRAPH_REPORT", "all"),
                    ("THROUGH_EXIT_TAIL", &tail),
                ],
            )
            .output()
            .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{stderr}");
            // (spin calls in the trace, the spinner's stated loss, the trace's end in ns)
            let (spins, lost, end_ns) = if name.ends_with(".json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let events: Vec<Value> = serde_json::from_str(&text).unwrap();
                let spins = events
                    .iter()
                    .filter(|e| e["name"] == "spin" && e["ph"] == "X")
                    .count();
                let end = events.last().unwrap();
                assert_eq!(end["name"], "perfgraph trace end", "{name}");
                let lost = end["args"]["dropped_ring_overflow_per_thread"]["spinner"]
                    .as_u64()
                    .unwrap_or(0);
                let end_ns = (end["ts"].as_f64().unwrap() * 1000.0).round() as u64;
                (spins as u64, lost, end_ns)
            } else {
                let Some(t) = decode_with_perfetto(&path, false) else {
                    return;
                };
                let lost = t["end"]["dropped_ring_overflow.spinner"]
                    .as_u64()
                    .unwrap_or(0);
                let end_ns = t["end"]["ts_ns"].as_u64();
                let Some(end_ns) = end_ns else {
                    panic!("{name}: the closing event has no end_ns: {t}");
                };
                (t["names"]["spin"].as_u64().unwrap_or(0), lost, end_ns)
            };
            let Ok(written) = std::fs::read_to_string(&total_file) else {
                // The process was gone before the spinner finished: nothing to compare.
                continue;
            };
            let (total, done_ns) = written.split_once(' ').unwrap();
            let (total, done_ns): (u64, u64) = (total.parse().unwrap(), done_ns.parse().unwrap());
            if done_ns <= end_ns {
                assert_eq!(
                    spins + lost,
                    total,
                    "{name}: {spins} spin calls in the trace and {lost} stated lost, of {total} made \
                     before the trace's end ({done_ns} <= {end_ns} ns)"
                );
                conclusive += 1;
            }
            if conclusive >= 2 {
                break;
            }
        }
        assert!(
            conclusive > 0,
            "{name}: in 20 runs the spinner never finished before the trace's end"
        );
    }
}
