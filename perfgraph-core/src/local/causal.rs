//! Causal profiling's recording side (`PERFGRAPH_CAUSAL`): the virtual speed-up of one section at a time,
//! after coz (Curtsinger & Berger, SOSP 2015).
//!
//! While a thread runs in the experiment's section, every other thread owes a delay of `speed-up × the
//! time it has run there`. Each pays what it owes at its next perfgraph call (a section's start or end, an
//! operation of `perfgraph_core::sync`), by sleeping: relative to the others, the section ran that much
//! faster. A thread woken through `sync` by another skips what was inserted while it was blocked (its
//! waker paid it before waking it); a thread blocked elsewhere (I/O, `std::thread::sleep`) pays as usual.
//! The experiment's length less the delay inserted is the time the sped-up program would have taken.
//!
//! The bookkeeping, in nanoseconds of the monotonic clock:
//!
//! * `global`: the delay inserted so far, the largest delay count any thread reached (coz's rule: a
//!   thread ahead raises it, a thread behind sleeps up to it);
//! * each thread's own count ([`Own`]), and, while it runs in the selected section, a [`Crediting`]
//!   entry whose count grows by `speed-up × the time since it entered`, which every other thread sees at
//!   once (a section exits only at its end, so a long one must be counted while it runs);
//! * a generation, raised at each experiment's start and end: a thread whose count belongs to an older one
//!   starts again from `global` (what it owed then is forgiven, as coz resets the counts between
//!   experiments).
//!
//! Nothing here runs unless the mode is on: sections reach it only through their frame flag
//! ([`CAUSAL`](super::frames::CAUSAL)), set only then, and `sync` tests [`on`] first. All of it is behind
//! one lock: the mode is for finding what to speed up, and its own cost is measured (docs/performance.md).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::base::{clock, heap, poison};

mod timer;

use timer::Busy;
pub use timer::{install as install_timers, thread_ends};

/// Whether the mode is on (set once at the start, off again in a forked child).
static ON: AtomicBool = AtomicBool::new(false);

/// Everything the threads and the experiment controller share.
static SHARED: Mutex<Shared> = Mutex::new(Shared::new());

/// Debts below this are left for the next call: a sleep that short costs more than it pays.
const MIN_PAY_NS: u64 = 20_000;

/// The end of a delay is spun rather than slept, so the sleep's overshoot does not become a delay of its
/// own: this much of it, when the delay is longer than twice this.
const SPIN_NS: u64 = 100_000;

/// Whether causal profiling is on.
#[inline]
pub fn on() -> bool {
    // Relaxed: set once before the first section records (the runtime's start), or off in a forked child.
    ON.load(Ordering::Relaxed)
}

/// Switches the mode on (at the runtime's start) or off (in a forked child, whose lock may be held by a
/// thread that did not follow it).
pub fn set_on(on: bool) {
    // Relaxed: as `on`.
    ON.store(on, Ordering::Relaxed);
}

/// A thread's own delay count, in its state. Written by the thread itself only, under the shared lock.
#[derive(Debug)]
pub struct Own {
    /// The generation its count belongs to ([`NEVER`] before it counted).
    generation: AtomicU64,
    /// Delay it has paid or skipped, ns (while it is not crediting).
    local: AtomicU64,
    /// `global` as it began a wait, `NOT_BLOCKED` otherwise.
    blocked_at: AtomicU64,
}

const NOT_BLOCKED: u64 = u64::MAX;

/// [`Own::generation`] of a thread that has not counted yet.
const NEVER: u64 = u64::MAX;

impl Own {
    pub const fn new() -> Own {
        Own {
            generation: AtomicU64::new(NEVER),
            local: AtomicU64::new(0),
            blocked_at: AtomicU64::new(NOT_BLOCKED),
        }
    }

    // Relaxed, all three: written by the owner under `SHARED`'s lock, read under it.
    fn local(&self) -> u64 {
        self.local.load(Ordering::Relaxed)
    }

    fn set_local(&self, v: u64) {
        self.local.store(v, Ordering::Relaxed);
    }
}

impl Default for Own {
    fn default() -> Own {
        Own::new()
    }
}

/// A thread running in the selected section: its delay count is `base`, plus `speed-up × (now − since)`
/// while it runs there (not while it waits in a `sync` wait: `since` is `None`).
#[derive(Debug, Clone, Copy)]
struct Crediting {
    thread: u32,
    base: u64,
    since: Option<u64>,
    /// Open frames of the selected section on that thread (recursion, re-entry).
    depth: u32,
}

