//! Marks: records in a thread's ring that are not section calls, for the trace only. A timed future's whole
//! life (first poll to completion or drop, [`LIFE`](super::record::LIFE)), and instant events (a `tracing`
//! event inside a recorded span, [`INSTANT`](super::record::INSTANT)), whose message waits here under a
//! number until the background thread takes it.
//!
//! Only pushed while the trace is on ([`wanted`]): nothing else reads them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use crate::base::site_table::{self, SiteTable};

use crate::base::poison;

/// What wants marks (set at the runtime's start): [`TRACE`] (the trace is on), [`EVENTS`] (live print
/// shows `event!`s, `PERFGRAPH_LIVE=all`). One word, so the check is one load.
static WANTED: AtomicU8 = AtomicU8::new(0);
/// The trace wants every mark.
const TRACE: u8 = 1;
/// Live print wants `event!`s (and the args that fill messages).
const EVENTS: u8 = 2;

/// Instant events' messages not taken yet, by number.
static MESSAGES: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);

/// The next message's number.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Pushes `event!`s from now on, for live print (`PERFGRAPH_LIVE=all`).
pub fn enable_events() {
    WANTED.fetch_or(EVENTS, Ordering::Relaxed);
}

/// Whether `event!`s (and args) are wanted: by the trace or by live print.
#[inline]
pub fn events_wanted() -> bool {
    // Relaxed: set once at the start, before the first section records.
    WANTED.load(Ordering::Relaxed) != 0
}

/// Pushes marks from now on (the trace is on).
pub fn enable() {
    WANTED.fetch_or(TRACE, Ordering::Relaxed);
}

/// For benchmarks: records what a trace would want (`on`), or not, with no trace to take it.
pub fn set_wanted(on: bool) {
    if on {
        WANTED.fetch_or(TRACE, Ordering::Relaxed);
    } else {
        WANTED.fetch_and(!TRACE, Ordering::Relaxed);
    }
}

/// Whether marks are wanted (the trace is on).
#[inline]
pub fn wanted() -> bool {
    // Relaxed: set once at the start, before the first section records.
    WANTED.load(Ordering::Relaxed) & TRACE != 0
}

/// Keeps `message` for the background thread; returns its number.
pub fn keep(message: String) -> u64 {
    // Relaxed: a counter; the message itself is published under the lock.
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut m = hold_for_fork();
    m.get_or_insert_with(HashMap::new).insert(id, message);
    id
}

/// The messages' lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub fn hold_for_fork() -> std::sync::MutexGuard<'static, Option<HashMap<u64, String>>> {
    poison::lock(&MESSAGES)
}

/// A copy of message `id`, left in place.
pub fn peek(id: u64) -> Option<String> {
    let m = hold_for_fork();
    m.as_ref()?.get(&id).cloned()
}

/// Takes message `id` (once).
pub fn take(id: u64) -> Option<String> {
    let mut m = hold_for_fork();
    m.as_mut()?.remove(&id)
}

/// Most `event!` call sites a process names; a site past them is shown as `(too many events)`.
pub const MAX_EVENT_SITES: usize = 4096;

/// The sites by id.
static EVENT_SITES: SiteTable<EventSite, MAX_EVENT_SITES> = SiteTable::new();

/// The site every `event!` past [`MAX_EVENT_SITES`] shares.
static TOO_MANY: EventSite = EventSite::new("(too many events)", &[]);

/// One `event!` call site: a `static` the macro emits, its id given at its first use (lock-free, so a
/// forked child never finds a lock held).
#[doc(hidden)]
#[derive(Debug)]
pub struct EventSite {
    /// Dense id from 1, 0 until registered.
    id: AtomicU32,
    /// Its message: the instant's name.
    pub name: &'static str,
    /// The names of its args, in order.
    pub args: &'static [&'static str],
}

impl EventSite {
    /// A site named `name` with args named `args`.
    pub const fn new(name: &'static str, args: &'static [&'static str]) -> EventSite {
        EventSite {
            id: AtomicU32::new(0),
            name,
            args,
        }
    }

    /// Its id, registering it at its first use.
    #[inline]
    pub fn id(&'static self) -> u32 {
        site_table::id_or_register(&self.id, || self.register())
    }

    #[cold]
    fn register(&'static self) -> u32 {
        let n = EVENT_SITES.next_id();
        if !EVENT_SITES.publish(n, self) {
            return MAX_EVENT_SITES as u32 + 1;
        }
        site_table::settle(&self.id, n)
    }
}

/// The `event!` site with id `id`.
pub fn event_site(id: u32) -> Option<&'static EventSite> {
    if id as usize == MAX_EVENT_SITES + 1 {
        return Some(&TOO_MANY);
    }
    EVENT_SITES.get(id)
}
