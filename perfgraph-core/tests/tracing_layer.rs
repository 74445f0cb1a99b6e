//! `TracingLayer`: spans become sections (levels, `live` and `dots` fields, per-poll timing of
//! `#[instrument] async fn`), the `profiling` crate's scopes land through its tracing backend, and the fmt
//! layer writing through `perfgraph_core::stderr()` next to it works.
//!
//! One subscriber for the whole binary (set as the global default once), in one test function, so the
//! cases do not race for the default verbosity.

mod common;

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

/// A task's span, entered at each poll on whichever worker polls it: its state is handed over between
/// the workers.
#[instrument]
async fn step(i: u32) -> u32 {
    for _ in 0..2 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    i
}

fn profiled() {
    profiling::scope!("profiled scope");
    std::hint::black_box(1 + 1);
}

/// Spans whose state moves: entered again on the thread that exited it inside another span (where it was
/// parked), entered on a second thread after its exit on the first (with no span entered there, so its
/// state went to its extensions), made on one thread and entered first on another, entered again while
/// entered.
fn moving_spans() {
    {
        let holder = tracing::info_span!("holder");
        let _h = holder.enter();
        let again = tracing::info_span!("entered twice here");
        again.in_scope(|| {});
        again.in_scope(|| {});
        // Ten spans exited here before any is entered again: the last exited, the next eight parked,
        // the first moved to its extensions when the parked list overflowed.
        let many: Vec<_> = (0..10)
            .map(|_| tracing::info_span!("one of ten exited inside"))
            .collect();
        for span in &many {
            span.in_scope(|| {});
        }
        for span in &many {
            span.in_scope(|| {});
        }
    }
    let moved = tracing::info_span!("entered on two threads");
    moved.in_scope(|| {});
    std::thread::scope(|s| {
        s.spawn(|| moved.in_scope(|| {}));
    });
    drop(moved);
    let made_here = tracing::info_span!("made here, entered there");
    std::thread::spawn(move || made_here.in_scope(|| {}))
        .join()
        .unwrap();
    let nested = tracing::info_span!("entered inside itself");
    nested.in_scope(|| nested.in_scope(|| {}));
    // Entered with no other span entered, so handed over at each exit.
    let again = tracing::info_span!("handed over, entered again here");
    again.in_scope(|| {});
    again.in_scope(|| {});
    let first = tracing::info_span!("handed over, then another");
    first.in_scope(|| {});
    let next = tracing::info_span!("the next one handed over");
    next.in_scope(|| {});
    std::thread::scope(|s| {
        s.spawn(|| first.in_scope(|| {}));
    });
    drop((first, next));
    // Handed over by a thread that then exited: the thread that enters it next counts a new call (a
    // documented limit), and nothing else goes wrong.
    let orphan = std::thread::spawn(|| {
        let span = tracing::info_span!("handed over by a thread that exited");
        span.in_scope(|| {});
        span
    })
    .join()
    .unwrap();
    orphan.in_scope(|| {});
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
    // 200 tasks on 4 workers, each a span entered at each of its polls: one call each, whichever
    // workers poll it, and every poll counted.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let sum = rt.block_on(async {
        let tasks: Vec<_> = (0..200).map(|i| tokio::spawn(step(i))).collect();
        let mut sum = 0;
        for t in tasks {
            sum += t.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, 199 * 200 / 2);
    drop(rt);
    profiled();
    moving_spans();

    let tree = perfgraph_core::combined();
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
    assert!(
        perfgraph_core::report()
            .run
            .skipped
            .contains(&"fine detail")
    );

    let m = tree.find(&["load_mesh"]).unwrap();
    assert_eq!(m.calls, 1);
    assert!(m.polls >= 4, "{} polls", m.polls);
    assert!(m.total_ns <= m.wall_ns && m.wall_ns >= 5_000_000, "{m:?}");
    let info = perfgraph_core::section_info(m.section).unwrap();
    assert_eq!((info.live, info.dots), ("Loading mesh", true));

    let p = tree.find(&["profiled scope"]).unwrap();
    assert_eq!(p.calls, 1);

    // Wherever a span's state is (held by the thread that entered it, or in its extensions), a span is
    // one call, and from its second enter on its enters are polls.
    let calls_polls = |path: &[&str]| {
        let n = tree.find(path).unwrap_or_else(|| panic!("{path:?}"));
        (n.calls, n.polls)
    };
    assert_eq!(calls_polls(&["holder", "entered twice here"]), (1, 2));
    assert_eq!(
        calls_polls(&["holder", "one of ten exited inside"]),
        (10, 20)
    );
    assert_eq!(calls_polls(&["entered on two threads"]), (1, 2));
    assert_eq!(calls_polls(&["made here, entered there"]), (1, 0));
    assert_eq!(calls_polls(&["entered inside itself"]).0, 1);
    assert_eq!(calls_polls(&["handed over, entered again here"]), (1, 2));
    assert_eq!(calls_polls(&["handed over, then another"]), (1, 2));
    assert_eq!(calls_polls(&["the next one handed over"]), (1, 0));
    let orphan = calls_polls(&["handed over by a thread that exited"]);
    assert!(orphan.0 >= 1, "{orphan:?}");
    let (calls, polls) = calls_polls(&["step"]);
    assert_eq!(calls, 200, "one call per task");
    assert!(polls >= 200 * 5, "{polls} polls");
    let step = tree.find(&["step"]).unwrap();
    assert!(step.total_ns <= step.wall_ns, "{step:?}");

    // A span's target is kept: the JSON's node for it carries it.
    {
        let span = tracing::info_span!(target: "mesh::io", "read chunk");
        let _s = span.enter();
    }
    let json: serde_json::Value = serde_json::from_str(&perfgraph_core::report().json()).unwrap();
    let node = json["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "read chunk")
        .unwrap();
    assert_eq!(node["target"], "mesh::io", "{node}");
}

/// The fmt layer writing through `perfgraph_core::stderr()` while a span's live line is open (with dots):
/// each of its lines is whole, on a line of its own, and the live line goes on as `Still ...` after it.
/// Runs itself as a child (live print on, time limit 0.05 s, capture off, stderr piped), which installs the
/// subscriber as its global default.
#[test]
fn fmt_lines_never_break_a_live_line() {
    const TEST: &str = "fmt_lines_never_break_a_live_line";
    if common::is_test_child(TEST) {
        let subscriber = tracing_subscriber::registry()
            .with(TracingLayer::new())
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(perfgraph_core::stderr)
                    .with_ansi(false)
                    .without_time(),
            );
        tracing::subscriber::set_global_default(subscriber).unwrap();
        let span = tracing::info_span!("load", live = "Loading mesh", dots = true);
        let _entered = span.enter();
        for i in 0..6 {
            std::thread::sleep(Duration::from_millis(60));
            tracing::info!("read block {i}");
        }
        return;
    }
    let text = common::test_child_stderr(TEST, common::FAST_LIVE_PRINT);
    let fmt_lines: Vec<&str> = text.lines().filter(|l| l.contains("read block")).collect();
    assert_eq!(fmt_lines.len(), 6, "{text}");
    for (i, l) in fmt_lines.iter().enumerate() {
        // Whole, and at the start of its line: nothing of the live line before it, nothing after.
        assert!(
            l.starts_with(" INFO load") && l.ends_with(&format!("read block {i}")),
            "a broken line: {l:?}\n{text}"
        );
    }
    // The live lines are live print's own (the test runs on a thread named after it): a message, dots,
    // `Still` lines after the fmt lines, the stats at the end.
    let prefix = format!("{TEST}: ");
    let live: Vec<&str> = text.lines().filter(|l| !fmt_lines.contains(l)).collect();
    assert!(live.len() >= 2, "{text}");
    for l in &live {
        let rest = l
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{l:?}\n{text}"));
        let rest = ["Still ", "Currently ", "Finished "]
            .iter()
            .fold(rest, |r, w| r.strip_prefix(w).unwrap_or(r));
        assert!(rest.starts_with("Loading mesh"), "{l:?}\n{text}");
    }
    assert!(
        text.contains(&format!("\n{prefix}Still Loading mesh")),
        "{text}"
    );
    assert!(text.trim_end().ends_with(" MB]"), "{text}");
}

