//! The entry points: where the program first reaches perfgraph, and so where the runtime starts. The
//! macros' [`enter`] (at a thread's first section), and the public functions that read what was recorded
//! (through [`start`]). Nothing below this module starts anything: the layers under it only record, read and
//! signal.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crate::base::config::{self, Config, LiveMode, MemExact};
use crate::base::registry::{self, Section};
use crate::base::{clock, heap, identity, process};
use crate::collector::live;
use crate::collector::terminal::capture;
use crate::collector::terminal::screen;
use crate::collector::{self, fork, memory, signals};
use crate::data::args::{ArgValue, fill_message};
use crate::local::causal;
use crate::local::counters::{CounterSite, CounterValue};
use crate::local::frames::{CAUSAL, CPU, EXACT_MEM, HEAP};
use crate::local::guard::ArgsGuard;
use crate::local::guard::Guard;
use crate::local::marks::{self, EventSite};
use crate::local::record::{COUNTER, EVENT, Record};
use crate::local::thread::{self, HEAP_ALERT_KB, MEM_ALERT_KB, ThreadState};
use crate::local::threads;
use crate::local::verbosity;

/// Starts a recorded section at `site` unless its `level` is above the verbosity: what `#[timed]` and
/// `time_section!` expand to. Above the verbosity: one Relaxed load and a branch, and one more of each to
/// note (the first time only) that the site was skipped, for the reports.
#[inline(always)]
pub fn enter(site: &'static Section, level: u8) -> Guard {
    if verbosity::records(level) {
        enter_enabled(site, level)
    } else {
        site.note_skipped();
        Guard::OFF
    }
}

/// Gives a section call the args its site records (`args(...)`): `args` is evaluated (integers, floats
/// and bools taken as they are, anything else formatted) only if the call is recorded and an output wants
/// them: the trace (pushed at the call's end, before its record), or live print when the site's message
/// names them (`fill`: the message filled in now, for live print to show while the call runs).
#[inline]
pub fn with_args<const N: usize>(
    guard: Guard,
    site: &'static Section,
    fill: bool,
    args: impl FnOnce() -> [ArgValue; N],
) -> ArgsGuard<N> {
    // The trace writes them; with `PERFGRAPH_LIVE=all`, live print fills the message of calls it shows
    // only once they ended from them too.
    let trace = marks::events_wanted();
    let fill = fill && crate::local::pending::enabled();
    if !trace && !fill {
        return ArgsGuard::new(guard, 0, None);
    }
    let Some((state, depth)) = guard.owner() else {
        return ArgsGuard::new(guard, 0, None);
    };
    let id = site.id();
    let values = heap::untracked(args);
    if fill {
        fill_live_text(state, depth, site, &values);
    }
    ArgsGuard::new(guard, id, trace.then_some(values))
}

/// Fills the live message of the call at `depth` on `state` (this thread's) with `values`.
#[cold]
#[inline(never)]
fn fill_live_text(
    state: &'static ThreadState,
    depth: u32,
    site: &'static Section,
    values: &[ArgValue],
) {
    // SAFETY: `state` is this thread's own (the guard it came from is `!Send`).
    let Some(start) = (unsafe { state.open_start(depth) }) else {
        return;
    };
    if let Some(text) = filled_message(site, values) {
        state.live_texts.set(depth, start, text);
    }
}

/// `site`'s live message with its args' `values` in place of their placeholders.
pub(crate) fn filled_message(
    site: &'static Section,
    values: &[ArgValue],
) -> Option<std::sync::Arc<str>> {
    let info = registry::info(site.id())?;
    let named: Vec<(&str, ArgValue)> = info
        .args
        .iter()
        .copied()
        .zip(values.iter().cloned())
        .collect();
    Some(heap::untracked(|| fill_message(info.live, &named)).into())
}