impl Crediting {
    fn count(&self, speedup: f64, now: u64) -> u64 {
        let running = self.since.map_or(0, |t| now.saturating_sub(t));
        self.base + (speedup * running as f64) as u64
    }
}

/// A section's starts and ends, counted while the mode is on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub arrivals: u64,
    pub departures: u64,
}

#[derive(Debug)]
struct Shared {
    generation: u64,
    running: bool,
    selected: u32,
    speedup: f64,
    global: u64,
    /// `global` as the generation began: where a thread that has not counted in it starts from (it owes
    /// what was inserted since).
    base: u64,
    crediting: Vec<Crediting>,
    /// Per section id.
    counts: Vec<Count>,
    /// This experiment's figures so far.
    tally: Tally,
}

impl Shared {
    const fn new() -> Shared {
        Shared {
            generation: 0,
            running: false,
            selected: 0,
            speedup: 0.0,
            global: 0,
            base: 0,
            crediting: Vec::new(),
            counts: Vec::new(),
            tally: Tally::new(),
        }
    }

    /// A generation ends (an experiment starts or ends) at `now`: what was inserted by then is `global`,
    /// where every thread's count starts again; nothing is credited any more. Returns it.
    fn turn(&mut self, now: u64) -> u64 {
        let inserted = self.inserted(now);
        self.global = inserted;
        self.base = inserted;
        self.generation += 1;
        self.crediting.clear();
        inserted
    }

    /// The delay inserted by `now`: `global`, or a crediting thread's count if larger.
    fn inserted(&self, now: u64) -> u64 {
        let credited = self.crediting.iter().map(|c| c.count(self.speedup, now));
        credited.fold(self.global, u64::max)
    }

    fn entry(&mut self, thread: u32) -> Option<&mut Crediting> {
        self.crediting.iter_mut().find(|c| c.thread == thread)
    }

    /// `own` in this generation: a count from an older one starts again from the generation's `base`.
    /// A thread counting for the first time (born now, not spawned through `sync`, which passes the
    /// spawner's count on) starts from what is inserted `now`: it owes nothing of before its birth.
    fn sync(&self, own: &Own, now: u64) {
        // Relaxed: see `Own`.
        let generation = own.generation.load(Ordering::Relaxed);
        if generation != self.generation {
            own.generation.store(self.generation, Ordering::Relaxed);
            let from = if generation == NEVER {
                self.inserted(now)
            } else {
                self.base
            };
            own.set_local(from);
            if own.blocked_at.load(Ordering::Relaxed) != NOT_BLOCKED {
                own.blocked_at.store(from, Ordering::Relaxed);
            }
        }
    }

    /// The thread's delay count now.
    fn count_of(&self, own: &Own, thread: u32, now: u64) -> u64 {
        match self.crediting.iter().find(|c| c.thread == thread) {
            Some(c) => c.count(self.speedup, now),
            None => own.local(),
        }
    }

    fn count(&mut self, section: u32) -> &mut Count {
        let i = section as usize;
        if i >= self.counts.len() {
            heap::untracked(|| self.counts.resize(i + 1, Count::default()));
        }
        &mut self.counts[i]
    }
}

fn now() -> u64 {
    clock::monotonic_ns()
}

/// The calling thread (its `own` count, its index) starts `section`: it pays what it owes first, so the
/// section's time holds none of it.
pub fn enter(own: &Own, thread: u32, section: u32) {
    let _busy = Busy::enter();
    timer::ensure(own, thread);
    pay(own, thread);
    let mut sh = poison::lock(&SHARED);
    let now = now();
    sh.sync(own, now);
    sh.count(section).arrivals += 1;
    if sh.running && sh.selected == section {
        match sh.entry(thread) {
            Some(c) => c.depth += 1,
            None => {
                let base = own.local();
                let c = Crediting {
                    thread,
                    base,
                    since: Some(now),
                    depth: 1,
                };
                heap::untracked(|| sh.crediting.push(c));
            }
        }
    }
}

/// The calling thread ended `section` (at its end's clock reading, just before): what it ran there
/// counts if it is the selected one; then it pays what it owes.
pub fn exit(own: &Own, thread: u32, section: u32) {
    let _busy = Busy::enter();
    {
        let mut sh = poison::lock(&SHARED);
        let now = now();
        sh.sync(own, now);
        sh.count(section).departures += 1;
        if sh.running && sh.selected == section {
            sh.tally.selected_ends += 1;
            let speedup = sh.speedup;
            if let Some(i) = sh.crediting.iter().position(|c| c.thread == thread) {
                let c = &mut sh.crediting[i];
                c.depth -= 1;
                if c.depth == 0 {
                    let count = c.count(speedup, now);
                    sh.crediting.swap_remove(i);
                    own.set_local(count);
                    sh.global = sh.global.max(count);
                }
            }
        }
    }
    pay(own, thread);
}

