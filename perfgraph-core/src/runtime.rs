//! The runtime: one-time set-up at the first recorded section, the background thread, and process exit.
//!
//! The background thread (named `perfgraph`) samples resident memory every `PERFGRAPH_MEM_INTERVAL`, drains
//! every thread's ring (counting what was lost) and hands the records to the outputs. It sleeps in
//! `park_timeout` until its next deadline; recording threads `unpark` it only when something needs it at
//! once (a watched section ended, a memory alert, a thread exited).
//!
//! Draining is the expensive part of a pass when threads record millions of sections a second, so a pass
//! drains only when someone needs the records: always when an output keeps every record (the trace,
//! interval statistics), else when a recording thread woke it (what woke it is in the ring), when live print
//! asks, and every [`DRAIN_PERIOD`] (so a moderately busy program loses nothing to overflow). The other
//! passes only sample memory and let live print look at what runs.
//!
//! At process exit (return from `main` or `std::process::exit`) an `atexit` handler asks it for a final pass
//! and waits for it while it makes progress ([`progress`]: each step of the final pass, each block a file
//! writer hands the OS). A final pass that makes none for [`EXIT_WAIT`] (a disk or pipe that takes no
//! writes) is given up with one line on stderr, and its half-written file removed: a stuck output loses its
//! own lines but never hangs the exit, while a large trace that is still being written is not cut short.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once, OnceLock};
use std::time::Duration;

use crate::config::{Config, LiveMode};
use crate::live::Live;
use crate::outputs::Outputs;
use crate::ring::Cursor;
use crate::thread::{self, MEM_ALERT_KB, Record, ThreadState};
use crate::{clock, guard, memory};

/// Longest the exit handler waits for the background thread's final pass to make progress: it gives up
/// after this long without any.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Longest the background thread goes without draining the rings when no output needs every record.
pub const DRAIN_PERIOD: Duration = Duration::from_millis(250);

static INIT: Once = Once::new();
static CONFIG: OnceLock<Config> = OnceLock::new();
static BACKGROUND: OnceLock<std::thread::Thread> = OnceLock::new();
static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Test hook: while set, the background thread does not drain the rings (a deliberately slow consumer).
static PAUSED: AtomicBool = AtomicBool::new(false);

/// Stops (`true`) or resumes (`false`) draining the rings, so tests can make the consumer fall behind.
/// Aggregates stay exact either way; only per-record outputs lose what overflows. Not a public API.
pub fn pause_draining(paused: bool) {
    PAUSED.store(paused, Ordering::Relaxed);
    wake();
}

/// Whether the runtime is set up (a section was recorded, or settings were read): the clock's ticks mean
/// something only from then on.
pub(crate) fn started() -> bool {
    INIT.is_completed()
}

/// Whether process exit has begun (the background thread is doing its final pass).
pub(crate) fn shutting_down() -> bool {
    SHUTDOWN.load(Ordering::Relaxed)
}

/// Number of completed passes of the background thread, so tests can wait for one without sleeping blindly.
/// A pass after a wake-up (a thread exit, [`pause_draining`]) drains every ring.
pub fn passes() -> u64 {
    // Acquire: pairs with the Release increment in `background`. What a counted pass did happens before
    // what the caller does next: a test that advances a fake clock after seeing the first pass cannot have
    // that pass's memory sample stamped with the advanced time.
    PASSES.load(Ordering::Acquire)
}

static PASSES: AtomicU64 = AtomicU64::new(0);
/// Wake-up requests so far ([`wake`]): rare by design (a watched section ended, a memory alert, a thread
/// exited, a test hook), so a counter costs nothing on the hot path.
static WAKES: AtomicU64 = AtomicU64::new(0);
/// The value of [`WAKES`] that the last completed pass read before it drained: every wake-up up to it has
/// been acted on (its records drained, live print's lines handed to the terminal).
static HANDLED: AtomicU64 = AtomicU64::new(0);
/// Resident memory at start-up, KiB: the baseline of the report's root row (its memory is the change since).
static START_RSS_KB: AtomicU32 = AtomicU32::new(0);

/// Resident memory sampled at start-up, KiB (0 if it could not be read).
pub(crate) fn start_rss_kb() -> u32 {
    START_RSS_KB.load(Ordering::Relaxed)
}
static FINISHED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
/// Steps the final pass has made so far ([`progress`]). Only compared between two reads by the exit
/// handler, so Relaxed: a late-seen step just waits one slice longer.
static PROGRESS: AtomicU64 = AtomicU64::new(0);

/// The final pass at exit made headway (a step done, a block written to a file): the exit handler keeps
/// waiting for it.
pub(crate) fn progress() {
    PROGRESS.fetch_add(1, Ordering::Relaxed);
}

