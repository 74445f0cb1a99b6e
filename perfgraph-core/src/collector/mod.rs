//! The collecting side: the background thread (named `perfgraph`) and everything it runs.
//!
//! It samples resident memory every `PERFGRAPH_MEM_INTERVAL` ([`memory`]), drains every thread's ring
//! (counting what was lost) and hands the records to live print ([`live`]) and the outputs: each an
//! [`Output`], built from the settings in one list ([`outputs::list`]): interval
//! statistics, the trace streamed to its file ([`trace`]), the reports and files at exit (written by
//! [`files`]), and the network wing ([`net`]: the control socket, Prometheus, OTLP). Between passes it
//! parks until its next deadline; recording threads wake it only when something needs it at
//! once (a watched section ended, a memory alert, a thread exited), and the exit handler ([`exit`]) puts
//! the exit in its inbox ([`process::receiver`]) and wakes it; so does the watcher of SIGINT, SIGTERM and
//! SIGHUP ([`signals`]), which then raises the signal again.
//!
//! Draining is the expensive part of a pass when threads record millions of sections a second, so a pass
//! drains only when someone needs the records: always when an output keeps every record (the trace,
//! interval statistics), with passes paced by how fast the rings fill ([`Collector::fill_time`]), else when a recording thread woke it (what woke it is in the ring), when live print
//! asks, and every [`DRAIN_PERIOD`] (so a moderately busy program loses nothing to overflow). The other
//! passes only sample memory and let live print look at what runs.

pub(crate) mod critical;
pub(crate) mod exit;
pub(crate) mod files;
pub(crate) mod fork;
pub(crate) mod interval;
pub(crate) mod live;
pub(crate) mod memory;
pub(crate) mod net;
pub(crate) mod output;
pub(crate) mod outputs;
pub(crate) mod overhead;
pub(crate) mod signals;
pub(crate) mod sockets;
pub(crate) mod terminal;
pub(crate) mod trace;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::base::config::Config;
use crate::base::process::{self, Message};
use crate::base::{clock, heap, registry, sys};
use crate::local::record::{Decoder, Record};
use crate::local::ring::{self, Cursor};
use crate::local::thread::{self, ThreadState};
use crate::local::threads;
use live::Live;
use output::{Every, Look, Output, Sample};

/// Longest the background thread goes without draining the rings when no output needs every record, while
/// threads record.
pub const DRAIN_PERIOD: Duration = Duration::from_millis(250);

/// Longest it goes without draining when the drains find nothing (no record, no exited thread): the period
/// doubles from [`DRAIN_PERIOD`] up to this, and is back to [`DRAIN_PERIOD`] after the first drain that
/// finds something. An idle program then pays for no scheduled drain passes of its own.
pub const DRAIN_QUIET_MAX: Duration = Duration::from_secs(2);

/// Sections a second per thread that an output keeping every record (the trace) is paced for: its drains
/// come before a thread recording at this rate fills a quarter of its ring.
pub const LOSSLESS_RATE: u64 = 2_000_000;

/// Test hook: while set, the background thread does not drain the rings (a deliberately slow consumer).
static PAUSED: AtomicBool = AtomicBool::new(false);

/// Stops (`true`) or resumes (`false`) draining the rings, so tests can make the consumer fall behind.
/// Aggregates stay exact either way; only per-record outputs lose what overflows. Not a public API.
pub fn pause_draining(paused: bool) {
    PAUSED.store(paused, Ordering::Relaxed);
    process::wake();
}

/// Starts the background thread with `config`, and the exit handler that asks it for its final pass.
/// Without a thread (the spawn failed) nothing is collected: sections are still counted in the trees.
pub(crate) fn spawn(config: Config) {
    let spawned = std::thread::Builder::new()
        .name("perfgraph".into())
        .spawn(move || background(config));
    if let Ok(handle) = spawned {
        process::mark_collecting(handle.thread().clone());
        sys::at_exit(exit::at_exit);
    }
}

/// One thread's ring as seen by the background thread.
struct Tracked {
    state: Arc<ThreadState>,
    cursor: Cursor,
    /// Joins the CPU figures records to their sections' records, across drains.
    decoder: Decoder,
    /// Drained after the thread exited: nothing more will come.
    finished: bool,
    /// Exited with sections still open, so never folded (`threads::retire`).
    pinned: bool,
}

