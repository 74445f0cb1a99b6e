//! Known answers on timelines built by hand or by small simulations of the programs: fork-join,
//! a lock convoy (and its what-if against a simulation with the hold really halved), nested contention,
//! a pipeline, a blind spot, and seeded random timelines for the path's invariants.

use super::text::example_timeline;
use super::{Options, PieceKind, Scope, analyse};
use crate::__test_hooks::Rng;
use crate::data::timeline::{Blocked, Call, Timeline, Wake};

const MS: u64 = 1_000_000;

fn call(name: u32, start_ns: u64, end_ns: u64) -> Call {
    Call::new(name, start_ns, end_ns)
}

fn wake(thread: usize, at_ns: u64) -> Wake {
    Wake {
        thread: thread as u32,
        at_ns,
    }
}

/// The invariants of every path: pieces in time order, each meeting the next, none empty, on threads
/// of the timeline, summing to the time explained.
fn check_pieces(t: &Timeline, p: &super::CriticalPath) {
    assert!(!p.pieces.is_empty());
    for w in p.pieces.windows(2) {
        assert_eq!(w[0].end_ns, w[1].start_ns, "{:?}", w);
    }
    for piece in &p.pieces {
        assert!(piece.start_ns < piece.end_ns, "{piece:?}");
        assert!((piece.thread as usize) < t.threads.len());
    }
    let sum: u64 = p.pieces.iter().map(|x| x.end_ns - x.start_ns).sum();
    assert_eq!(sum, p.length_ns);
}

/// `main` spawns A (100 ms) and B (300 ms) and joins both.
fn fork_join() -> Timeline {
    let mut t = Timeline::default();
    let main = t.thread("main", 0, 320 * MS);
    let a = t.thread("A", 11 * MS, 111 * MS);
    let b = t.thread("B", 11 * MS, 310 * MS);
    let (before, after) = (t.name("before"), t.name("after"));
    let (work_a, work_b) = (t.name("work A"), t.name("work B"));
    let (join_a, join_b) = (t.name("join A"), t.name("join B"));
    t.threads[main].calls.push(call(before, 0, 10 * MS));
    t.threads[main].calls.push(call(after, 312 * MS, 320 * MS));
    t.threads[a].calls.push(call(work_a, 11 * MS, 111 * MS));
    t.threads[b].calls.push(call(work_b, 11 * MS, 310 * MS));
    t.threads[a].spawned_by = Some(wake(main, 10 * MS));
    t.threads[b].spawned_by = Some(wake(main, 10 * MS));
    let ja = Blocked::new(join_a, 12 * MS, 112 * MS).woken_by(wake(a, 111 * MS));
    let jb = Blocked::new(join_b, 112 * MS, 311 * MS).woken_by(wake(b, 310 * MS));
    t.threads[main].blocked.extend([ja, jb]);
    t.settle();
    t
}

#[test]
fn fork_join_path_is_main_then_b_then_main_and_a_has_its_slack() {
    let t = fork_join();
    let p = analyse(&t, &Options::default()).unwrap();
    check_pieces(&t, &p);
    let threads: Vec<&str> = p
        .pieces
        .iter()
        .map(|x| t.threads[x.thread as usize].name.as_str())
        .collect();
    let mut runs = threads.clone();
    runs.dedup();
    assert_eq!(runs, ["main", "B", "main"], "{:?}", p.pieces);
    let row = |n: &str| p.sections.iter().find(|s| s.name == n).unwrap();
    assert_eq!(row("work B").path_ns, 299 * MS);
    assert_eq!(row("work A").path_ns, 0);
    assert_eq!(row("work B").slack_ns, 0);
    // A could have ended 199 ms later (B's end, less the 1 ms hand-over into the join).
    let slack = row("work A").slack_ns as f64;
    assert!(
        (slack - 200.0 * MS as f64).abs() <= 0.05 * 200.0 * MS as f64,
        "{slack}"
    );
    assert_eq!(p.length_ns, 320 * MS);
}