/// The calling thread is about to wake another (a release, a send, a notify, its own end): it pays what
/// it owes first, so the woken thread may skip what was inserted while it waited.
pub fn waking(own: &Own, thread: u32) {
    pay(own, thread);
}

/// The calling thread begins a wait in `sync`: it pays what it owes, then notes what was inserted by now.
/// A thread crediting stops while it waits.
pub fn blocked(own: &Own, thread: u32) {
    let _busy = Busy::enter();
    pay(own, thread);
    let mut sh = poison::lock(&SHARED);
    let now = now();
    sh.sync(own, now);
    let inserted = sh.inserted(now);
    // Relaxed: see `Own`.
    own.blocked_at.store(inserted, Ordering::Relaxed);
    let speedup = sh.speedup;
    if let Some(c) = sh.entry(thread) {
        c.base = c.count(speedup, now);
        c.since = None;
    }
}

/// The calling thread's wait ended; `skip` if another thread woke it through `sync`: it then skips what
/// was inserted meanwhile. Otherwise it pays it.
pub fn woken(own: &Own, thread: u32, skip: bool) {
    let _busy = Busy::enter();
    {
        let mut sh = poison::lock(&SHARED);
        let now = now();
        // Relaxed: see `Own`.
        let at = own.blocked_at.swap(NOT_BLOCKED, Ordering::Relaxed);
        let same = own.generation.load(Ordering::Relaxed) == sh.generation;
        if same && at != NOT_BLOCKED {
            let gap = sh.inserted(now).saturating_sub(at);
            if skip {
                sh.tally.skipped += gap;
                match sh.entry(thread) {
                    Some(c) => c.base += gap,
                    None => own.set_local(own.local() + gap),
                }
            } else {
                sh.tally.unwoken += gap;
            }
        }
        sh.sync(own, now);
        if let Some(c) = sh.entry(thread) {
            c.since = Some(now);
        }
    }
    if !skip {
        pay(own, thread);
    }
}

/// The calling thread's delay count, for a thread it spawns to start from (as coz, a new thread inherits
/// its parent's count: what the parent owed, the child owes too).
pub fn inherited(own: &Own, thread: u32) -> Inherited {
    let _busy = Busy::enter();
    let sh = poison::lock(&SHARED);
    let now = now();
    sh.sync(own, now);
    Inherited {
        generation: sh.generation,
        count: sh.count_of(own, thread, now),
    }
}

/// A new thread starts from its parent's count (if the experiment is still the one it was taken in).
pub fn inherit(own: &Own, from: Inherited) {
    let _busy = Busy::enter();
    let sh = poison::lock(&SHARED);
    if from.generation == sh.generation {
        // Relaxed: see `Own`.
        own.generation.store(from.generation, Ordering::Relaxed);
        own.set_local(from.count);
    }
}

/// A parent thread's delay count as it spawned a thread: [`inherited`].
#[derive(Debug, Clone, Copy)]
pub struct Inherited {
    generation: u64,
    count: u64,
}

/// Pays what the calling thread owes, sleeping, until it owes less than [`MIN_PAY_NS`] (what is inserted
/// while it sleeps is owed too), or the experiment ends.
pub fn pay(own: &Own, thread: u32) {
    pay_from(own, thread, false);
}

/// [`pay`], `tick` when the thread's CPU-time timer makes it pay (counted apart).
fn pay_from(own: &Own, thread: u32, tick: bool) {
    let _busy = Busy::enter();
    loop {
        let owed = {
            let sh = poison::lock(&SHARED);
            let now = now();
            sh.sync(own, now);
            if !sh.running || sh.speedup == 0.0 {
                return;
            }
            sh.inserted(now)
                .saturating_sub(sh.count_of(own, thread, now))
        };
        if owed < MIN_PAY_NS {
            return;
        }
        let slept = sleep_exactly(owed);
        let mut sh = poison::lock(&SHARED);
        // Relaxed: see `Own`.
        if own.generation.load(Ordering::Relaxed) != sh.generation {
            return;
        }
        // What the sleep overslept is delay too: the thread is that much ahead, and the others owe it as
        // well (coz's rule on Linux), so it is in the delay inserted and comes off the experiment's time
        // with the rest, the same for every thread.
        sh.tally.paid += slept;
        if tick {
            sh.tally.ticked += slept;
        }
        sh.tally.overshoot += slept.saturating_sub(owed);
        match sh.entry(thread) {
            Some(c) => {
                c.base += slept;
                c.since = c.since.map(|t| t + slept);
            }
            None => {
                let count = own.local() + slept;
                own.set_local(count);
                sh.global = sh.global.max(count);
            }
        }
    }
}