/// The background thread's state.
pub(crate) struct Collector {
    /// The live threads whose rings this thread drains; a finished one is folded and dropped from here.
    tracked: Vec<Tracked>,
    /// The next thread index not tracked yet.
    next_index: u32,
    /// The live threads, in order (a copy of the global list, refreshed when it changed).
    threads: Vec<Arc<ThreadState>>,
    /// `threads::generation()` when `threads` was copied.
    generation: u64,
    /// When the next memory sample is due.
    memory: memory::Pace,
    /// `process::wakes()` as the last pass read it.
    seen_wakes: u64,
    /// Monotonic ns by which the next drain is due regardless of need.
    next_drain: u64,
    /// The current period of those drains (ns): in `DRAIN_PERIOD..=DRAIN_QUIET_MAX`.
    drain_period: u64,
    /// Records in each ring (`Config::ring_capacity`).
    ring_capacity: u64,
    /// The most records one ring held at the last drain, and monotonic ns of that drain.
    busiest: (u64, u64),
    records: Vec<Record>,
    /// The marks among the records drained (futures' lives, instant events), for the trace only.
    marks: Vec<Record>,
    /// Whether the warning on interleaved sections was printed (it is printed once).
    warned_interleaved: bool,
    /// Whether the line on threads without a ring of their own was printed (it is printed once).
    warned_unmapped: bool,
    live: Option<Live>,
    /// The outputs the settings asked for ([`outputs::list`]), fed in this order.
    outputs: Vec<Box<dyn Output>>,
}

impl Collector {
    fn new(config: Config) -> Collector {
        let pace = memory::Pace::new(config.mem_interval_ns);
        Collector {
            live: Live::new(&config),
            outputs: outputs::list(&config),
            ring_capacity: config.ring_capacity() as u64,
            busiest: (0, clock::monotonic_ns()),
            seen_wakes: 0,
            next_drain: 0,
            drain_period: DRAIN_PERIOD.as_nanos() as u64,
            tracked: Vec::new(),
            next_index: 0,
            threads: Vec::new(),
            generation: u64::MAX,
            memory: pace,
            records: Vec::with_capacity(4096),
            marks: Vec::new(),
            warned_interleaved: false,
            warned_unmapped: false,
        }
    }

    /// Lets each output look between passes ([`Output::poll`]: the sockets accept, read and write),
    /// draining first for one that asks it. Returns how long the thread may sleep before it looks again
    /// (zero: a pass is wanted now; `None`: no output looks between passes).
    fn serve(&mut self) -> Option<Duration> {
        let mut within: Option<Duration> = None;
        for i in 0..self.outputs.len() {
            let mut look = self.outputs[i].poll(clock::monotonic_ns());
            if look == Look::DrainFirst {
                self.drain();
                look = self.outputs[i].poll(clock::monotonic_ns());
            }
            if let Look::Within(wait) = look {
                within = Some(within.map_or(wait, |w| w.min(wait)));
            }
        }
        within
    }

    /// Whether an output needs every record now, and how.
    fn every_record(&self) -> Every {
        self.outputs
            .iter()
            .map(|o| o.every_record())
            .fold(Every::No, Every::max)
    }

    /// One pass: sample memory if due, drain the rings if anyone needs it, let the outputs act. Returns the
    /// next deadline (monotonic ns).
    fn pass(&mut self, force_drain: bool) -> u64 {
        // Keep the ticks-to-ns ratio fresh: live print converts its time limit and printed times with it.
        clock::calibrate();
        let mono = clock::monotonic_ns();
        if mono >= self.memory.next_ns() {
            let bytes = memory::sample();
            if let Some(bytes) = bytes {
                let sample = Sample::new(clock::now().0, bytes);
                for o in &mut self.outputs {
                    o.on_memory(&sample);
                }
            }
            self.memory.sampled(mono, bytes);
        }
        // The records of what woke us are visible (`process::wakes` is an Acquire load).
        let wakes = process::wakes();
        let every_record = self.every_record() != Every::No;
        let drain = force_drain
            || wakes != self.seen_wakes
            || every_record
            || mono >= self.next_drain
            || self.live.as_ref().is_some_and(Live::wants_drain);
        self.seen_wakes = wakes;
        // An interval that is due ends now, before the drain, so a call that ends meanwhile is in the
        // records or in the running snapshot, never in neither; so does a trace window whose time is up.
        for o in &mut self.outputs {
            o.before_drain(clock::now().0);
        }
        if drain {
            let found = self.drain();
            self.drain_period = if found {
                DRAIN_PERIOD.as_nanos() as u64
            } else {
                (self.drain_period * 2).min(DRAIN_QUIET_MAX.as_nanos() as u64)
            };
            self.next_drain = mono + self.drain_period;
            if every_record {
                self.next_drain = mono + self.fill_time(mono);
            }
        } else {
            self.refresh_threads();
        }
        for o in &mut self.outputs {
            o.after_drain(mono);
        }
        let now = clock::now().0;
        let mut deadline = self.memory.next_ns().min(self.next_drain);
        if let Some(wait) = self
            .live
            .as_mut()
            .and_then(|live| live.tick(&self.threads, now))
        {
            deadline = deadline.min(mono + wait);
        }
        if let Some(live) = &mut self.live {
            for (ticks, text) in live.take_printed() {
                for o in &mut self.outputs {
                    o.on_printed(ticks, &text);
                }
            }
        }
        for o in &mut self.outputs {
            if let Some(wait) = o.tick(now) {
                deadline = deadline.min(mono + wait);
            }
        }
        // What this pass printed is on the screen (unless live print had to leave it to a later pass).
        if !self.live.as_ref().is_some_and(Live::deferred) {
            process::handled(wakes);
        }
        deadline
    }