#[instrument(fields(live = "Waiting for peer", dots = true))]
async fn wait_for_peer() {
    // A span is known to be async at its second enter: here at once, after the yield.
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// `#[instrument(fields(live = ...))]` on an `async fn`: entered at every poll, so live print shows it by
/// wall time on the async track, as a timed future (child process, time limit 0.05 s).
#[test]
fn an_instrumented_async_fn_is_on_the_async_track() {
    const TEST: &str = "an_instrumented_async_fn_is_on_the_async_track";
    if common::is_test_child(TEST) {
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(TracingLayer::new()),
        )
        .unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async { tokio::spawn(wait_for_peer()).await.unwrap() });
        return;
    }
    let text = common::test_child_stderr(TEST, common::FAST_LIVE_PRINT);
    let line = text
        .lines()
        .find(|l| l.starts_with("async: ") && l.contains(" s] ["))
        .unwrap_or_else(|| panic!("no async line with stats:\n{text}"));
    assert!(line.starts_with("async: Waiting for peer."), "{line}");
    let at = line.rfind(" s] [").unwrap();
    let seconds: f64 = line[line[..at].rfind('[').unwrap() + 1..at]
        .trim()
        .parse()
        .unwrap();
    assert!((0.29..5.0).contains(&seconds), "{line}");
}

