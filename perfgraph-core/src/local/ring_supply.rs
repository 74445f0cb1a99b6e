//! Where a new thread's ring comes from: the pool of rings given back, a new one while the address space
//! has room, or a 2-slot one; and, while exited threads hold more rings than the live ones need, a short
//! wait for one of theirs (the background thread folds them after their last drain). The thread's memory
//! for records is then bounded by the live threads, not by how many ended since the last pass.

use std::sync::atomic::Ordering;

use super::ring::Ring;
use super::thread::RING_CAPACITY;
use crate::base::{process, sys};

/// A new thread's ring of [`RING_CAPACITY`] records: one from the pool, or a new one while the address
/// space has room for it and for the program ([`sys::address_space_room`]: under an address-space limit, a
/// new ring must leave a quarter of the limit free, and at least 64 MiB); else a 2-slot ring (the thread's
/// counts and times stay exact; the trace lacks its calls, and says how many threads had no ring).
///
/// Where there is no room but threads have exited whose rings the background thread has not taken back
/// yet (it folds them after their last drain), it asks for that pass and waits for a ring to come back, up
/// to [`RING_WAIT`]: a program that churns threads under `ulimit -v` then reuses the rings of those that
/// exited instead of leaving new ones without. Called before the thread takes the list's lock, which the
/// background thread needs to fold them; `exited_pending` counts those threads (the thread list's count).
pub(crate) fn new_ring(exited_pending: fn() -> u64) -> Ring {
    let capacity = RING_CAPACITY.load(Ordering::Relaxed);
    if !Ring::pooled(capacity) {
        if !room_for(capacity) {
            if !wait_for_room(capacity, exited_pending, || true) {
                return Ring::without_room();
            }
        } else if pending_ring_bytes(exited_pending, capacity) > PENDING_RING_BYTES {
            // Room, but exited threads hold more rings than the live ones need: take one of theirs.
            wait_for_room(capacity, exited_pending, || {
                pending_ring_bytes(exited_pending, capacity) <= PENDING_RING_BYTES
            });
        }
    }
    Ring::reused(capacity)
}

/// The most bytes of rings that exited threads may hold, waiting to be folded, before a new thread waits
/// for one of them (see [`new_ring`]): a program that starts and ends threads by the thousand while a
/// trace is written (10 MiB rings) would otherwise hold a ring for every thread that ended since the last
/// pass, 640 MB in a run of 8 live threads, its memory bounded by its churn rather than by what is live.
pub const PENDING_RING_BYTES: u64 = 64 << 20;

/// Bytes of rings of `capacity` records that exited threads hold, waiting to be folded.
fn pending_ring_bytes(exited_pending: fn() -> u64, capacity: usize) -> u64 {
    exited_pending().saturating_mul(capacity as u64 * RECORD_BYTES)
}

/// Whether the address space has room for a new ring of `capacity` records (see [`new_ring`]).
fn room_for(capacity: usize) -> bool {
    let bytes = (capacity as u64).saturating_mul(RECORD_BYTES);
    match sys::address_space_room() {
        Some((limit, used)) => {
            let keep = (limit / 4).max(64 << 20);
            used.saturating_add(bytes).saturating_add(keep) <= limit
        }
        None => true,
    }
}

/// Longest a new thread waits for an exited thread's ring (see [`new_ring`]).
pub const RING_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Waits, while exited threads are waiting to be folded and for at most [`RING_WAIT`], until a ring of
/// `capacity` records is in the pool, or there is room for one and `enough` says so; whether it came.
#[cold]
#[inline(never)]
fn wait_for_room(capacity: usize, exited_pending: fn() -> u64, enough: impl Fn() -> bool) -> bool {
    if !process::collecting() || process::shutting_down() {
        return false;
    }
    let _waiting = super::ring::Waiting::start();
    let start = std::time::Instant::now();
    while exited_pending() > 0 && start.elapsed() < RING_WAIT {
        process::wake();
        std::thread::sleep(std::time::Duration::from_millis(1));
        if Ring::pooled(capacity) || room_for(capacity) && enough() {
            return true;
        }
    }
    false
}

/// Bytes per ring slot (a record's words and its stamp).
const RECORD_BYTES: u64 = 8 * (super::ring::WORDS as u64 + 1);
