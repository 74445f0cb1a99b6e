//! The process-wide list of threads that recorded, and how a thread gets onto it and off it.
//!
//! One job: keep every recording thread's [`ThreadState`] reachable from any thread, for as long as anybody
//! may use it. A thread's first section registers its state here ([`current`]; the state itself and its hot
//! path are [`super::thread`]'s); its exit hook marks it exited; once the background thread has drained its
//! ring for the last time, [`retire`] folds it into the retired summary ([`super::retired`]) and takes it
//! off the live list.
//!
//! What it guarantees:
//!
//! * every thread that recorded is, at any instant, in exactly one of the live list and the retired
//!   summary: one lock over both ([`view`]);
//! * a thread's state stays on the live list from its first section until it has exited and been retired,
//!   so the `&'static` that [`current`] hands out (and the pointer [`current_ptr`] reads) is valid for as
//!   long as the thread runs;
//! * an exited state reads as exited (`ThreadState::exited`) only with all of its thread's records and its
//!   final CPU time visible (the exit hook's Release store);
//! * registering is perfgraph's own allocation: it never counts against a section;
//! * the list's and the names' locks can be held across a `fork()` (`collector::fork`), so a child never
//!   inherits them held.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::retired::{Exited, Group, Retired};
use super::thread::ThreadState;
use crate::base::{clock, heap, poison, process, sys};

/// The threads that recorded: the live ones (in order of first section) and the retired ones, folded. One
/// lock over both, so a reader sees every thread exactly once.
pub struct Threads {
    live: Vec<Arc<ThreadState>>,
    retired: Retired,
    /// Threads ever registered: the next one's index.
    registered: u32,
    /// Changes whenever `live` does.
    generation: u64,
}

static THREADS: Mutex<Threads> = Mutex::new(Threads {
    live: Vec::new(),
    retired: Retired::new(),
    registered: 0,
    generation: 0,
});

/// Exited threads not folded yet. Every [`EXITED_WAKE`]th one wakes the background thread, so their
/// states (and rings) go back soon even in a program that ends threads by the thousand, without a pass per
/// exit.
static EXITED_PENDING: AtomicU64 = AtomicU64::new(0);

/// See [`EXITED_PENDING`].
const EXITED_WAKE: u64 = 64;

/// Exited threads the background thread has not folded yet (their states and rings still held).
pub fn exited_pending() -> u64 {
    EXITED_PENDING.load(Ordering::Relaxed)
}

fn threads() -> std::sync::MutexGuard<'static, Threads> {
    poison::lock(&THREADS)
}

/// The live threads (not folded yet), in order of first section.
pub fn all() -> Vec<Arc<ThreadState>> {
    threads().live.clone()
}

/// A number that changes whenever the live list does (what [`all`] would return, without copying it).
pub fn generation() -> u64 {
    threads().generation
}

/// The live threads and the retired groups, read at one instant: every thread is in exactly one of them.
pub fn view() -> (Vec<Arc<ThreadState>>, Vec<Group>) {
    let t = threads();
    (t.live.clone(), t.retired.groups().to_vec())
}

/// Every counter site's stats over the live threads and the retired ones, by id (an id once per thread
/// that set it, and once for the retired).
pub fn counters() -> Vec<(u32, super::counters::Stats)> {
    let t = threads();
    let mut out: Vec<(u32, super::counters::Stats)> = t.retired.counters().collect();
    for state in &t.live {
        out.extend(state.counters.read());
    }
    out
}

/// Folds `state`, an exited thread whose ring the background thread drained for the last time (losing
/// `dropped` records in all), into the retired summary, and takes it off the live list. Background thread
/// only, after that final drain.
///
/// Returns `false`, and keeps the thread live for good, if sections are still open on it: a guard kept in
/// a thread-local that outlived the exit hook may still close them.
pub fn retire(state: &ThreadState, dropped: u64) -> bool {
    let exited_ticks = state.exited_ticks.load(Ordering::Acquire);
    debug_assert!(exited_ticks != 0, "only an exited thread is retired");
    if !state.open_frames().is_empty() {
        return false;
    }
    // Outside the lock: the thread has exited (Acquire above pairs with the exit hook's Release), so its
    // state no longer changes.
    let reading = state.stack.read(exited_ticks);
    let counters = state.counters.read();
    let exited = Exited {
        name: &state.name,
        family: state.family.as_deref(),
        index: state.index,
        is_main: state.is_main,
        born_ticks: state.born_ticks,
        exited_ticks,
        recorded: state.stack.ring.pushed(),
        dropped,
        cpu_ns: state.cpu_since_first_section(),
    };
    let mut t = threads();
    // The live list is in order of index.
    if let Ok(i) = t.live.binary_search_by_key(&state.index, |s| s.index) {
        t.live.remove(i);
        t.retired.fold(&exited, &reading);
        t.retired.fold_counters(&counters);
        t.generation += 1;
    }
    drop(t);
    // Relaxed: a counter for the wake-up heuristic only.
    let _ = EXITED_PENDING.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    true
}

/// The thread list's lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub fn hold_for_fork() -> MutexGuard<'static, Threads> {
    threads()
}

thread_local! {
    /// This thread's state, null before its first section. `const`-initialised with no destructor, so
    /// reading it is a single TLS-relative load and works even during thread teardown.
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(std::ptr::null()) };
    /// Marks the state exited when the thread ends (registered at the thread's first section).
    static EXIT_HOOK: ExitHook = const { ExitHook(Cell::new(std::ptr::null())) };
}