    /// Drains as the rings fill, not only on a timer: how long (ns) until the busiest ring, recording at
    /// the rate it did since the last drain, fills a quarter of its capacity; from 1 ms up to the drain
    /// period, and, for an output that loses nothing after a quiet spell either ([`Every::Lossless`]: the
    /// trace, interval statistics, a trace window), up to the time a quarter of a ring takes at [`LOSSLESS_RATE`] (33 ms for the
    /// trace's rings of 262,144). Call after a drain.
    fn fill_time(&mut self, mono: u64) -> u64 {
        let (records, at) = std::mem::replace(&mut self.busiest, (0, mono));
        let elapsed = mono.saturating_sub(at).max(1);
        let quarter = self.ring_capacity / 4;
        let fill = if records == 0 {
            u64::MAX
        } else {
            (elapsed as u128 * quarter as u128 / records as u128).min(u64::MAX as u128) as u64
        };
        let burst = quarter * 1_000_000_000 / LOSSLESS_RATE;
        let longest = if self.every_record() == Every::Lossless {
            burst.clamp(1_000_000, self.drain_period)
        } else {
            self.drain_period.max(1_000_000)
        };
        fill.clamp(1_000_000, longest)
    }

    /// Picks up threads that recorded their first section, or were folded, since the last pass.
    fn refresh_threads(&mut self) {
        let generation = threads::generation();
        if generation != self.generation {
            self.threads = threads::all();
            self.generation = generation;
        }
    }

    /// Drains every live thread's ring (unless a test holds draining back) and hands the records to the
    /// outputs; then folds the threads whose final drain this was. Returns whether it found anything: a
    /// record, a new thread or an exited one.
    fn drain(&mut self) -> bool {
        let mut found = false;
        self.refresh_threads();
        // The live list is in order of index: the new threads are at its end.
        let new = self.threads.partition_point(|s| s.index < self.next_index);
        for state in &self.threads[new..] {
            self.tracked.push(Tracked {
                state: Arc::clone(state),
                // Its ring may be recycled: the records before its start are another thread's.
                cursor: state.stack.ring.cursor(),
                decoder: Decoder::default(),
                finished: false,
                pinned: false,
            });
            self.next_index = state.index + 1;
            found = true;
        }
        if PAUSED.load(Ordering::Relaxed) && !process::shutting_down() {
            return found;
        }
        for t in self.tracked.iter_mut().filter(|t| !t.finished) {
            let exited = t.state.exited();
            let dropped_before = t.cursor.dropped;
            self.records.clear();
            let records = &mut self.records;
            let decoder = &mut t.decoder;
            t.state
                .stack
                .ring
                .drain(&mut t.cursor, |w| decoder.push(w, records));
            // Relaxed: this thread is the only writer; readers only want a recent figure.
            t.state.dropped.store(t.cursor.dropped, Ordering::Relaxed);
            t.finished = exited;
            found |= exited || !self.records.is_empty();
            self.busiest.0 = self.busiest.0.max(self.records.len() as u64);
            if self.records.iter().any(Record::is_mark) {
                let marks = &mut self.marks;
                marks.clear();
                self.records.retain(|r| {
                    let mark = r.is_mark();
                    if mark {
                        marks.push(*r);
                    }
                    !mark
                });
                if let Some(live) = &mut self.live {
                    live.on_events(&t.state, &self.marks);
                }
                for o in &mut self.outputs {
                    o.on_marks(&t.state, &self.marks);
                }
            }
            if let Some(live) = &mut self.live {
                live.on_records(&t.state, &self.records);
            }
            if !self.records.is_empty() {
                for o in &mut self.outputs {
                    o.on_records(&t.state, &self.records);
                }
            }
            if t.cursor.dropped > dropped_before {
                let lost = t.cursor.dropped - dropped_before;
                for o in &mut self.outputs {
                    o.on_lost(&t.state, lost);
                }
            }
            // The trace takes the text args it writes; any left (no trace took them) go now.
            for r in self.records.iter().chain(&self.marks) {
                if let Some(args) = r.args {
                    args.discard();
                }
            }
            self.marks.clear();
            // A thread's drain at exit can be a whole ring of records: each one is a step.
            process::progress();
        }
        self.retire_finished();
        self.warn_once();
        found
    }

