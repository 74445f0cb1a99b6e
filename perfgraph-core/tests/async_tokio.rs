//! Timed futures (`#[timed] async fn`, `time_future!`) on tokio's multi-thread runtime (4 workers) and on
//! its current-thread runtime: exact call counts, polls counted, busy time within wall time, nothing left
//! open on a worker, `join!` timed right, cancellations counted.
//!
//! Every case runs under a top-level section of its own (`mt …` or `ct …`), so the cases, which run at
//! once in this process, never share a call path.

mod common;

use std::time::Duration;

use perfgraph_core::{CallNode, CallTree, time_future, timed};

#[timed(level = 1)]
async fn child(step: u32) -> u32 {
    if step.is_multiple_of(2) {
        tokio::task::yield_now().await;
    } else {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    step
}

#[timed]
async fn task(i: u32) -> u32 {
    let mut sum = 0;
    for step in 0..20 {
        sum += child(step + i).await;
    }
    sum
}

#[timed]
async fn fetch(ms: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

#[timed]
async fn slow() {
    tokio::time::sleep(Duration::from_secs(10)).await;
}

struct Service;

impl Service {
    #[timed]
    async fn handle(&self, n: u32) -> u32 {
        tokio::task::yield_now().await;
        n * 2
    }
}

trait Handler {
    #[timed(name = "Handler::run")]
    async fn run(&self) -> u32 {
        tokio::task::yield_now().await;
        7
    }
}

impl Handler for Service {}

fn node<'a>(tree: &'a CallTree, path: &[&str]) -> &'a CallNode {
    tree.find(path)
        .unwrap_or_else(|| panic!("no node {path:?} in {:#?}", names(tree)))
}

fn names(tree: &CallTree) -> Vec<(u32, &'static str)> {
    tree.nodes.iter().map(|n| (n.depth, n.name)).collect()
}

/// Busy (the node's total) never exceeds the wall time of its futures, for every async node under `root`.
fn busy_within_wall(tree: &CallTree, root: &str) {
    let top = tree
        .nodes
        .iter()
        .position(|n| n.depth == 1 && n.name == root)
        .unwrap();
    let mut under = vec![top];
    let mut k = 0;
    while k < under.len() {
        under.extend(tree.nodes[under[k]].children.iter().copied());
        k += 1;
    }
    for &i in &under {
        let n = &tree.nodes[i];
        assert!(n.is_async(), "{} is async", n.name);
        assert!(
            n.polls >= n.calls,
            "{}: {} polls, {} calls",
            n.name,
            n.polls,
            n.calls
        );
        assert!(
            n.total_ns <= n.wall_ns,
            "{}: busy {} ns > wall {} ns",
            n.name,
            n.total_ns,
            n.wall_ns
        );
        assert!(n.max_wall_ns <= n.wall_ns);
    }
}

/// No thread whose name starts with `prefix` has a section open.
fn nothing_open(prefix: &str) {
    for t in perfgraph_core::threads() {
        if t.name.starts_with(prefix) {
            assert!(t.running.is_empty(), "{} has {:?} open", t.name, t.running);
        }
    }
}

