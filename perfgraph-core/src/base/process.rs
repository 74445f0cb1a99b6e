//! Process-wide state that every layer reads: whether the runtime has started, the background thread's
//! inbox (wake-ups and exit), the exit's progress, the pass count tests wait on, and the resident-set figure
//! sections read.
//!
//! Lower layers only *signal* here (a recording thread asks for a wake-up; a file writer reports progress);
//! the collector, which owns the background thread, reads the inbox and the counters. So nothing below the
//! collector ever calls up into it.
//!
//! It also says where perfgraph's own lines go ([`output_fd`]): fd 2, or, while the program's output is
//! captured, the descriptor fd 2 led to before.
//!
//! The inbox is a bounded `crossbeam-channel` of [`Message`]s; its doorbell is the background thread's park
//! token, which it waits on with a deadline (`park_timeout`). A recording thread's wake-up is the doorbell
//! alone (a counter and `unpark`): it measured cheaper than `try_send` on the recording side (the `wake`
//! bench, docs/design.md), and the pass it brings acts on everything anyway.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

/// What the background thread is asked to do besides its passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// The process is exiting: make the final pass.
    Exit,
}

/// The background thread's inbox. Bounded: a sender never blocks and never allocates.
fn inbox() -> &'static (Sender<Message>, Receiver<Message>) {
    static INBOX: OnceLock<(Sender<Message>, Receiver<Message>)> = OnceLock::new();
    INBOX.get_or_init(|| crossbeam_channel::bounded(8))
}

/// The receiving end, for the background thread only.
pub fn receiver() -> &'static Receiver<Message> {
    &inbox().1
}

/// The background thread, once it runs: the inbox's doorbell is its park token.
static COLLECTOR: OnceLock<std::thread::Thread> = OnceLock::new();

/// Rings the doorbell: the background thread's `park_timeout` returns (or its next one does at once). Not
/// in a forked child: the thread the doorbell names does not exist there.
fn ring() {
    if !collecting() {
        return;
    }
    // Relaxed: read by the background thread only to end its wait; the unpark orders the rest.
    RINGS.fetch_add(1, Ordering::Relaxed);
    if let Some(thread) = COLLECTOR.get() {
        thread.unpark();
    }
}

/// How many times the doorbell rang.
static RINGS: AtomicU64 = AtomicU64::new(0);

/// How many times the doorbell rang so far: the background thread, waking between passes to look at the
/// control socket, goes back to sleep only if this has not moved since before its last pass.
pub fn rings() -> u64 {
    RINGS.load(Ordering::Relaxed)
}

/// Set once the runtime's one-time start has finished (settings read, clock chosen).
static STARTED: AtomicBool = AtomicBool::new(false);
/// Set once the background thread runs: only then does waiting for it make sense.
static COLLECTING: AtomicBool = AtomicBool::new(false);
/// Set when process exit has begun.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);

/// Whether the runtime is set up (a section was recorded, or settings were read): the clock's ticks mean
/// something only from then on.
pub fn started() -> bool {
    // Acquire: pairs with the Release store in `mark_started`; the clock's choice is visible.
    STARTED.load(Ordering::Acquire)
}

/// Called once by the runtime's start, after the settings and the clock.
pub fn mark_started() {
    // Release: pairs with the Acquire load in `started`.
    STARTED.store(true, Ordering::Release);
}

/// Called once by the collector when its background thread runs: `thread` is the one to wake.
pub fn mark_collecting(thread: std::thread::Thread) {
    let _ = COLLECTOR.set(thread);
    // Relaxed: only tells `catch_up` whether waiting can ever end; it orders nothing.
    COLLECTING.store(true, Ordering::Relaxed);
}

/// Whether a background thread runs.
pub fn collecting() -> bool {
    COLLECTING.load(Ordering::Relaxed)
}

/// Set in a child forked after the runtime started (`collector::fork`).
static FORKED: AtomicBool = AtomicBool::new(false);

/// This process is a child forked after the runtime started: none of the parent's threads (the background
/// thread, the capture's forwarder, the signal watcher) exists in it, so nothing collects, nothing is
/// waited for at exit, and perfgraph's own lines go to fd 2 as they are. Called in the child right after
/// `fork`: atomic stores only (async-signal-safe).
pub fn mark_forked_child() {
    FORKED.store(true, Ordering::Relaxed);
    // Relaxed: the child has one thread now; these are read by it later.
    COLLECTING.store(false, Ordering::Relaxed);
    OUTPUT_FD.store(2, Ordering::Relaxed);
}