    /// The lines a drain may find cause for, each printed once: sections interleaved on one thread, and
    /// threads without a ring of their own.
    fn warn_once(&mut self) {
        if !self.warned_interleaved
            && let Some((ended, open)) = thread::interleaved()
        {
            self.warned_interleaved = true;
            let name = |id| registry::info(id).map_or("?", |i| i.name);
            terminal::screen::warn(&format!(
                "perfgraph: warning: section `{}` ended while `{}`, opened after it on the same thread, was \
                 still open: sections interleaved on one thread (a `time_section!` guard held across an \
                 `.await`?); `{}` was ended with `{}`. Time async code with `#[timed] async fn` or \
                 `time_future!`, which enter the section on every poll",
                name(ended),
                name(open),
                name(open),
                name(ended)
            ));
        }
        if !self.warned_unmapped && ring::unmapped() > 0 {
            self.warned_unmapped = true;
            terminal::screen::warn(
                "perfgraph: warning: out of memory for a thread's ring of section records: such threads \
                 record into a 2-slot ring; their counts and times are exact, the trace and interval \
                 statistics lack most of their calls",
            );
        }
    }

    /// Folds every thread drained after its exit (`threads::retire`) once live print is done with it, and
    /// stops tracking it: its state and ring can go. Work per pass is in proportion to the live threads.
    fn retire_finished(&mut self) {
        let live = &mut self.live;
        let outputs = &mut self.outputs;
        let before = self.tracked.len();
        self.tracked.retain_mut(|t| {
            if !t.finished || t.pinned {
                return true;
            }
            let index = t.state.index;
            // Live print still shows (or waits for) one of its calls: the next snapshot clears it.
            if live.as_ref().is_some_and(|l| l.busy(index)) {
                return true;
            }
            for o in outputs.iter_mut() {
                o.on_retiring(&t.state);
            }
            if !threads::retire(&t.state, t.cursor.dropped) {
                t.pinned = true;
                return true;
            }
            if let Some(l) = live.as_mut() {
                l.forget(index);
            }
            for o in outputs.iter_mut() {
                o.on_retired(index);
            }
            false
        });
        if self.tracked.len() != before {
            self.refresh_threads();
        }
    }

    /// The final pass at process exit.
    fn finish(&mut self) {
        // First: no client connects to a process that will not answer.
        for o in &mut self.outputs {
            o.close();
        }
        self.pass(true);
        process::progress();
        // Once more: sections that left the last pass's snapshot have their end records in the rings now.
        self.drain();
        process::progress();
        clock::calibrate();
        // Again, now that caches and the clock are warm: the lower figure stands.
        overhead::measure();
        if let Some(live) = &mut self.live {
            // The final `Finished` lines show the memory at exit, read now, not the last sample.
            let _ = memory::sample();
            live.finish(clock::now().0);
            for (ticks, text) in live.take_printed() {
                for o in &mut self.outputs {
                    o.on_printed(ticks, &text);
                }
            }
        }
        process::progress();
        // The trace ends now: a thread that goes on recording through the exit (a worker `main` did not
        // join) has every call that ended by now drained into it, or counted as lost to ring overflow;
        // what ends later is after the trace's end. Live print is over: this drain is for the outputs.
        self.live = None;
        let end = clock::now().0;
        for o in &mut self.outputs {
            o.end_at(end);
        }
        self.drain();
        process::progress();
        for o in &mut self.outputs {
            o.print_at_exit();
        }
        for o in &mut self.outputs {
            o.finish();
        }
    }
}

fn background(config: Config) {
    // Signals sent to the process go to the program's threads, as without perfgraph (a program that blocks
    // a signal in its threads to `sigwait` for it keeps it).
    sys::block_signals_here();
    // What this thread allocates and frees is perfgraph's own (buffers, the trace, reports, the blocks it
    // frees for exited threads, allocated untracked on theirs): never counted against the program's heap.
    heap::pause();
    overhead::measure();
    let mut collector = Collector::new(config);
    let inbox = process::receiver();
    loop {
        // The exit is a message, and the flag `begin_shutdown` set before sending it.
        let exit = inbox.try_iter().any(|m| m == Message::Exit);
        if exit || process::shutting_down() {
            collector.finish();
            break;
        }
        let rings = process::rings();
        let deadline = collector.pass(false);
        process::count_pass();
        loop {
            let poll = collector.serve();
            let now = clock::monotonic_ns();
            if deadline <= now || poll == Some(Duration::ZERO) {
                break;
            }
            // Until the deadline or the doorbell (a wake-up or a message): the next pass acts on both.
            // While the control socket listens, it is looked at in between.
            let wait = Duration::from_nanos(deadline - now);
            std::thread::park_timeout(poll.map_or(wait, |p| p.min(wait)));
            if poll.is_none() || process::rings() != rings || process::shutting_down() {
                break;
            }
        }
    }
    exit::finished();
}