/// 100 callsites: more than a thread's cache of callsites holds, so a thread cycling through them looks
/// them up under the lock of the callsites' table again and again.
macro_rules! hundred_sites {
    ($($n:literal)*) => { $( drop(tracing::info_span!("one of a hundred sites", n = $n).entered()); )* };
}

/// `fork` while another thread keeps taking the lock of the callsites' table: each child registers a new
/// callsite at once (which takes that lock) and exits; none may hang (the layer holds the lock across the
/// fork). Runs itself as a child, which installs the subscriber as its global default. The other thread
/// took the lock some 10,000 to 20,000 times in the child's 0.1 s (counted once by hand), each time for
/// well under a microsecond, so without the hold this passed too in 3 runs of 3: it shows the fork handlers leave fork working, not that the
/// window is closed (that rests on the handlers taking the lock).
#[test]
fn a_fork_child_registers_a_callsite_while_another_thread_looks_them_up() {
    const TEST: &str = "a_fork_child_registers_a_callsite_while_another_thread_looks_them_up";
    if common::is_test_child(TEST) {
        tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(TracingLayer::new()),
        )
        .unwrap();
        std::thread::spawn(|| {
            loop {
                hundred_sites!(
                    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
                    33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61
                    62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90
                    91 92 93 94 95 96 97 98 99
                );
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        for _ in 0..100 {
            // SAFETY: the child only makes a span and exits; the layer's and the runtime's fork handlers
            // keep the locks it takes consistent.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0);
            if pid == 0 {
                drop(tracing::info_span!("made in a fork child").entered());
                // SAFETY: ends the child at once, without running the parent's exit handlers twice.
                unsafe { libc::_exit(0) };
            }
            let start = std::time::Instant::now();
            let mut status = 0;
            loop {
                // SAFETY: `pid` is this process's child; `status` is a valid place for its status.
                let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                if got == pid {
                    break;
                }
                if start.elapsed() > Duration::from_secs(10) {
                    // SAFETY: `pid` is this process's own child, not yet reaped.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    panic!("a fork child hung");
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        }
        println!("all children exited");
        return;
    }
    let mut cmd = common::child_command(std::env::current_exe().unwrap());
    cmd.args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env("CHILD_CASE", TEST)
        .env("PERFGRAPH_LIVE", "off");
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all children exited"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One request through a span: three 20 ms timers (about 60 ms of latency, almost none of it busy).
#[instrument]
async fn span_request() {
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A span's latency is one duration per span, recorded at its close: for `#[instrument] async fn` (entered
/// at every poll, on any worker) its first enter to its close, so 200 concurrent requests of three 20 ms
/// timers give 200 durations of about 60 ms (before: one per enter, each a poll's busy time, p50 0.000 ms);
/// for a span entered once, that enter's duration, whether its state stayed with its thread (exited inside
/// another span, parked, or handed over) or went to its extensions (the parked list overflowed) or it
/// closed on another thread. Child process, with the layer as its global default.
#[test]
fn span_latency_is_one_duration_per_span() {
    const TEST: &str = "span_latency_is_one_duration_per_span";
    if !common::is_test_child(TEST) {
        let text = common::test_child_stderr(TEST, &[]);
        assert!(text.contains("span latency checked"), "{text}");
        return;
    }
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(TracingLayer::new()),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let handles: Vec<_> = (0..200).map(|_| tokio::spawn(span_request())).collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    drop(rt);
    // Entered once: each 2 ms long, so a stray poll-length or zero duration shows as a low minimum.
    let two_ms = || std::thread::sleep(Duration::from_millis(2));
    let handed_over = || tracing::info_span!("once, handed over").in_scope(two_ms);
    for _ in 0..20 {
        handed_over();
    }
    {
        let _parent = tracing::info_span!("once parent").entered();
        for _ in 0..20 {
            tracing::info_span!("once, exited inside").in_scope(two_ms);
        }
        // Twelve kept past their exit: the parked list (8) overflows, so some go to their extensions
        // and close there.
        let kept: Vec<_> = (0..12)
            .map(|_| {
                let span = tracing::info_span!("once, parked");
                span.in_scope(two_ms);
                span
            })
            .collect();
        drop(kept);
    }
    // Entered once here, closed on another thread; recorded here at this thread's next hand-over.
    for _ in 0..5 {
        let span = tracing::info_span!("once, closed elsewhere");
        span.in_scope(two_ms);
        std::thread::spawn(move || drop(span)).join().unwrap();
        handed_over();
    }
    let check = |r: &perfgraph_core::Report, what: &str| {
        let find = |path: &[&str]| {
            r.tree
                .find(path)
                .unwrap_or_else(|| panic!("{what}: no node {path:?}"))
                .clone()
        };
        let n = find(&["span_request"]);
        assert_eq!(n.calls, 200, "{what}");
        assert_eq!(n.latency.count, 200, "{what}: one duration per span");
        let p50 = n.latency.percentile(50.0);
        // 60 ms less the histogram's 1.6% precision; generous above (a busy machine).
        assert!(
            (59_000_000..10_000_000_000).contains(&p50),
            "{what}: p50 {p50} ns"
        );
        assert!(n.latency.min_ns >= 59_000_000, "{what}: {:?}", n.latency);
        for (path, calls) in [
            (&["once, handed over"][..], 25),
            (&["once parent", "once, exited inside"][..], 20),
            (&["once parent", "once, parked"][..], 12),
            (&["once, closed elsewhere"][..], 5),
        ] {
            let n = find(path);
            assert_eq!(n.calls, calls, "{what} {path:?}");
            assert_eq!(n.latency.count, calls, "{what} {path:?}");
            assert!(
                n.latency.min_ns >= 1_900_000,
                "{what} {path:?}: {:?}",
                n.latency
            );
        }
        let table = r.latency_table(1000);
        let row = table
            .lines()
            .find(|l| l.starts_with("| span_request "))
            .unwrap_or_else(|| panic!("{what}: no span_request row:\n{table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], "200", "{what}: {row}");
        let p50_ms: f64 = cells[4].parse().unwrap();
        assert!(p50_ms >= 59.0, "{what}: {row}");
    };
    let r = perfgraph_core::report();
    check(&r, "report");
    let back = perfgraph_core::Report::from_json(&r.json()).unwrap();
    check(&back, "JSON read back");
    eprintln!("span latency checked");
}