/// Sets the runtime up once: settings, clock, first memory sample, background thread, exit handler.
pub(crate) fn ensure_init() -> bool {
    INIT.call_once(init);
    true
}

/// The settings in force (read from the environment at first use).
pub fn config() -> &'static Config {
    ensure_init();
    CONFIG.get_or_init(Config::default)
}

fn init() {
    let (config, warnings) = Config::from_env();
    for warning in &warnings {
        crate::output::warn(warning);
    }
    clock::init(config.clock_monotonic);
    if memory::sample().is_some() {
        START_RSS_KB.store(memory::current_kb(), Ordering::Relaxed);
    }
    guard::init_threshold(config.verbosity);
    if config.live != LiveMode::Off {
        MEM_ALERT_KB.store((config.mem_limit_bytes / 1024) as i64, Ordering::Relaxed);
    }
    let config = CONFIG.get_or_init(|| config).clone();
    let spawned = std::thread::Builder::new()
        .name("perfgraph".into())
        .spawn(move || background(config));
    if let Ok(handle) = spawned {
        let _ = BACKGROUND.set(handle.thread().clone());
        // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds (it catches panics).
        unsafe { libc::atexit(at_exit) };
    }
}

/// Wakes the background thread now for a pass that drains the rings (cheap when it is already awake).
pub(crate) fn wake() {
    // Release: pairs with the Acquire load in `Collector::pass`; the pass that sees this count sees the
    // records pushed before it.
    WAKES.fetch_add(1, Ordering::Release);
    if let Some(thread) = BACKGROUND.get() {
        thread.unpark();
    }
}

/// Waits (at most `max`) until the background thread has acted on every wake-up requested so far, so what
/// woke it (a shown section's end) is printed before the caller's output. Returns at once when nothing is
/// pending, which is nearly always.
pub(crate) fn catch_up(max: Duration) {
    // Acquire: pairs with the Release store of `HANDLED` (a caught-up pass's output is on the screen) and
    // the Release increments of `WAKES`.
    let target = WAKES.load(Ordering::Acquire);
    if HANDLED.load(Ordering::Acquire) >= target || shutting_down() {
        return;
    }
    let Some(thread) = BACKGROUND.get() else {
        return;
    };
    thread.unpark();
    let deadline = std::time::Instant::now() + max;
    // Acquire: as above.
    while HANDLED.load(Ordering::Acquire) < target && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(50));
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| shutdown(EXIT_WAIT));
}

/// Asks the background thread for its final pass and waits for it as long as it makes progress; gives up
/// after `stall` without any (saying so on stderr and removing the file it was writing).
pub(crate) fn shutdown(stall: Duration) {
    if BACKGROUND.get().is_none() || SHUTDOWN.swap(true, Ordering::AcqRel) {
        return;
    }
    wake();
    let (lock, cvar) = &FINISHED;
    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut seen = PROGRESS.load(Ordering::Relaxed);
    let mut last_progress = std::time::Instant::now();
    let slice = Duration::from_millis(20).min(stall);
    while !*done {
        done = match cvar.wait_timeout(done, slice) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
        let now = PROGRESS.load(Ordering::Relaxed);
        if now != seen {
            seen = now;
            last_progress = std::time::Instant::now();
        } else if !*done && last_progress.elapsed() >= stall {
            drop(done);
            give_up(stall);
            return;
        }
    }
}

/// The final pass is stuck: say so, and remove the half-written file so none is left behind.
#[cold]
fn give_up(stall: Duration) {
    let line = match crate::export::abandon_current() {
        Some((variable, path, removed)) => format!(
            "perfgraph: error: exit: writing {variable} file {:?} made no progress for {} s; gave up{}, \
             and the outputs after it are not written",
            path.display().to_string(),
            stall.as_secs_f64(),
            if removed {
                " (the partial file is removed)"
            } else {
                ""
            }
        ),
        None => format!(
            "perfgraph: error: exit: the final outputs made no progress for {} s; gave up, and what \
             they had not written yet is lost",
            stall.as_secs_f64()
        ),
    };
    crate::output::warn(&line);
}

/// One thread's ring as seen by the background thread.
struct Tracked {
    state: Arc<ThreadState>,
    cursor: Cursor,
    /// Drained after the thread exited: nothing more will come.
    finished: bool,
}

/// The background thread's state.
pub(crate) struct Collector {
    config: Config,
    tracked: Vec<Tracked>,
    /// Every thread that recorded, in order (a copy of the global list, refreshed each pass).
    threads: Vec<Arc<ThreadState>>,
    next_memory: u64,
    /// `WAKES` as the last pass read it.
    seen_wakes: u64,
    /// Monotonic ns by which the next drain is due regardless of need.
    next_drain: u64,
    /// An output keeps every record: drain at every pass.
    every_record: bool,
    records: Vec<Record>,
    live: Option<Live>,
    outputs: Outputs,
}

