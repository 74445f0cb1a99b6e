//! Wake-up edges: who ended a thread's wait, and when. A waker leaves a [`Stamp`] (its thread and the
//! instant it released, sent, notified or ended) where the waiter finds it; the waiter's [`Wait`] records,
//! at its end, the `wait: <name>` interval and the edge from the stamp to its return, the records a lock's
//! wait leaves (`WAIT`, `LOCK_FLOW`), so the trace, live print and the critical path read them alike.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::base::{clock, process};
use crate::local::causal;
use crate::local::locks;
use crate::local::marks;
use crate::local::record::{LOCK_FLOW, Record, WAIT};
use crate::local::thread::{LIVE_LIMIT_TICKS, ThreadState};

/// A waker's thread (index + 1; 0: none) and instant (clock ticks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub thread: u32,
    pub at: u64,
}

impl Stamp {
    /// `thread`, now.
    #[inline]
    pub fn now(thread: &ThreadState) -> Stamp {
        if causal::on() {
            // A waker pays what it owes first: the thread it wakes skips what was inserted meanwhile.
            causal::waking(&thread.causal, thread.index);
        }
        Stamp {
            thread: thread.index + 1,
            at: clock::now().0,
        }
    }
}

/// A stamp shared between threads: the waker stores, the waiter loads. Both halves `Relaxed`: where the
/// primitive's own synchronisation (a mutex, a channel's send, a join) orders the store before the waiter
/// returns, the waiter sees it; where it does not, the stamp may be an older one, which the waiter drops
/// unless it falls within its wait.
#[derive(Debug, Default)]
pub(crate) struct SharedStamp {
    thread: AtomicU32,
    at: AtomicU64,
}

impl SharedStamp {
    pub const fn new() -> SharedStamp {
        SharedStamp {
            thread: AtomicU32::new(0),
            at: AtomicU64::new(0),
        }
    }

    pub fn store(&self, s: Stamp) {
        // Relaxed: see the type's docs.
        self.at.store(s.at, Ordering::Relaxed);
        self.thread.store(s.thread, Ordering::Relaxed);
    }

    pub fn load(&self) -> Stamp {
        // Relaxed: see the type's docs.
        Stamp {
            thread: self.thread.load(Ordering::Relaxed),
            at: self.at.load(Ordering::Relaxed),
        }
    }
}

/// The name id of a primitive, taken at its first wait.
#[derive(Debug, Default)]
pub(crate) struct NameId(AtomicU32);

impl NameId {
    pub const fn new() -> NameId {
        NameId(AtomicU32::new(0))
    }

    pub fn get(&self, name: &'static str) -> u32 {
        // Relaxed: an id, the same whichever thread interns it first.
        match self.0.load(Ordering::Relaxed) {
            0 => {
                let id = locks::name_id(name);
                self.0.store(id, Ordering::Relaxed);
                id
            }
            id => id,
        }
    }
}

/// A wait under way on thread `thread`.
#[derive(Debug)]
pub(crate) struct Wait {
    thread: &'static ThreadState,
    name: u32,
    start: u64,
    holder: u32,
    live: bool,
}

impl Wait {
    /// `thread` starts waiting for `name` (an id: [`NameId`]), on what thread `holder` (index + 1, 0:
    /// unknown) holds; with `live`, live print shows it past its time limit (`Waiting for <name>`).
    pub fn begin(thread: &'static ThreadState, name: u32, holder: u32, live: bool) -> Wait {
        if causal::on() {
            causal::blocked(&thread.causal, thread.index);
        }
        let start = clock::now().0;
        if live {
            thread.waiting.start(start, name, holder);
        }
        Wait {
            thread,
            name,
            start,
            holder,
            live,
        }
    }

    /// When it began, clock ticks.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The wait ended now; `waker` ended it (the caller knows it did: its stamp is this wait's), where
    /// known and not after now.
    pub fn end(self, waker: Option<Stamp>) {
        let end = clock::now().0;
        let waker = waker.filter(|w| w.thread != 0 && w.at <= end);
        if causal::on() {
            let me = self.thread.index + 1;
            let by_other = waker.is_some_and(|w| w.thread != me);
            causal::woken(&self.thread.causal, self.thread.index, by_other);
        }
        let limit = LIVE_LIMIT_TICKS.load(Ordering::Relaxed) / 2;
        let shown = self.live && end.saturating_sub(self.start) >= limit;
        if marks::wanted() || shown {
            let releaser = waker.map_or(0, |w| w.thread);
            let who = self.holder as u64 | (releaser as u64) << 32;
            // SAFETY: `self.thread` is the calling thread's own state (`begin` took it on this thread, and
            // a `Wait` is not sent: it lives in one blocking call).
            unsafe {
                let t = self.thread;
                t.push_mark(Record::mark(self.name, self.start, end, WAIT, who));
                if let (true, Some(w)) = (marks::wanted(), waker) {
                    let flow = Record::mark(self.name, w.at, end, LOCK_FLOW, w.thread as u64);
                    t.push_mark(flow);
                }
            }
        }
        // After the marks: live print, seeing the wait over, finds its record in the ring.
        if self.live {
            self.thread.waiting.end();
        }
        if shown {
            process::wake();
        }
    }
}

/// An edge with no wait before it: thread `thread` started at its first instant, `now`, after `spawner`
/// asked for it (recorded as a hand-over, as a lock's, under the name `name`).
pub(crate) fn started(thread: &'static ThreadState, name: u32, spawner: Stamp) {
    if !marks::wanted() || spawner.thread == 0 {
        return;
    }
    let now = clock::now().0.max(spawner.at);
    // SAFETY: `thread` is the calling thread's own state (the new thread's, taken on it).
    unsafe {
        thread.push_mark(Record::mark(
            name,
            spawner.at,
            now,
            LOCK_FLOW,
            spawner.thread as u64,
        ))
    };
}
