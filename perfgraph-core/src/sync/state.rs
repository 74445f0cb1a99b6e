//! What a lock of this module keeps beside std's: who holds it, how many wait, who released it last and
//! when, and its block of figures (`local::locks`). The recording both lock types share.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::base::clock;
use crate::base::process;
use crate::entry;
use crate::local::causal;
use crate::local::locks::{self, LockCounts};
use crate::local::marks;
use crate::local::record::{HOLD, LOCK_FLOW, Record, WAIT};
use crate::local::thread::{LIVE_LIMIT_TICKS, ThreadState};

use super::wake::Stamp;

/// A lock's own recording state. All `Relaxed`: the lock itself orders what its holders write here (a
/// holder's stores happen before its unlock, which happens before the next holder's lock), and the figures
/// only need to be recent for a waiter that reads them without the lock (the holder it names may have
/// just released it: the wait then names the holder at its start, as ThreadScope's does).
#[derive(Debug)]
pub(crate) struct LockState {
    /// The lock's name.
    pub name: &'static str,
    /// The thread index + 1 of the thread holding it (a `RwLock`'s writer, or its last reader), 0 for none.
    holder: AtomicU32,
    /// Threads waiting for it now.
    waiters: AtomicU32,
    /// The thread index + 1 of the thread that released it last.
    released_by: AtomicU32,
    /// Clock ticks of its last release.
    released_at: AtomicU64,
    /// Its figures, allocated at its first acquisition.
    counts: OnceLock<Arc<LockCounts>>,
}

/// A wait under way: what its end records.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wait {
    /// Clock ticks at the request.
    start: u64,
    /// The holder's thread index + 1 then.
    holder: u32,
    /// Threads waiting then, this one included.
    waiters: u32,
}

/// A hold under way: what its release records. `None` in a guard while nothing is recorded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hold {
    /// The holding thread's state.
    thread: &'static ThreadState,
    /// Clock ticks at the acquisition.
    start: u64,
    /// Held alone (a `Mutex`, a `RwLock`'s writer), not shared (a `RwLock`'s reader).
    exclusive: bool,
}

impl Hold {
    /// The holding thread's state.
    pub fn thread(&self) -> &'static ThreadState {
        self.thread
    }
}

impl LockState {
    /// A lock named `name`.
    pub const fn new(name: &'static str) -> LockState {
        LockState {
            name,
            holder: AtomicU32::new(0),
            waiters: AtomicU32::new(0),
            released_by: AtomicU32::new(0),
            released_at: AtomicU64::new(0),
            counts: OnceLock::new(),
        }
    }

    /// The lock's figures (registering it at its first acquisition).
    #[inline]
    fn counts(&self) -> &LockCounts {
        self.counts.get_or_init(|| locks::register(self.name))
    }

