//! The delay bookkeeping on real threads and the real clock: only inequalities that hold on a busy
//! machine (a thread may always be late; it is never early).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::*;

/// The experiments share one state: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const SECTION: u32 = 7;

#[test]
fn one_thread_in_the_section_inserts_speedup_times_its_time() {
    let _serial = poison::lock(&SERIAL);
    let own = Own::new();
    let started = start(SECTION, 0.5, &[]);
    enter(&own, 1, SECTION);
    std::thread::sleep(Duration::from_millis(40));
    exit(&own, 1, SECTION);
    let ended = end(&started);
    // 40 ms or more in the section, half of it inserted, none of it paid (the thread is the one sped up).
    assert!(ended.inserted >= 20_000_000, "{ended:?}");
    assert!(ended.inserted <= ended.elapsed / 2 + 1, "{ended:?}");
    assert_eq!(ended.tally.paid, 0);
    assert_eq!(ended.tally.selected_ends, 1);
    assert_eq!(ended.counts[SECTION as usize].departures, 1);
    assert_eq!(ended.duration(), ended.elapsed - ended.inserted);
}

#[test]
fn another_thread_pays_at_its_next_call_what_the_section_ran_meanwhile() {
    let _serial = poison::lock(&SERIAL);
    // A thread that counted before the experiment.
    let other = Own::new();
    pay(&other, 2);
    let started = start(SECTION, 1.0, &[]);
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let selected = std::thread::spawn(move || {
        let own = Own::new();
        enter(&own, 1, SECTION);
        entered_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(60));
        exit(&own, 1, SECTION);
    });
    entered_rx.recv().unwrap();
    // 20 ms of the section's 60 have run when the other thread makes its call: it owes them, and what
    // runs while it pays, until the section ends.
    std::thread::sleep(Duration::from_millis(20));
    let t = Instant::now();
    // At 100%, the other thread waits for as long as the section ran: until it ends.
    enter(&other, 2, SECTION + 1);
    let waited = t.elapsed();
    selected.join().unwrap();
    let ended = end(&started);
    assert!(waited >= Duration::from_millis(30), "{waited:?} {ended:?}");
    assert!(ended.tally.paid >= 30_000_000, "{ended:?}");
}

#[test]
fn a_thread_woken_by_another_skips_what_was_inserted_while_it_waited() {
    let _serial = poison::lock(&SERIAL);
    let started = start(SECTION, 1.0, &[]);
    let waiter = Own::new();
    blocked(&waiter, 2);
    let own = Own::new();
    enter(&own, 1, SECTION);
    std::thread::sleep(Duration::from_millis(30));
    exit(&own, 1, SECTION);
    woken(&waiter, 2, true);
    let t = Instant::now();
    pay(&waiter, 2);
    let paid_after_skip = t.elapsed();
    // Not woken by a thread: it pays what was inserted.
    let sleeper = Own::new();
    enter(&sleeper, 3, SECTION + 1);
    blocked(&sleeper, 3);
    let own2 = Own::new();
    enter(&own2, 4, SECTION);
    std::thread::sleep(Duration::from_millis(30));
    exit(&own2, 4, SECTION);
    let t = Instant::now();
    woken(&sleeper, 3, false);
    let paid_unskipped = t.elapsed();
    let ended = end(&started);
    assert!(ended.tally.skipped >= 30_000_000, "{ended:?}");
    assert!(
        paid_unskipped >= Duration::from_millis(25),
        "{paid_unskipped:?}"
    );
    assert!(
        paid_after_skip < paid_unskipped,
        "{paid_after_skip:?} {ended:?}"
    );
}

#[test]
fn counts_from_an_older_experiment_are_forgiven() {
    let _serial = poison::lock(&SERIAL);
    let own = Own::new();
    let started = start(SECTION, 1.0, &[(9, 1)]);
    std::thread::sleep(Duration::from_millis(20));
    let first = end(&started);
    assert!(first.inserted >= 20_000_000, "{first:?}");
    let started = start(SECTION, 0.0, &[]);
    let t = Instant::now();
    enter(&own, 1, SECTION + 1);
    exit(&own, 1, SECTION + 1);
    let second = end(&started);
    assert_eq!(second.tally.paid, 0, "{second:?}");
    assert_eq!(second.inserted, 0, "{second:?}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_thread_born_during_an_experiment_owes_nothing_of_before() {
    let _serial = poison::lock(&SERIAL);
    let old = Own::new();
    pay(&old, 2);
    let started = start(SECTION, 1.0, &[]);
    let own = Own::new();
    enter(&own, 1, SECTION);
    std::thread::sleep(Duration::from_millis(30));
    exit(&own, 1, SECTION);
    // Born now (not spawned through `sync`): caught up at its first call.
    let born = Own::new();
    enter(&born, 3, SECTION + 1);
    assert_eq!(end(&started).tally.paid, 0);
    // The thread that counted before the experiment owes the section's 30 ms.
    let started = start(SECTION, 1.0, &[]);
    let own = Own::new();
    pay(&own, 1);
    enter(&own, 1, SECTION);
    std::thread::sleep(Duration::from_millis(30));
    exit(&own, 1, SECTION);
    pay(&old, 2);
    let paid = end(&started).tally.paid;
    assert!(paid >= 25_000_000, "{paid}");
}