#[test]
fn nested_contention_prints_the_chain_to_its_root() {
    let (t, _) = example_timeline();
    let p = analyse(&t, &Options::default()).unwrap();
    check_pieces(&t, &p);
    let texts: Vec<String> = p.chains.iter().map(|c| c.text()).collect();
    assert!(
        texts.contains(
            &"T3 waits for `L1` held by T1, which waits for `L2` held by T2 in `flush`".into()
        ),
        "{texts:?}"
    );
    // The path: main's join waits on T3, T3 on T1, T1 on T2's flush.
    let on: Vec<&str> = p
        .pieces
        .iter()
        .filter_map(|x| match x.kind {
            PieceKind::Running { section: Some(s) } => Some(t.names[s as usize].as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(on, ["flush", "update", "read"], "{:?}", p.pieces);
}

/// Two threads, each `rounds` times: `outside` of work, then the lock (first come, first served; a tie
/// to the lower index) held `hold` in section `hold`. `main` joins both. Returns the timeline.
fn convoy(hold: u64, outside: u64, rounds: usize) -> Timeline {
    let mut t = Timeline::default();
    let main = t.thread("main", 0, 0);
    let workers = [t.thread("T0", 0, 0), t.thread("T1", 0, 0)];
    let (lock, hold_name, work) = (t.name("L"), t.name("hold"), t.name("work"));
    let mut ready = [outside, outside];
    let mut left = [rounds, rounds];
    for &w in &workers {
        t.threads[w].calls.push(call(work, 0, outside));
    }
    let mut free_at = 0u64;
    let mut last: Option<usize> = None;
    while left.iter().any(|&n| n > 0) {
        let k = (0..2)
            .filter(|&k| left[k] > 0)
            .min_by_key(|&k| (ready[k], k))
            .unwrap();
        let th = workers[k];
        let acquired = ready[k].max(free_at);
        if acquired > ready[k] {
            let releaser = workers[last.unwrap()];
            let b = Blocked::new(lock, ready[k], acquired)
                .held_by(releaser as u32)
                .woken_by(wake(releaser, free_at));
            t.threads[th].blocked.push(b);
        }
        let released = acquired + hold;
        t.threads[th]
            .calls
            .push(call(hold_name, acquired, released));
        free_at = released;
        last = Some(k);
        left[k] -= 1;
        ready[k] = released + outside;
        if left[k] > 0 {
            t.threads[th].calls.push(call(work, released, ready[k]));
        }
        t.threads[th].end_ns = released;
    }
    let mut at = 0;
    for &w in &workers {
        let end = t.threads[w].end_ns;
        let join = t.name("join");
        let b = Blocked::new(join, at, end + 1_000).woken_by(wake(w, end));
        t.threads[main].blocked.push(b);
        at = end + 1_000;
    }
    t.threads[main].end_ns = at;
    t.settle();
    t
}

#[test]
fn a_lock_convoy_alternates_between_the_holds_and_its_what_if_predicts_a_halved_hold() {
    let t = convoy(4 * MS, MS, 50);
    let o = Options {
        what_if: Some(("hold".into(), 50.0)),
        ..Options::default()
    };
    let p = analyse(&t, &o).unwrap();
    check_pieces(&t, &p);
    let holds: Vec<u32> = p
        .pieces
        .iter()
        .filter(|x| matches!(x.kind, PieceKind::Running { section: Some(s) } if t.names[s as usize] == "hold"))
        .map(|x| x.thread)
        .collect();
    assert!(holds.len() >= 90, "{} holds on the path", holds.len());
    assert!(holds.windows(2).all(|w| w[0] != w[1]), "{holds:?}");
    let hold = p.sections.iter().find(|s| s.name == "hold").unwrap();
    assert!(hold.path_ns * 10 >= p.length_ns * 9);
    let w = p.what_if.unwrap();
    let real = convoy(2 * MS, MS, 50);
    let real_ns = real.threads[0].end_ns as f64;
    let err = (w.predicted_ns as f64 - real_ns).abs() / real_ns;
    assert!(
        err <= 0.10,
        "predicted {} ns, really {real_ns} ns",
        w.predicted_ns
    );
}

/// A producer (1 ms an item) and a consumer (3 ms an item) through a channel of `capacity`; `main` joins
/// the consumer.
fn pipeline(items: u64, capacity: u64) -> Timeline {
    let mut t = Timeline::default();
    let main = t.thread("main", 0, 0);
    let producer = t.thread("producer", 0, 0);
    let consumer = t.thread("consumer", 0, 0);
    let (chan, produce, consume) = (t.name("items"), t.name("produce"), t.name("consume"));
    let mut sent = Vec::new();
    let mut received: Vec<u64> = Vec::new();
    let (mut p_at, mut c_at) = (0u64, 0u64);
    for i in 0..items as usize {
        // Produce, then send: blocked while `capacity` items wait unreceived.
        t.threads[producer]
            .calls
            .push(call(produce, p_at, p_at + MS));
        p_at += MS;
        if i >= capacity as usize {
            let slot_free = received[i - capacity as usize];
            if slot_free > p_at {
                let b = Blocked::new(chan, p_at, slot_free).woken_by(wake(consumer, slot_free));
                t.threads[producer].blocked.push(b);
                p_at = slot_free;
            }
        }
        sent.push(p_at);
        // Receive (blocked until sent), then consume.
        if sent[i] > c_at {
            let b = Blocked::new(chan, c_at, sent[i]).woken_by(wake(producer, sent[i]));
            t.threads[consumer].blocked.push(b);
            c_at = sent[i];
        }
        received.push(c_at);
        t.threads[consumer]
            .calls
            .push(call(consume, c_at, c_at + 3 * MS));
        c_at += 3 * MS;
        // The next receive of the consumer may have freed the slot the producer waits for: recomputed
        // in order, since the consumer is the slower.
    }
    t.threads[producer].end_ns = p_at;
    t.threads[consumer].end_ns = c_at;
    let join = t.name("join");
    let b = Blocked::new(join, 0, c_at + 1_000).woken_by(wake(consumer, c_at));
    t.threads[main].blocked.push(b);
    t.threads[main].end_ns = c_at + 1_000;
    t.settle();
    t
}

#[test]
fn a_pipeline_path_is_in_its_slow_consumer() {
    let t = pipeline(100, 4);
    let p = analyse(&t, &Options::default()).unwrap();
    check_pieces(&t, &p);
    let consume = p.sections.iter().find(|s| s.name == "consume").unwrap();
    assert!(consume.path_ns * 10 >= p.length_ns * 9, "{p:?}");
}

#[test]
fn a_wait_with_no_known_waker_is_blocked_unknown_never_work() {
    let mut t = Timeline::default();
    let main = t.thread("main", 0, 100);
    let (solve, cv) = (t.name("solve"), t.name("std condvar"));
    t.threads[main].calls.push(call(solve, 0, 100));
    t.threads[main].blocked.push(Blocked::new(cv, 30, 80));
    t.settle();
    let p = analyse(&t, &Options::default()).unwrap();
    check_pieces(&t, &p);
    assert_eq!(p.other.blocked_unknown_ns, 50);
    let row = &p.sections[0];
    assert_eq!((row.path_self_ns, row.total_ns), (50, 100));
    assert!(p.table().contains("(blocked (unknown))"), "{}", p.table());
}

#[test]
fn a_section_scope_explains_each_call() {
    let t = fork_join();
    let mut o = Options {
        scope: Scope::Section("work B".into()),
        ..Options::default()
    };
    let p = analyse(&t, &o).unwrap();
    check_pieces(&t, &p);
    assert_eq!(p.length_ns, 299 * MS);
    o.scope = Scope::Section("nothing".into());
    assert!(analyse(&t, &o).unwrap_err().contains("nothing"));
}

/// A random timeline: threads of nested calls and waits, each wait's waker a thread seen at that time
/// (or none, or one that is itself waiting: a broken trace must still give a path).
fn random_timeline(seed: u64) -> Timeline {
    let mut r = Rng(seed | 1);
    let mut t = Timeline::default();
    let threads = 1 + r.below(5) as usize;
    let names: Vec<u32> = (0..6).map(|i| t.name(&format!("s{i}"))).collect();
    for i in 0..threads {
        let start = r.below(50);
        t.thread(&format!("t{i}"), start, start + 200 + r.below(800));
    }
    for i in 0..threads {
        let (start, end) = (t.threads[i].start_ns, t.threads[i].end_ns);
        let mut at = start;
        while at < end {
            let len = 1 + r.below(60);
            let outer = call(names[r.below(6) as usize], at, (at + len).min(end));
            t.threads[i].calls.push(outer);
            if len > 4 {
                let inner = call(names[r.below(6) as usize], at + 1, at + len / 2);
                t.threads[i].calls.push(inner);
            }
            if r.below(3) == 0 {
                let b_end = (at + len + r.below(40)).min(end);
                let mut b = Blocked::new(names[0], at + len.min(b_end - at), b_end);
                match r.below(4) {
                    0 => {}
                    1 if i > 0 => b = b.held_by(r.below(i as u64) as u32),
                    _ => {
                        let w = r.below(threads as u64) as usize;
                        b = b.woken_by(wake(w, b.start_ns + r.below(b_end - b.start_ns + 1)));
                    }
                }
                t.threads[i].blocked.push(b);
                at = b_end;
            }
            at += len;
        }
        if i > 0 && r.below(2) == 0 {
            t.threads[i].spawned_by = Some(wake(r.below(i as u64) as usize, start));
        }
    }
    t.settle();
    t
}

#[test]
fn random_timelines_give_contiguous_paths_that_sum_to_the_time() {
    for seed in 0..500 {
        let t = random_timeline(seed * 7919);
        let o = Options {
            what_if: Some(("s1".into(), 40.0)),
            ..Options::default()
        };
        let p = analyse(&t, &o).unwrap();
        check_pieces(&t, &p);
        assert_eq!(p.length_ns, p.end_ns - p.start_ns, "seed {seed}");
        // Every step back goes back in time or sideways at one instant: the pieces' times only grow.
        for x in &p.pieces {
            let line = &t.threads[x.thread as usize];
            if !matches!(x.kind, PieceKind::WakeUp { .. } | PieceKind::NotRecorded) {
                assert!(
                    x.start_ns >= line.start_ns.min(p.start_ns),
                    "seed {seed}: {x:?}"
                );
            }
        }
        let w = p.what_if.unwrap();
        assert!(w.predicted_ns <= w.recorded_ns, "seed {seed}: {w:?}");
        for s in &p.sections {
            assert!(
                s.path_self_ns <= s.path_ns && s.path_ns <= s.total_ns,
                "seed {seed}: {s:?}"
            );
        }
    }
}
