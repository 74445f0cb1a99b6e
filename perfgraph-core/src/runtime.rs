//! The runtime: one-time set-up at the first recorded section, the background thread, and process exit.
//!
//! The background thread (named `perfgraph`) samples resident memory every `PERFGRAPH_MEM_INTERVAL`, drains
//! every thread's ring (counting what was lost) and hands the records to the outputs. It sleeps in
//! `park_timeout` until its next deadline; recording threads `unpark` it only when something needs it at
//! once (a watched section ended, a memory alert, a thread exited).
//!
//! At process exit (return from `main` or `std::process::exit`) an `atexit` handler asks it for a final pass
//! and waits for it at most [`EXIT_WAIT`], so a stuck output can lose its own lines but never hang the exit.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Once, OnceLock};
use std::time::Duration;

use crate::config::{Config, LiveMode};
use crate::live::Live;
use crate::outputs::Outputs;
use crate::ring::Cursor;
use crate::thread::{self, MEM_ALERT_KB, Record, ThreadState};
use crate::{clock, guard, memory};

/// Longest the exit handler waits for the background thread's final pass.
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

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

/// Whether process exit has begun (the background thread is doing its final pass).
pub(crate) fn shutting_down() -> bool {
    SHUTDOWN.load(Ordering::Relaxed)
}

/// Number of completed passes of the background thread, so tests can wait for one without sleeping blindly.
pub fn passes() -> u64 {
    PASSES.load(Ordering::Relaxed)
}

static PASSES: AtomicU64 = AtomicU64::new(0);
/// Resident memory at start-up, KiB: the baseline of the report's root row (its memory is the change since).
static START_RSS_KB: AtomicU32 = AtomicU32::new(0);

/// Resident memory sampled at start-up, KiB (0 if it could not be read).
pub(crate) fn start_rss_kb() -> u32 {
    START_RSS_KB.load(Ordering::Relaxed)
}
static FINISHED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

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

/// Wakes the background thread now (cheap when it is already awake).
pub(crate) fn wake() {
    if let Some(thread) = BACKGROUND.get() {
        thread.unpark();
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| shutdown(EXIT_WAIT));
}

/// Asks the background thread for its final pass and waits for it, at most `wait`.
pub(crate) fn shutdown(wait: Duration) {
    if BACKGROUND.get().is_none() || SHUTDOWN.swap(true, Ordering::AcqRel) {
        return;
    }
    wake();
    let (lock, cvar) = &FINISHED;
    let done = lock.lock().unwrap_or_else(|e| e.into_inner());
    let _ = cvar.wait_timeout_while(done, wait, |done| !*done);
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
    records: Vec<Record>,
    live: Option<Live>,
    outputs: Outputs,
}

impl Collector {
    fn new(config: Config) -> Collector {
        Collector {
            live: Live::new(&config),
            outputs: Outputs::new(&config),
            config,
            tracked: Vec::new(),
            threads: Vec::new(),
            next_memory: 0,
            records: Vec::with_capacity(4096),
        }
    }

    /// One pass: sample memory if due, drain every ring, let the outputs act. Returns the next deadline
    /// (monotonic ns).
    fn pass(&mut self) -> u64 {
        // Keep the ticks-to-ns ratio fresh: live print converts its time limit and printed times with it.
        clock::calibrate();
        let mono = clock::monotonic_ns();
        if mono >= self.next_memory {
            if let Some(bytes) = memory::sample() {
                self.outputs.on_memory(clock::now(), bytes);
            }
            self.next_memory = mono + self.config.mem_interval_ns;
        }
        let all = thread::all();
        for state in all.iter().skip(self.tracked.len()) {
            self.tracked.push(Tracked {
                state: Arc::clone(state),
                cursor: Cursor::default(),
                finished: false,
            });
        }
        self.threads = all;
        let paused = PAUSED.load(Ordering::Relaxed) && !SHUTDOWN.load(Ordering::Relaxed);
        for t in self.tracked.iter_mut().filter(|t| !t.finished && !paused) {
            let exited = t.state.exited();
            self.records.clear();
            let records = &mut self.records;
            t.state
                .ring
                .drain(&mut t.cursor, |w| records.push(Record::from_words(w)));
            // Relaxed: this thread is the only writer; readers only want a recent figure.
            t.state.dropped.store(t.cursor.dropped, Ordering::Relaxed);
            t.finished = exited;
            if !self.records.is_empty() {
                if let Some(live) = &mut self.live {
                    live.on_records(&t.state, &self.records);
                }
                self.outputs.on_records(&t.state, &self.records);
            }
        }
        let now = clock::now();
        let mut deadline = self.next_memory;
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
        deadline
    }

    /// The final pass at process exit.
    fn finish(&mut self) {
        self.pass();
        clock::calibrate();
        if let Some(live) = &mut self.live {
            live.finish(&self.threads, clock::now());
        }
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
        let deadline = collector.pass();
        PASSES.fetch_add(1, Ordering::Relaxed);
        let now = clock::monotonic_ns();
        if deadline > now {
            std::thread::park_timeout(Duration::from_nanos(deadline - now));
        }
    }
    let (lock, cvar) = &FINISHED;
    *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
    cvar.notify_all();
}