/// Whether this process is a child forked after the runtime started ([`mark_forked_child`]).
pub fn forked() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// Whether process exit has begun (the background thread is doing its final pass).
pub fn shutting_down() -> bool {
    // Acquire: pairs with the AcqRel swap in `begin_shutdown`.
    SHUTDOWN.load(Ordering::Acquire)
}

/// Starts process exit at `ticks` (the clock's, now): `true` for the one caller that did, `false` if it had
/// begun already. The first caller's `ticks` mark the run's end ([`run_end_ticks`]).
pub fn begin_shutdown(ticks: u64) -> bool {
    // AcqRel: the first caller's later `Exit` message is ordered after it; a second caller sees it.
    let first = !SHUTDOWN.swap(true, Ordering::AcqRel);
    if first {
        // Relaxed: read by the final pass, which the `Exit` message sent after this orders after it.
        SHUTDOWN_TICKS.store(ticks.max(1), Ordering::Relaxed);
    }
    first
}

/// The clock's ticks when process exit began (0: it has not).
static SHUTDOWN_TICKS: AtomicU64 = AtomicU64::new(0);

/// When the run ended: the clock's ticks when process exit began (the return from `main`, `exit`, a
/// signal that ends it), `None` before. The report's wall time and running sections' time so far end
/// there, not at the end of perfgraph's own final pass.
pub fn run_end_ticks() -> Option<u64> {
    match SHUTDOWN_TICKS.load(Ordering::Relaxed) {
        0 => None,
        ticks => Some(ticks),
    }
}

/// Wake-up requests so far ([`wake`]): rare by design, so a counter costs nothing on the hot path.
static WAKES: AtomicU64 = AtomicU64::new(0);
/// The value of [`WAKES`] that the last completed pass read before it drained: every wake-up up to it has
/// been acted on (its records drained, live print's lines handed to the terminal).
static HANDLED: AtomicU64 = AtomicU64::new(0);

/// Sends `message` to the background thread without blocking, and rings the doorbell.
pub fn send(message: Message) {
    // Full: the same messages are waiting already, and the pass they bring acts on everything.
    // Disconnected cannot happen (the inbox is never dropped). Neither is worth more than ignoring.
    let _ = inbox().0.try_send(message);
    ring();
}

/// Wakes the background thread now for a pass that drains the rings (cheap when one is already due).
pub fn wake() {
    // Release: pairs with the Acquire load in `wakes`; the pass that sees this count sees the records
    // pushed before it.
    WAKES.fetch_add(1, Ordering::Release);
    ring();
}

/// The wake-ups requested so far, for the background thread: read before it drains.
pub fn wakes() -> u64 {
    // Acquire: pairs with the Release increment in `wake`.
    WAKES.load(Ordering::Acquire)
}

/// The background thread acted on every wake-up up to `wakes` (its output is on the screen).
pub fn handled(wakes: u64) {
    // Release: pairs with the Acquire loads in `catch_up`.
    HANDLED.store(wakes, Ordering::Release);
}

/// Whether a wake-up is not yet acted on: a recording thread may be waiting in [`wake_for_line`] for its
/// closing line (or a ring or lock asked for a drain), so live print must not hold its text back.
pub fn line_awaited() -> bool {
    // Acquire: pairs with the Release stores in `handled` and increments in `wake`.
    WAKES.load(Ordering::Acquire) > HANDLED.load(Ordering::Acquire)
}