fn multi_thread(name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .thread_name(name)
        .enable_all()
        .build()
        .unwrap()
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// 1,000 tasks spawned, each a timed async fn awaiting a timed child 20 times, under the section `$root`.
macro_rules! thousand_tasks {
    ($root:literal) => {
        async {
            let handles: Vec<_> = (0..1000)
                .map(|i| tokio::spawn(time_future!($root, task(i), level = 0)))
                .collect();
            for h in handles {
                assert!(h.await.unwrap() > 0);
            }
        }
    };
}

fn check_thousand(root: &str, prefix: &str) {
    let tree = perfgraph_core::combined();
    let tasks = node(&tree, &[root]);
    assert_eq!(tasks.calls, 1000);
    let t = node(&tree, &[root, "task"]);
    let c = node(&tree, &[root, "task", "child"]);
    assert_eq!(t.calls, 1000);
    assert_eq!(c.calls, 20_000);
    assert!(c.polls > c.calls, "children pend: {} polls", c.polls);
    assert!(t.polls > t.calls);
    assert_eq!((t.cancelled, c.cancelled), (0, 0));
    busy_within_wall(&tree, root);
    nothing_open(prefix);
}

#[test]
fn multi_thread_thousand_tasks() {
    let rt = multi_thread("mt-tasks");
    rt.block_on(thousand_tasks!("mt tasks"));
    drop(rt);
    check_thousand("mt tasks", "mt-tasks");
}

#[test]
fn current_thread_thousand_tasks() {
    // The current-thread runtime polls its tasks on the thread that runs `block_on`: the test's own.
    let me = std::thread::current().name().unwrap().to_owned();
    current_thread().block_on(thousand_tasks!("ct tasks"));
    check_thousand("ct tasks", &me);
}

/// `join!(fetch(a), fetch(b))` under `root`: the two fetches are siblings under the root, each timed with
/// its own wall time; the root's busy time is tiny.
async fn joined(a: u64, b: u64) {
    let (x, y) = tokio::join!(fetch(a), fetch(b));
    assert_eq!((x, y), (a, b));
}

fn check_join(root: &str, a: u64, b: u64) {
    let tree = perfgraph_core::combined();
    let f = node(&tree, &[root, "fetch"]);
    assert!(tree.find(&[root, "fetch", "fetch"]).is_none(), "not nested");
    assert_eq!((f.calls, f.cancelled), (2, 0));
    let ms = |ns: u64| ns as f64 / 1e6;
    let (sum, max) = ((a + b) as f64, a.max(b) as f64);
    // ±20 ms for each of the two fetches.
    assert!(
        (ms(f.wall_ns) - sum).abs() < 40.0,
        "wall {} ms, want {sum}",
        ms(f.wall_ns)
    );
    assert!(
        (ms(f.max_wall_ns) - max).abs() < 20.0,
        "max wall {} ms, want {max}",
        ms(f.max_wall_ns)
    );
    let r = node(&tree, &[root]);
    assert!(
        (ms(r.wall_ns) - max).abs() < 20.0,
        "root wall {}",
        ms(r.wall_ns)
    );
    assert!(ms(r.total_ns) < 20.0, "busy {} ms", ms(r.total_ns));
    assert!(r.total_ns <= r.wall_ns && f.total_ns <= f.wall_ns);
}

#[test]
fn multi_thread_join() {
    let rt = multi_thread("mt-join");
    rt.block_on(async {
        tokio::spawn(time_future!(
            "mt join short long",
            joined(300, 1500),
            level = 0
        ))
        .await
        .unwrap();
        tokio::spawn(time_future!(
            "mt join long short",
            joined(1500, 500),
            level = 0
        ))
        .await
        .unwrap();
    });
    check_join("mt join short long", 300, 1500);
    check_join("mt join long short", 1500, 500);
    nothing_open("mt-join");
}

#[test]
fn current_thread_join() {
    let rt = current_thread();
    rt.block_on(async {
        time_future!("ct join short long", joined(300, 1500), level = 0).await;
        time_future!("ct join long short", joined(1500, 500), level = 0).await;
    });
    check_join("ct join short long", 300, 1500);
    check_join("ct join long short", 1500, 500);
}

async fn timeouts() {
    for _ in 0..5 {
        let out = tokio::time::timeout(Duration::from_millis(5), slow()).await;
        assert!(out.is_err());
    }
    assert_eq!(Service.handle(4).await, 8);
    assert_eq!(Service.run().await, 7);
}

fn check_timeouts(root: &str) {
    let tree = perfgraph_core::combined();
    let s = node(&tree, &[root, "slow"]);
    assert_eq!((s.calls, s.cancelled), (5, 5));
    assert!(s.wall_ns >= 5 * 5_000_000, "{}", s.wall_ns);
    assert!(s.total_ns <= s.wall_ns);
    // A cancelled future's latency is its life up to its drop: one duration each, of the timeout's 5 ms
    // at least (less the histogram's 1.6%), and below its 10 s sleep.
    assert_eq!(s.latency.count, 5, "{:?}", s.latency);
    assert!(s.latency.min_ns >= 4_900_000, "{:?}", s.latency);
    assert!(s.latency.max_ns < 10_000_000_000, "{:?}", s.latency);
    assert!(
        s.latency.max_ns <= s.max_wall_ns,
        "{:?} {}",
        s.latency,
        s.max_wall_ns
    );
    let h = node(&tree, &[root, "Service::handle"]);
    assert_eq!((h.calls, h.polls, h.cancelled), (1, 2, 0));
    let run = node(&tree, &[root, "Handler::run"]);
    assert_eq!((run.calls, run.polls), (1, 2));
    let report = perfgraph_core::report();
    assert!(
        report.footer().contains("Cancelled: "),
        "{}",
        report.footer()
    );
}

#[test]
fn multi_thread_timeouts_count_cancellations() {
    let rt = multi_thread("mt-timeout");
    rt.block_on(async {
        tokio::spawn(time_future!("mt timeouts", timeouts(), level = 0))
            .await
            .unwrap();
    });
    check_timeouts("mt timeouts");
}

#[test]
fn current_thread_timeouts_count_cancellations() {
    current_thread().block_on(time_future!("ct timeouts", timeouts(), level = 0));
    check_timeouts("ct timeouts");
}

/// A `time_section!` guard held across an `.await` in a `!Send` future (the current-thread runtime's
/// `block_on` takes one): interleaved with another on one thread. The stack stays one of nested sections:
/// nothing is left open, and sections after it are recorded as usual (the one warning goes to stderr).
#[test]
fn interleaved_guards_leave_the_stack_sound() {
    async fn guarded(ms: u64) {
        perfgraph_core::time_section!("guarded fetch");
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let me = std::thread::current().name().unwrap().to_owned();
    current_thread().block_on(time_future!(
        "interleaved",
        async {
            tokio::join!(guarded(30), guarded(60));
        },
        level = 0
    ));
    {
        perfgraph_core::time_section!("after interleaved");
    }
    let tree = perfgraph_core::combined();
    let g = node(&tree, &["interleaved", "guarded fetch"]);
    let nested = tree.find(&["interleaved", "guarded fetch", "guarded fetch"]);
    assert_eq!(g.calls + nested.map_or(0, |n| n.calls), 2);
    assert_eq!(node(&tree, &["after interleaved"]).calls, 1);
    nothing_open(&me);
}

#[timed(live = "Serving request")]
async fn serve() {
    tokio::join!(fetch_user(), fetch_posts());
}

#[timed(live = "Fetching user", dots)]
async fn fetch_user() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[timed(live = "Fetching posts", dots)]
async fn fetch_posts() {
    tokio::time::sleep(Duration::from_millis(450)).await;
}

/// Live print of pending futures on a real runtime, end to end: this test runs itself as a child (live
/// print on, time limit 0.05 s, capture off, stderr piped) that serves one request on a 2-worker runtime.
/// The futures are pending for 0.3 to 0.45 s with polls of microseconds: their lines are on the async
/// track, indented under the one awaiting them, with dots and their wall time; no worker thread claims them.
#[test]
fn live_print_shows_pending_futures_by_wall_time() {
    const TEST: &str = "live_print_shows_pending_futures_by_wall_time";
    if common::is_test_child(TEST) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async { tokio::spawn(serve()).await.unwrap() });
        return;
    }
    let text = common::test_child_stderr(TEST, common::FAST_LIVE_PRINT);
    let lines: Vec<&str> = text.lines().collect();
    let first = |what: &str| {
        lines
            .iter()
            .position(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no line with {what:?} in:\n{text}"))
    };
    // The seconds of the last line about `what` that has stats.
    let seconds = |what: &str| -> f64 {
        let l = lines
            .iter()
            .rev()
            .find(|l| l.contains(what) && l.contains(" s] ["))
            .unwrap_or_else(|| panic!("no stats for {what:?} in:\n{text}"));
        let at = l.rfind(" s] [").unwrap();
        let from = l[..at].rfind('[').unwrap();
        l[from + 1..at].trim().parse().unwrap()
    };
    // The awaiting future first, then the two it awaits, one level in; dots while they are pending.
    let serve = first("async: Serving request");
    assert!(serve < first("async:   Fetching user"), "{text}");
    assert!(serve < first("async:   Fetching posts"), "{text}");
    assert!(
        text.contains("Fetching posts.") || text.contains("Fetching user."),
        "dots expected:\n{text}"
    );
    // Their wall times (first poll to completion): at least the sleeps, generously bounded above.
    let (user, posts) = (seconds("Fetching user"), seconds("Fetching posts"));
    assert!((0.29..5.0).contains(&user), "{text}");
    assert!((0.44..5.0).contains(&posts), "{text}");
    assert!(seconds("Finished Serving request") >= posts, "{text}");
    // No thread's prefix on them: every line that names them is on the async track.
    for l in &lines {
        if l.contains("Fetching") || l.contains("Serving") {
            assert!(
                l.starts_with("async: "),
                "a line not on the async track: {l:?}\n{text}"
            );
        }
    }
}

/// The interleaving warning, word for word: `time_section!` guards held across `.await` in a `!Send`
/// future, the outer one ending first. One line, naming both sections and the fix.
#[test]
fn the_interleaving_warning_names_both_sections_and_the_fix() {
    async fn opened_first() {
        perfgraph_core::time_section!("opened first");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    async fn opened_second() {
        perfgraph_core::time_section!("opened second");
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    const TEST: &str = "the_interleaving_warning_names_both_sections_and_the_fix";
    if common::is_test_child(TEST) {
        current_thread().block_on(async {
            tokio::join!(opened_first(), opened_second());
        });
        return;
    }
    let text = common::test_child_stderr(
        TEST,
        &[("PERFGRAPH_LIVE", "off"), ("PERFGRAPH_CAPTURE", "off")],
    );
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        [
            "perfgraph: warning: section `opened first` ended while `opened second`, opened after it on the \
             same thread, was still open: sections interleaved on one thread (a `time_section!` guard held \
             across an `.await`?); `opened second` was ended with `opened first`. Time async code with \
             `#[timed] async fn` or `time_future!`, which enter the section on every poll"
        ],
        "{text}"
    );
}

/// A merge of runs (`perfgraph merge`, `Report::merge_runs`) sums the async figures as it sums calls:
/// the same run twice has twice the polls, wall time and cancellations at each async path.
#[test]
fn merged_runs_sum_the_async_figures() {
    current_thread().block_on(async {
        time_future!("merged::fetch", async {
            tokio::task::yield_now().await;
        })
        .await;
        let _ = tokio::time::timeout(
            Duration::from_millis(1),
            time_future!("merged::cancelled", std::future::pending::<()>()),
        )
        .await;
    });
    let one = perfgraph_core::report();
    let two = perfgraph_core::Report::merge_runs(&[one.clone(), one.clone()]).unwrap();
    for name in ["merged::fetch", "merged::cancelled"] {
        let single = one.tree.find(&[name]).unwrap();
        let double = two.tree.find(&[name]).unwrap();
        assert!(single.polls > 0, "{single:?}");
        assert_eq!(
            (double.calls, double.polls, double.wall_ns, double.cancelled),
            (
                2 * single.calls,
                2 * single.polls,
                2 * single.wall_ns,
                2 * single.cancelled
            ),
            "{name}"
        );
        assert_eq!(double.max_wall_ns, single.max_wall_ns, "{name}");
    }
}

/// One request: three 20 ms timers, one after the other (about 60 ms of latency, almost none of it busy).
#[timed]
async fn request() {
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// 200 concurrent requests: each records one duration, its whole life (first poll to completion), not one
/// per poll. `Latency:`'s calls equal the graph's, and the percentiles are the requests' latencies (about
/// 60 ms), in the report, its table and the JSON read back. (Before, the histogram held every poll's busy
/// time: 800 entries at p50 0.000 ms.)
#[test]
fn async_latency_is_one_duration_per_future() {
    let rt = multi_thread("lat-worker");
    rt.block_on(async {
        let handles: Vec<_> = (0..200)
            .map(|_| tokio::spawn(time_future!("lat requests", request(), level = 0)))
            .collect();
        for h in handles {
            h.await.unwrap();
        }
    });
    drop(rt);
    let check = |r: &perfgraph_core::Report, what: &str| {
        for path in [&["lat requests"][..], &["lat requests", "request"][..]] {
            let n = node(&r.tree, path);
            assert_eq!(n.calls, 200, "{what} {path:?}");
            assert_eq!(
                n.latency.count, 200,
                "{what} {path:?}: one duration per future"
            );
            let p50 = n.latency.percentile(50.0);
            // 60 ms less the histogram's 1.6% precision; generous above (a busy machine).
            assert!(
                (59_000_000..10_000_000_000).contains(&p50),
                "{what} {path:?}: p50 {p50} ns"
            );
            assert!(n.latency.min_ns >= 59_000_000, "{what} {path:?}");
        }
        let table = r.latency_table(1000);
        let row = table
            .lines()
            .find(|l| l.starts_with("| request "))
            .unwrap_or_else(|| panic!("{what}: no request row:\n{table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], "200", "{what}: {row}");
        let p50_ms: f64 = cells[4].parse().unwrap();
        assert!(p50_ms >= 59.0, "{what}: {row}");
        // `Async Sections:` keeps the polls' busy time: four polls a request at least (three timers),
        // each far shorter than the request.
        let table = r.async_table();
        let row = table
            .lines()
            .find(|l| l.starts_with("| request "))
            .unwrap_or_else(|| panic!("{what}: no request row:\n{table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], "200", "{what}: {row}");
        let polls: u64 = cells[3].parse().unwrap();
        assert!(polls >= 800, "{what}: {row}");
        let mean_poll_ms: f64 = cells[5].parse().unwrap();
        assert!(mean_poll_ms < 20.0, "{what}: {row}");
    };
    let r = perfgraph_core::report();
    check(&r, "report");
    let back = perfgraph_core::Report::from_json(&r.json()).unwrap();
    check(&back, "JSON read back");
}