    /// The calling thread's state, if locks record now: built with the `enabled` feature, and anything
    /// records (`entry::recording_thread`).
    #[inline]
    pub fn thread() -> Option<&'static ThreadState> {
        if !cfg!(feature = "enabled") {
            // Compiled out: std's lock, nothing recorded.
            return None;
        }
        entry::recording_thread()
    }

    /// The request could not take the lock at once: the wait starts now, `thread` waits.
    #[inline]
    pub fn begin_wait(&self, thread: &'static ThreadState) -> Wait {
        if causal::on() {
            causal::blocked(&thread.causal, thread.index);
        }
        // Relaxed: see the type's docs; the count is the lock's own line, written on this (slow) path only.
        let waiters = self.waiters.fetch_add(1, Ordering::Relaxed) + 1;
        let holder = self.holder.load(Ordering::Relaxed);
        let start = clock::now().0;
        let name = self.counts().name;
        thread.waiting.start(start, name, holder);
        Wait {
            start,
            holder,
            waiters,
        }
    }

    /// `thread` acquired the lock, alone (`exclusive`) or shared: after `wait` if it had to wait. Returns
    /// the hold to record at its release.
    #[inline]
    pub fn acquired(
        &self,
        thread: &'static ThreadState,
        wait: Option<Wait>,
        exclusive: bool,
    ) -> Hold {
        let start = clock::now().0;
        self.holder.store(thread.index + 1, Ordering::Relaxed);
        if let Some(w) = wait {
            self.end_wait(thread, w, start);
        }
        Hold {
            thread,
            start,
            exclusive,
        }
    }

    /// The end of a wait that ended at `acquired` ticks: its figures, its marks, and live print's line.
    #[cold]
    #[inline(never)]
    fn end_wait(&self, thread: &'static ThreadState, w: Wait, acquired: u64) {
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        if causal::on() {
            // Woken by another thread's release during the wait: it skips what was inserted meanwhile.
            let by = self.released_by.load(Ordering::Relaxed);
            let at = self.released_at.load(Ordering::Relaxed);
            let by_other = by != 0 && by != thread.index + 1 && at >= w.start;
            causal::woken(&thread.causal, thread.index, by_other);
        }
        let counts = self.counts();
        let ticks = acquired.saturating_sub(w.start);
        counts.waited(ticks, w.waiters);
        // The trace wants every wait; live print, the ones it may have shown (half its time limit, as for
        // futures: the limit's tick count moves a little with the clock's calibration).
        let shown = ticks >= LIVE_LIMIT_TICKS.load(Ordering::Relaxed) / 2;
        if marks::wanted() || shown {
            let releaser = self.released_by.load(Ordering::Relaxed);
            let released = self.released_at.load(Ordering::Relaxed);
            let who = w.holder as u64 | (releaser as u64) << 32;
            // SAFETY: `thread` is this thread's own state (`LockState::thread` returned it here).
            unsafe {
                thread.push_mark(Record::mark(counts.name, w.start, acquired, WAIT, who));
                if marks::wanted() && releaser != 0 && released <= acquired {
                    thread.push_mark(Record::mark(
                        counts.name,
                        released,
                        acquired,
                        LOCK_FLOW,
                        releaser as u64,
                    ));
                }
            }
        }
        // After the marks: live print, seeing the wait over, finds its record in the ring.
        thread.waiting.end();
        if shown {
            // Live print may show this wait: its line ends now, not at the next scheduled pass.
            process::wake();
        }
    }

    /// The hold `h` ends now (the lock is still held: called before std's guard unlocks it).
    #[inline]
    pub fn release(&self, h: Hold) {
        if causal::on() {
            // Before the lock is free: the thread it lets in skips what was inserted while it waited.
            causal::waking(&h.thread.causal, h.thread.index);
        }
        let end = clock::now().0;
        // Relaxed: see the type's docs.
        self.released_by
            .store(h.thread.index + 1, Ordering::Relaxed);
        self.released_at.store(end, Ordering::Relaxed);
        let counts = self.counts();
        counts.held(end.saturating_sub(h.start), h.exclusive);
        if marks::wanted() {
            // SAFETY: guards are `!Send`, so this is the thread that acquired, `h.thread`'s owner.
            unsafe {
                h.thread
                    .push_mark(Record::mark(counts.name, h.start, end, HOLD, 0))
            };
        }
    }

    /// Who released it last, and when.
    pub fn last_release(&self) -> Stamp {
        // Relaxed: see the type's docs.
        Stamp {
            thread: self.released_by.load(Ordering::Relaxed),
            at: self.released_at.load(Ordering::Relaxed),
        }
    }

    /// Threads waiting for it now.
    pub fn waiting(&self) -> u32 {
        // Relaxed: a count for tests to poll.
        self.waiters.load(Ordering::Relaxed)
    }
}

impl Drop for LockState {
    /// The lock is dropped (or taken apart by `into_inner`): its figures go to its name's totals.
    fn drop(&mut self) {
        if let Some(c) = self.counts.get() {
            locks::retire(c);
        }
    }
}