/// Sleeps `ns`, the last [`SPIN_NS`] spun; returns the time it took.
fn sleep_exactly(ns: u64) -> u64 {
    let start = now();
    if ns > 2 * SPIN_NS {
        std::thread::sleep(Duration::from_nanos(ns - SPIN_NS));
    }
    loop {
        let t = now();
        if t.saturating_sub(start) >= ns {
            return t - start;
        }
        std::hint::spin_loop();
    }
}

/// What an experiment's start saw, for its end to subtract.
#[derive(Debug, Clone)]
pub struct Started {
    at: u64,
    global: u64,
    counts: Vec<Count>,
}

/// What the threads did about an experiment's delay, ns summed over threads; and the selected section's
/// ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// How much the sleeps that paid it overslept: delay too, in `inserted` (the sleeping thread was
    /// that much ahead, and the others paid it as well).
    pub overshoot: u64,
    /// Delay paid by sleeping, and skipped on waking.
    pub paid: u64,
    pub skipped: u64,
    /// Delay inserted while threads waited in `sync` with no thread to wake them (a time-out), which
    /// they then paid.
    pub unwoken: u64,
    /// Of `paid`, what the threads' CPU-time timers made them pay (long stretches without a call).
    pub ticked: u64,
    /// Ends of the selected section.
    pub selected_ends: u64,
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            overshoot: 0,
            paid: 0,
            skipped: 0,
            unwoken: 0,
            ticked: 0,
            selected_ends: 0,
        }
    }
}

/// What an experiment measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    /// Its length, ns.
    pub elapsed: u64,
    /// The delay inserted during it, ns.
    pub inserted: u64,
    /// What the threads paid, skipped, and more.
    pub tally: Tally,
    /// Per section id: its starts and ends during the experiment.
    pub counts: Vec<Count>,
    /// Per section id: its calls under way at the experiment's end (started and not ended, on every
    /// thread): a latency point's `difference`.
    pub under_way: Vec<u64>,
}

impl Ended {
    /// The time the program would have taken with the section sped up: the length less the delay
    /// inserted (the sleeps' overshoot included), ns.
    pub fn duration(&self) -> u64 {
        self.elapsed.saturating_sub(self.inserted)
    }
}

/// Starts an experiment: `section` sped up by `speedup` (0 to 1). `open` lists the threads (index, frames)
/// where the section is open now: they count from now.
pub fn start(section: u32, speedup: f64, open: &[(u32, u32)]) -> Started {
    let mut sh = poison::lock(&SHARED);
    let now = now();
    let global = sh.turn(now);
    sh.running = true;
    sh.selected = section;
    sh.speedup = speedup;
    sh.tally = Tally::new();
    let crediting = open.iter().map(|&(thread, depth)| Crediting {
        thread,
        base: global,
        since: Some(now),
        depth,
    });
    heap::untracked(|| sh.crediting.extend(crediting));
    Started {
        at: now,
        global,
        counts: heap::untracked(|| sh.counts.clone()),
    }
}

/// Ends the experiment `started` began.
pub fn end(started: &Started) -> Ended {
    let mut sh = poison::lock(&SHARED);
    let now = now();
    let inserted = sh.turn(now);
    sh.running = false;
    sh.speedup = 0.0;
    let counts = sh
        .counts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let before = started.counts.get(i).copied().unwrap_or_default();
            Count {
                arrivals: c.arrivals - before.arrivals,
                departures: c.departures - before.departures,
            }
        })
        .collect();
    Ended {
        elapsed: now - started.at,
        inserted: inserted - started.global,
        tally: sh.tally,
        counts,
        under_way: sh
            .counts
            .iter()
            .map(|c| c.arrivals.saturating_sub(c.departures))
            .collect(),
    }
}

/// Every section's starts and ends so far, by id.
pub fn counts() -> Vec<Count> {
    poison::lock(&SHARED).counts.clone()
}

#[cfg(test)]
mod tests;