/// Waits (at most `max`) until the background thread has acted on every wake-up requested so far, so what
/// woke it (a shown section's end) is printed before the caller's output. Returns at once when nothing is
/// pending, which is nearly always.
pub fn catch_up(max: Duration) {
    // Acquire: pairs with the Release store in `handled` and the Release increments in `wake`.
    let target = WAKES.load(Ordering::Acquire);
    if HANDLED.load(Ordering::Acquire) >= target || shutting_down() || !collecting() {
        return;
    }
    ring();
    let deadline = Instant::now() + max;
    // Acquire: as above.
    while HANDLED.load(Ordering::Acquire) < target && Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Longest a recording thread that ended a section live print shows waits for the background thread to
/// print its closing line ([`wake_for_line`]). Reached only when the background thread cannot print (a
/// destination that takes nothing, where the program's own next write would wait too) or is not scheduled
/// for that long: on a terminal the line also waits for the capture's child to feed what the program wrote
/// before, and with both cores busy 0.5 s was not always enough (8 of 100 runs of the harness's `order`
/// shape, four runs side by side under two `yes`).
pub const SHOWN_END_WAIT: Duration = Duration::from_secs(2);

thread_local! {
    /// This thread holds the terminal's lock while running user code (inside `suspend`).
    static HOLDS_SCREEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread holds the terminal's lock while running user code (inside `suspend`).
pub fn holds_screen() -> bool {
    HOLDS_SCREEN.try_with(std::cell::Cell::get).unwrap_or(false)
}

/// Marks this thread as holding the terminal's lock while running user code (or no longer).
pub fn set_holds_screen(held: bool) {
    let _ = HOLDS_SCREEN.try_with(|h| h.set(held));
}

/// A section live print shows (or one that grew memory past its limit) has ended on this thread: wakes
/// the background thread and waits (at most [`SHOWN_END_WAIT`]) until it has printed the closing line, so
/// the line is out before anything the program writes after the section returns, as MOOSE's print thread
/// "instantly prints the finishing info". A cold path: only sections already on screen (or over the
/// memory limit) take it.
#[cold]
#[inline(never)]
pub fn wake_for_line() {
    wake();
    // Inside `suspend` this thread holds the terminal the background thread needs: the line follows.
    if !holds_screen() {
        catch_up(SHOWN_END_WAIT);
    }
}

/// Number of completed passes of the background thread.
static PASSES: AtomicU64 = AtomicU64::new(0);

/// Number of completed passes of the background thread, so tests can wait for one without sleeping blindly.
/// A pass after a wake-up drains every ring.
pub fn passes() -> u64 {
    // Acquire: pairs with the Release increment in `count_pass`. What a counted pass did happens before what
    // the caller does next: a test that advances a fake clock after seeing the first pass cannot have that
    // pass's memory sample stamped with the advanced time.
    PASSES.load(Ordering::Acquire)
}

/// The background thread completed a pass.
pub fn count_pass() {
    // Release: pairs with the Acquire load in `passes`.
    PASSES.fetch_add(1, Ordering::Release);
}

/// Steps the final pass has made so far ([`progress`]).
static PROGRESS: AtomicU64 = AtomicU64::new(0);

/// The final pass at exit made headway (a step done, a block written to a file, a few thousand nodes of a
/// tree built or rendered): the exit handler keeps waiting for it.
pub fn progress() {
    // Relaxed: only compared between two reads by the exit handler; a late-seen step waits one slice longer.
    PROGRESS.fetch_add(1, Ordering::Relaxed);
}

/// Items (tree nodes, threads, trace events, table rows) a long build or render handles between two
/// reports of [`progress`] ([`progress_at`]): a few microseconds of work at most, so a slow but moving exit
/// (a tree of millions of nodes) is never taken for a stuck one.
pub const PROGRESS_EVERY: usize = 4096;

/// For a loop over many items: reports [`progress`] at item `i` when `i` is a multiple of
/// [`PROGRESS_EVERY`] (item 0 included).
#[inline]
pub fn progress_at(i: usize) {
    if i.is_multiple_of(PROGRESS_EVERY) {
        progress();
    }
}

/// The progress count, for the exit handler.
pub fn progress_count() -> u64 {
    PROGRESS.load(Ordering::Relaxed)
}

/// Resident set in KiB, as last sampled (0 before the first sample).
static RSS_KB: AtomicU32 = AtomicU32::new(0);
/// Resident memory at start-up, KiB: the baseline of the report's root row.
static START_RSS_KB: AtomicU32 = AtomicU32::new(0);

/// The last resident-set sample, in KiB: what sections read when they start and end.
#[inline(always)]
pub fn rss_kb() -> u32 {
    // Relaxed: a figure exact to one sampling interval; nothing is ordered by it.
    RSS_KB.load(Ordering::Relaxed)
}

/// Whether a test sets the figure (`collector::memory::set_fake_kb`): then nothing reads the system's.
static FAKE_RSS: AtomicBool = AtomicBool::new(false);

/// Switches the fake figure on (a test's, before the runtime starts).
pub fn set_fake_rss() {
    FAKE_RSS.store(true, Ordering::Relaxed);
}

/// Whether the figure is a test's ([`set_fake_rss`]).
pub fn fake_rss() -> bool {
    FAKE_RSS.load(Ordering::Relaxed)
}

/// Publishes a resident-set sample (the memory sampler, or a test's fake figure).
pub fn set_rss_kb(kb: u32) {
    RSS_KB.store(kb, Ordering::Relaxed);
}

/// Resident memory sampled at start-up, KiB (0 if it could not be read).
pub fn start_rss_kb() -> u32 {
    START_RSS_KB.load(Ordering::Relaxed)
}

/// Records the start-up resident memory (the runtime's start, once).
pub fn set_start_rss_kb(kb: u32) {
    START_RSS_KB.store(kb, Ordering::Relaxed);
}
/// The program's name: the file name of `argv[0]`, read once.
pub fn program_name() -> &'static str {
    static NAME: OnceLock<&'static str> = OnceLock::new();
    NAME.get_or_init(|| {
        let name = std::env::args_os()
            .next()
            .and_then(|a| {
                std::path::Path::new(&a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "program".to_owned());
        Box::leak(name.into_boxed_str())
    })
}

/// The descriptor perfgraph writes its own lines to: 2 unless the program's output is captured.
static OUTPUT_FD: AtomicI32 = AtomicI32::new(2);

/// Where perfgraph's own lines go (live print, reports, warnings): fd 2, or, while the program's output is
/// captured (`PERFGRAPH_CAPTURE`), a copy of what fd 2 led to before the capture took fds 1 and 2 over.
pub fn output_fd() -> i32 {
    // Relaxed: set once, under the terminal's lock, before the capture's forwarder starts; every writer
    // reads it under that lock (or on a thread started after it).
    OUTPUT_FD.load(Ordering::Relaxed)
}

/// Sends perfgraph's own lines to `fd` from now on (the capture's start, under the terminal's lock).
#[cfg(feature = "capture")]
pub fn set_output_fd(fd: i32) {
    OUTPUT_FD.store(fd, Ordering::Relaxed);
}

/// Where the capture's forwarder child learns whether perfgraph's own text left the terminal mid-line (a
/// word of the memory shared with it; see `collector::terminal::capture`).
static OUTPUT_TAIL: OnceLock<&'static AtomicU64> = OnceLock::new();

/// The capture's start hands over the shared word that [`note_output`] keeps up to date.
#[cfg(feature = "capture")]
pub fn set_output_tail(word: &'static AtomicU64) {
    let _ = OUTPUT_TAIL.set(word);
}

/// perfgraph's own text ending in `last` reached the terminal: a child that forwards the program's bytes
/// after this process is gone starts them on a new line if `last` is not a newline.
pub fn note_output(last: u8) {
    if forked() {
        // The word is the parent's: its forwarder child reads it once the parent is gone.
        return;
    }
    if let Some(word) = OUTPUT_TAIL.get() {
        // Relaxed: the child reads it only after this process is gone.
        word.store(u64::from(last != b'\n'), Ordering::Relaxed);
    }
}

/// perfgraph's own cost per section, in picoseconds, as the background thread measured it at start-up; 0
/// until measured.
static OVERHEAD_PS: AtomicU64 = AtomicU64::new(0);

/// Records the cost per section a measurement found, ns (at start-up, then in the final pass): the lowest
/// so far stands, since a measurement can only be slowed down, never sped up.
pub fn set_overhead_ns(ns: f64) {
    let ps = (ns * 1000.0).round().max(1.0) as u64;
    // A later measurement replaces an earlier one only when lower (0: none yet).
    let _ = OVERHEAD_PS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
        (old == 0 || ps < old).then_some(ps)
    });
}

/// perfgraph's own cost per section, ns, once measured.
pub fn overhead_ns() -> Option<f64> {
    match OVERHEAD_PS.load(Ordering::Relaxed) {
        0 => None,
        ps => Some(ps as f64 / 1000.0),
    }
}