struct ExitHook(Cell<*const ThreadState>);

impl Drop for ExitHook {
    fn drop(&mut self) {
        let state = self.0.get();
        if !state.is_null() {
            // Causal profiling's timer ticks no more: its handler reads this state.
            super::causal::thread_ends();
            // A section entered later in this thread's teardown (from another thread-local's destructor)
            // registers a state of its own, which is never retired: this one may be freed once retired.
            CURRENT.with(|c| c.set(std::ptr::null()));
            // SAFETY: the pointer came from an `Arc` in the live list, which keeps it until the background
            // thread retires the thread, which it does only after it saw the store below.
            let state = unsafe { &*state };
            // What this thread allocated and kept, or freed for others, joins the process's heap figure.
            crate::base::heap::publish();
            if let Some(ns) = sys::own_cpu_ns() {
                // Relaxed: published by the Release store below.
                state.cpu_ns.fetch_max(ns, Ordering::Relaxed);
            }
            // Release: pairs with the Acquire load in `ThreadState::exited`: the thread's last records (and
            // its final CPU time) are visible.
            state
                .exited_ticks
                .store(clock::now().0.max(1), Ordering::Release);
            // Not a pass per exit: only every `EXITED_WAKE`th exit waiting to be folded wakes the background
            // thread (otherwise the next pass folds it); but every one when the rings are a trace's (10
            // MiB each), so that exited threads' rings go back to the pool before new threads need new
            // ones. Relaxed: a heuristic counter.
            let pending = EXITED_PENDING.fetch_add(1, Ordering::Relaxed) + 1;
            let big_rings = super::thread::RING_CAPACITY.load(Ordering::Relaxed)
                >= crate::base::config::TRACE_RING_CAPACITY;
            if big_rings || pending.is_multiple_of(EXITED_WAKE) {
                process::wake();
            }
        }
    }
}

/// How many threads of each name have recorded so far: the second `worker` is `worker#2`.
static NAMES: Mutex<BTreeMap<String, u32>> = Mutex::new(BTreeMap::new());

/// The names' lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub fn hold_names_for_fork() -> MutexGuard<'static, BTreeMap<String, u32>> {
    poison::lock(&NAMES)
}

/// `name` as this thread shows it in tables and live-print prefixes: the name itself for the first thread
/// that bears it, `name#k` for the k-th (tokio's and rayon's workers share one name).
fn told_apart(name: &str) -> String {
    let mut names = poison::lock(&NAMES);
    let seen = names.entry(name.to_owned()).or_insert(0);
    *seen += 1;
    label(name, *seen)
}

/// The label of the `nth` thread named `name` (from 1).
fn label(name: &str, nth: u32) -> String {
    if nth == 1 {
        name.to_owned()
    } else {
        format!("{name}#{nth}")
    }
}

/// This thread's state, or null before its first section.
#[inline(always)]
pub fn current_ptr() -> *const ThreadState {
    CURRENT.with(Cell::get)
}

/// This thread's state, registering it at the first section. The runtime must have started (the entry
/// points see to it): the state's birth is read on its clock.
pub fn current() -> &'static ThreadState {
    let ptr = CURRENT.with(Cell::get);
    if ptr.is_null() {
        return register();
    }
    // SAFETY: non-null values come from `register`, from an `Arc` that the live list keeps while the thread
    // runs (it is retired only after its exit hook ran).
    unsafe { &*ptr }
}

/// perfgraph's own allocations (the state, its ring, its name) never count against a section.
#[cold]
#[inline(never)]
fn register() -> &'static ThreadState {
    heap::untracked(register_untracked)
}

fn register_untracked() -> &'static ThreadState {
    let thread = std::thread::current();
    let is_main = sys::is_main_thread();
    let (name, family) = match thread.name() {
        Some(name) => (told_apart(name), Some(name.to_owned())),
        None if is_main => ("main".to_owned(), Some("main".to_owned())),
        None => (format!("unnamed-{}", sys::thread_id()), None),
    };
    // Before the list's lock: the ring may wait for the background thread to fold exited threads, which
    // takes that lock.
    let ring = super::ring_supply::new_ring(exited_pending);
    let state = {
        let mut threads = threads();
        let index = threads.registered;
        let state = Arc::new(ThreadState::new(index, name, family, is_main, ring));
        threads.registered += 1;
        threads.generation += 1;
        threads.live.push(Arc::clone(&state));
        state
    };
    let ptr = Arc::as_ptr(&state);
    // The exit hook may be unavailable during thread teardown; the state then simply never reads as exited.
    let _ = EXIT_HOOK.try_with(|hook| hook.0.set(ptr));
    CURRENT.with(|c| c.set(ptr));
    // SAFETY: the live list holds a clone of this `Arc` until the thread has exited and been retired, so the
    // state outlives every use this thread makes of it (the 'static is this thread's lifetime: guards are
    // `!Send`, and the exit hook, which runs last, is what lets it be retired).
    unsafe { &*ptr }
}

#[cfg(test)]
mod tests {
    #[test]
    fn threads_of_one_name_are_told_apart() {
        assert_eq!(super::label("tokio-rt-worker", 1), "tokio-rt-worker");
        assert_eq!(super::label("tokio-rt-worker", 3), "tokio-rt-worker#3");
        let first = super::told_apart("told-apart-test");
        let second = super::told_apart("told-apart-test");
        assert_eq!(
            (first.as_str(), second.as_str()),
            ("told-apart-test", "told-apart-test#2")
        );
    }
}