impl Collector {
    fn new(config: Config) -> Collector {
        Collector {
            live: Live::new(&config),
            outputs: Outputs::new(&config),
            // The trace and the interval statistics (`outputs`) use every record; the rest of `outputs`
            // reads the call trees.
            every_record: config.needs_every_record(),
            seen_wakes: 0,
            next_drain: 0,
            config,
            tracked: Vec::new(),
            threads: Vec::new(),
            next_memory: 0,
            records: Vec::with_capacity(4096),
        }
    }

    /// One pass: sample memory if due, drain the rings if anyone needs it, let the outputs act. Returns the
    /// next deadline (monotonic ns).
    fn pass(&mut self, force_drain: bool) -> u64 {
        // Keep the ticks-to-ns ratio fresh: live print converts its time limit and printed times with it.
        clock::calibrate();
        let mono = clock::monotonic_ns();
        if mono >= self.next_memory {
            if let Some(bytes) = memory::sample() {
                self.outputs.on_memory(clock::now(), bytes);
            }
            self.next_memory = mono + self.config.mem_interval_ns;
        }
        // Acquire: pairs with the Release increment in `wake`; the records of what woke us are visible.
        let wakes = WAKES.load(Ordering::Acquire);
        let drain = force_drain
            || wakes != self.seen_wakes
            || self.every_record
            || mono >= self.next_drain
            || self.live.as_ref().is_some_and(Live::wants_drain);
        self.seen_wakes = wakes;
        // An interval that is due ends now, before the drain, so a call that ends meanwhile is in the
        // records or in the running snapshot, never in neither.
        self.outputs.before_drain(clock::now());
        if drain {
            self.drain();
            self.next_drain = mono + DRAIN_PERIOD.as_nanos() as u64;
        } else {
            self.refresh_threads();
        }
        let now = clock::now();
        let mut deadline = self.next_memory.min(self.next_drain);
        if let Some(wait) = self
            .live
            .as_mut()
            .and_then(|live| live.tick(&self.threads, now))
        {
            deadline = deadline.min(mono + wait);
        }
        if let Some(wait) = self.outputs.tick(now) {
            deadline = deadline.min(mono + wait);
        }
        // Release: pairs with the Acquire loads in `catch_up`; what this pass printed is on the screen.
        HANDLED.store(wakes, Ordering::Release);
        deadline
    }

    /// Picks up threads that recorded their first section since the last pass.
    fn refresh_threads(&mut self) {
        if thread::count() != self.threads.len() {
            self.threads = thread::all();
        }
    }

    /// Drains every ring (unless a test holds draining back) and hands the records to the outputs.
    fn drain(&mut self) {
        self.refresh_threads();
        for state in self.threads.iter().skip(self.tracked.len()) {
            self.tracked.push(Tracked {
                state: Arc::clone(state),
                cursor: Cursor::default(),
                finished: false,
            });
        }
        if PAUSED.load(Ordering::Relaxed) && !SHUTDOWN.load(Ordering::Relaxed) {
            return;
        }
        for t in self.tracked.iter_mut().filter(|t| !t.finished) {
            let exited = t.state.exited();
            self.records.clear();
            let records = &mut self.records;
            t.state
                .ring
                .drain(&mut t.cursor, |w| records.push(Record::from_words(w)));
            // Relaxed: this thread is the only writer; readers only want a recent figure.
            t.state.dropped.store(t.cursor.dropped, Ordering::Relaxed);
            t.finished = exited;
            if let Some(live) = &mut self.live {
                live.on_records(&t.state, &self.records);
            }
            if !self.records.is_empty() {
                self.outputs.on_records(&t.state, &self.records);
            }
        }
    }

    /// The final pass at process exit.
    fn finish(&mut self) {
        self.pass(true);
        progress();
        // Once more: sections that left the last pass's snapshot have their end records in the rings now.
        self.drain();
        progress();
        clock::calibrate();
        if let Some(live) = &mut self.live {
            live.finish(clock::now());
        }
        progress();
        self.outputs.finish();
    }
}

fn background(config: Config) {
    let mut collector = Collector::new(config);
    loop {
        // Acquire: pairs with the AcqRel swap in `shutdown`.
        if SHUTDOWN.load(Ordering::Acquire) {
            collector.finish();
            break;
        }
        let deadline = collector.pass(false);
        // Release: pairs with the Acquire load in `passes`.
        PASSES.fetch_add(1, Ordering::Release);
        let now = clock::monotonic_ns();
        if deadline > now {
            std::thread::park_timeout(Duration::from_nanos(deadline - now));
        }
    }
    let (lock, cvar) = &FINISHED;
    *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
    cvar.notify_all();
}
