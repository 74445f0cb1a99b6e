//! Marks: records in a thread's ring that are not section calls, for the trace only. A timed future's whole
//! life (first poll to completion or drop, [`LIFE`](super::record::LIFE)), and instant events (a `tracing`
//! event inside a recorded span, [`INSTANT`](super::record::INSTANT)), whose message waits here under a
//! number until the background thread takes it.
//!
//! Only pushed while the trace is on ([`wanted`]): nothing else reads them.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the trace is on (set once at the runtime's start).
static WANTED: AtomicBool = AtomicBool::new(false);

/// Instant events' messages not taken yet, by number.
static MESSAGES: Mutex<Option<HashMap<u64, String>>> = Mutex::new(None);

/// The next message's number.
#[cfg(feature = "tracing")]
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Pushes marks from now on (the trace is on).
pub fn enable() {
    WANTED.store(true, Ordering::Relaxed);
}

/// Whether marks are wanted.
#[inline]
pub fn wanted() -> bool {
    // Relaxed: set once at the start, before the first section records.
    WANTED.load(Ordering::Relaxed)
}

/// Keeps `message` for the background thread; returns its number.
#[cfg(feature = "tracing")]
pub fn keep(message: String) -> u64 {
    // Relaxed: a counter; the message itself is published under the lock.
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut m = hold_for_fork();
    m.get_or_insert_with(HashMap::new).insert(id, message);
    id
}

/// The messages' lock, taken before a `fork()` (`collector::fork`) so a child never inherits it held.
pub fn hold_for_fork() -> std::sync::MutexGuard<'static, Option<HashMap<u64, String>>> {
    MESSAGES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes message `id` (once).
pub fn take(id: u64) -> Option<String> {
    let mut m = hold_for_fork();
    m.as_mut()?.remove(&id)
}