/// An `event!` at `site` (`level`): an instant on this thread's track of the trace, and with
/// `PERFGRAPH_LIVE=all` a line of live print; `args` evaluated only if one of them is on.
#[inline]
pub fn event<const N: usize>(
    site: &'static EventSite,
    level: u8,
    args: impl FnOnce() -> [ArgValue; N],
) {
    if verbosity::records(level) {
        event_enabled(site, args);
    }
}

#[inline(never)]
fn event_enabled<const N: usize>(site: &'static EventSite, args: impl FnOnce() -> [ArgValue; N]) {
    if threads::current_ptr().is_null() {
        start();
    }
    if !marks::events_wanted() {
        return;
    }
    let state = threads::current();
    let mut values = heap::untracked(args);
    let id = site.id();
    let now = clock::now().0;
    // SAFETY: `state` is this thread's own state (`threads::current`).
    unsafe {
        if N > 0 {
            state.push_args(id, &mut values);
        }
        state.push_mark(Record::mark(id, now, now, EVENT, 0));
    }
}

/// A `counter!` sample: `value` for the counter of `site`, on this thread's table, and on the trace's
/// counter track while the trace is on. Nothing while recording is off (`PERFGRAPH_VERBOSITY=off`).
#[inline]
pub fn counter(site: &'static CounterSite, value: impl CounterValue) {
    let value = value.to_f64();
    let Some(state) = recording_thread() else {
        return;
    };
    let id = site.id();
    let now = clock::now().0;
    // SAFETY: `state` is this thread's own state (`recording_thread` returns the calling thread's).
    unsafe {
        state.counters.record(id, value, now);
        if marks::wanted() {
            state.push_mark(Record::mark(id, now, now, COUNTER, value.to_bits()));
        }
    }
}

/// The calling thread's state if anything records now (`PERFGRAPH_VERBOSITY` is not `off`): what a
/// `counter!` and a lock of `perfgraph_core::sync` record on. At the thread's first call it starts the
/// runtime and registers the thread, as a first section does.
#[inline]
pub(crate) fn recording_thread() -> Option<&'static ThreadState> {
    let ptr = threads::current_ptr();
    if ptr.is_null() {
        return first_recording_thread();
    }
    // Relaxed inside: one load of the verbosity's threshold.
    if !verbosity::records(0) {
        return None;
    }
    // SAFETY: a non-null `current_ptr` is this thread's own state, kept alive while the thread runs.
    Some(unsafe { &*ptr })
}

/// [`recording_thread`] on a thread that has not recorded yet: the settings are read first (the runtime's
/// start), so `PERFGRAPH_VERBOSITY=off` registers nothing.
#[cold]
#[inline(never)]
fn first_recording_thread() -> Option<&'static ThreadState> {
    start();
    if !verbosity::records(0) {
        return None;
    }
    Some(threads::current())
}

/// For a timed future's poll: the calling thread's state (starting the runtime and the thread if need
/// be), or `None` at the future's `first` poll if its `level` is above the verbosity (later polls of a
/// recorded future are always recorded, so its calls and polls stay paired).
pub fn poll_state(site: &'static Section, level: u8, first: bool) -> Option<&'static ThreadState> {
    let ptr = threads::current_ptr();
    if first && !ptr.is_null() && !verbosity::records(level) {
        site.note_skipped();
        return None;
    }
    let state = if ptr.is_null() {
        start();
        threads::current()
    } else {
        // SAFETY: a non-null `current_ptr` is this thread's own state, kept alive while the thread runs.
        unsafe { &*ptr }
    };
    if first && !verbosity::records(level) {
        site.note_skipped();
        return None;
    }
    Some(state)
}

/// Out of line, like the guard's exit, so the code at each call site is just the level check and a call:
/// the disabled path then costs a load and a branch, without the register saves the whole enabled path
/// would need in the caller's prologue.
#[inline(never)]
fn enter_enabled(site: &'static Section, level: u8) -> Guard {
    let id = site.id();
    let state = threads::current_ptr();
    if state.is_null() {
        return first_section(site, level);
    }
    // SAFETY: a non-null `current_ptr` is this thread's own state, kept alive for the whole process.
    let state = unsafe { &*state };
    match site.route() {
        // SAFETY: `state` is this thread's own state.
        FAST => unsafe { Guard::open(state, id) },
        0 => enter_routing(site, state, id),
        // SAFETY: as above.
        route => unsafe { Guard::open_with(state, id, route & (EXACT_MEM | CPU | CAUSAL)) },
    }
}

/// [`Section::route`] of a site whose sections take nothing out of line: no exact memory read, no CPU
/// clock, no heap counters. 0: not decided yet ([`enter_routing`]). Any other route is `ROUTED` with the
/// site's [`FrameData::flags`](crate::local::frames::FrameData::flags) ([`EXACT_MEM`], [`CPU`]), and
/// [`HEAP`] while the counting allocator counts.
const FAST: u8 = ROUTED;

/// The bit every decided [`Section::route`] has, above the frame flags.
const ROUTED: u8 = 0x80;

/// A site's first recorded section: decides (and caches) the site's route, from settings fixed at the
/// runtime's start, then opens the section with what it takes out of line.
#[cold]
#[inline(never)]
fn enter_routing(site: &'static Section, state: &'static ThreadState, id: u32) -> Guard {
    let flags = site_flags(site);
    let heap = if heap::counting() { HEAP } else { 0 };
    site.set_route(ROUTED | flags | heap);
    // SAFETY: `state` is this thread's own state (the caller's `current_ptr`).
    unsafe { Guard::open_with(state, id, flags) }
}

/// What a section at `site` takes out of line, but for the heap counters: [`EXACT_MEM`] if it reads
/// resident memory itself at its start and end, [`CPU`] if it reads the thread's CPU clock, [`CAUSAL`]
/// while causal profiling is on.
fn site_flags(site: &'static Section) -> u8 {
    let exact = if exact_mem(site) { EXACT_MEM } else { 0 };
    exact | poll_flags(site)
}

/// What a timed future's poll at `site` takes out of line ([`CPU`] if it measures CPU time: the `cpu`
/// option or `PERFGRAPH_CPU=all`; [`CAUSAL`] while causal profiling is on), but for the heap counters.
pub fn poll_flags(site: &'static Section) -> u8 {
    let cpu = if site.has_cpu_option() { CPU } else { 0 };
    // Relaxed: set once at the start, before this thread's first section (which went through `start`).
    cpu | EVERY_SECTION.load(Ordering::Relaxed)
}

/// What every section takes out of line, set once by the runtime's start: [`CPU`] for `PERFGRAPH_CPU=all`,
/// [`CAUSAL`] while causal profiling is on (`PERFGRAPH_CAUSAL`: every section's start and end then go to
/// [`causal`]). 0 otherwise, and the sections' route is as without them.
static EVERY_SECTION: AtomicU8 = AtomicU8::new(0);

/// `PERFGRAPH_MEM_EXACT` as a number ([`MemExact`] `Live` 0, the default, `All` 1, `Off` 2), set once by the
/// runtime's start.
static MEM_EXACT: AtomicU8 = AtomicU8::new(0);

/// Whether a section at `site` reads resident memory itself at its start and end.
#[inline(always)]
fn exact_mem(site: &'static Section) -> bool {
    // Relaxed: set once at the start, before this thread's first section (which went through `start`).
    match MEM_EXACT.load(Ordering::Relaxed) {
        0 => site.has_live_message(),
        1 => true,
        _ => false,
    }
}

/// The thread's first section: start the runtime and the thread, then re-check the level against the
/// verbosity just read from the environment.
#[cold]
#[inline(never)]
fn first_section(site: &'static Section, level: u8) -> Guard {
    start();
    let state = threads::current();
    if !verbosity::records(level) {
        site.note_skipped();
        return Guard::OFF;
    }
    // SAFETY: `state` is this thread's own state (just registered by `threads::current`).
    unsafe { Guard::open_with(state, site.id(), site_flags(site)) }
}

/// Starts the runtime once: settings, the capture of the program's output (`PERFGRAPH_CAPTURE`), clock,
/// first memory sample, verbosity, the background thread and its exit handler, and the handlers of the
/// signals that end a run (`PERFGRAPH_SIGNALS`). Every entry point calls it first; it returns at once after
/// the first time.
///
/// What a `fork()` does from the first call on (`collector::fork`) is registered before the start itself: a
/// fork while another thread is starting the runtime then waits for it, so the child never inherits the
/// start half done.
pub fn start() {
    static START: Once = Once::new();
    // A flag, not a `Once`: a fork can never find it half set.
    static FORK_HANDLERS: AtomicBool = AtomicBool::new(false);
    // Relaxed: only picks the one caller that registers; `pthread_atfork` orders the rest.
    if !FORK_HANDLERS.load(Ordering::Relaxed) && !FORK_HANDLERS.swap(true, Ordering::Relaxed) {
        fork::install(start_elsewhere);
    }
    START.call_once(|| {
        STARTING.with(|s| s.set(true));
        // perfgraph's own allocations: never a section's.
        heap::untracked(start_once);
        STARTING.with(|s| s.set(false));
    });
}

thread_local! {
    /// This thread is running the runtime's start (whose capture forks a child of its own).
    static STARTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Before a `fork()`: waits until the runtime's start has finished, unless this thread is the one running it.
fn start_elsewhere() {
    if !STARTING.try_with(std::cell::Cell::get).unwrap_or(true) {
        start();
    }
}

/// The runtime's start ([`start`]), run once.
fn start_once() {
    let (config, warnings) = crate::base::secure::from_env();
    for warning in &warnings {
        screen::warn(warning);
    }
    // Noted only: the first live line decides whether to capture (`capture::before_first_line`).
    if let Some(warning) = capture::start(config.capture) {
        screen::warn(&warning);
    }
    clock::init(config.clock_monotonic);
    identity::set_start_unix_ns(identity::unix_now_ns());
    if memory::sample().is_some() {
        process::set_start_rss_kb(process::rss_kb());
    }
    verbosity::init(config.verbosity);
    thread::set_ring_capacity(config.ring_capacity());
    // The start has allocated by now: an installed counting allocator has been called.
    heap::settle();
    let mem_exact = match config.mem_exact {
        MemExact::Live => 0,
        MemExact::All => 1,
        MemExact::Off => 2,
    };
    MEM_EXACT.store(mem_exact, Ordering::Relaxed);
    causal::set_on(config.causal_on());
    if config.causal_on() {
        causal::install_timers();
    }
    let cpu = if config.cpu_all { CPU } else { 0 };
    let causal = if config.causal_on() { CAUSAL } else { 0 };
    EVERY_SECTION.store(cpu | causal, Ordering::Relaxed);
    crate::local::cpu_frames::count_switches(config.switches);
    if config.trace.is_some() {
        crate::local::marks::enable();
    }
    if config.live == LiveMode::All {
        crate::local::marks::enable_events();
    }
    if config.live != LiveMode::Off {
        crate::local::pending::enable();
        live::panic::install();
        // With the counting allocator counting, the memory rule follows exact heap growth instead.
        let alert = if heap::counting() {
            &HEAP_ALERT_KB
        } else {
            &MEM_ALERT_KB
        };
        alert.store((config.mem_limit_bytes / 1024) as i64, Ordering::Relaxed);
    }
    let config = config::set_in_force(config).clone();
    let signals = config.signals;
    process::mark_started();
    collector::spawn(config);
    // Only with a background thread to make the final pass; only signals still at their default; only
    // where the binary chose the `signals` feature.
    if cfg!(feature = "signals") && signals && process::collecting() {
        signals::install();
    }
    // Read once here, where a fork waits for it, rather than first by a report a fork could interrupt.
    process::program_name();
}

/// The settings in force (read from the environment at the runtime's start).
pub fn config() -> &'static Config {
    start();
    // `start` put the settings in force; the default stands in only if that start panicked.
    config::in_force().unwrap_or_else(|| config::set_in_force(Config::default()))
}
