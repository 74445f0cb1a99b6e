//! [`spawn`], [`Builder`] and [`JoinHandle`]: std's threads, recording their two hand-overs: the spawn
//! (the spawning thread, when it asked, to the new thread's first instant) and the join (the thread's end
//! to the return of a `join` that had to wait for it).

use std::io;
use std::sync::Arc;
use std::thread::{self, Thread};

use crate::local::causal;

use super::state::LockState;
use super::wake::{NameId, SharedStamp, Stamp, Wait, started};

/// The names these records go under: the trace's `wait: join` slices, and the flows `spawn` and `join`.
static SPAWN: NameId = NameId::new();
static JOIN: NameId = NameId::new();

/// Spawns a thread, as [`std::thread::spawn`], recording when it was asked for and when it ended, so the
/// critical path can follow a join back into the thread and a thread's start back to its spawner.
///
/// ```
/// let h = perfgraph_core::sync::spawn(|| 6 * 7);
/// assert_eq!(h.join().unwrap(), 42);
/// ```
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().spawn(f).expect("failed to spawn thread")
}

/// A thread's settings before it starts, as [`std::thread::Builder`] (name, stack size), spawning a thread
/// that records its hand-overs as [`spawn`]'s does.
///
/// ```
/// let h = perfgraph_core::sync::Builder::new().name("worker".into()).spawn(|| 1).unwrap();
/// assert_eq!(h.thread().name(), Some("worker"));
/// assert_eq!(h.join().unwrap(), 1);
/// ```
#[derive(Debug)]
pub struct Builder {
    inner: thread::Builder,
}

/// An owned permission to join a thread of [`spawn`] or [`Builder::spawn`], as std's `JoinHandle`; a
/// `join` that waits is recorded, with the thread's end as the edge that ended it.
///
/// ```
/// let h: perfgraph_core::sync::JoinHandle<u32> = perfgraph_core::sync::spawn(|| 1);
/// assert_eq!(h.join().unwrap(), 1);
/// ```
#[derive(Debug)]
pub struct JoinHandle<T> {
    inner: thread::JoinHandle<T>,
    /// The thread's end: its index + 1 and tick, once it has ended (0 before, and if it recorded nothing).
    ended: Arc<SharedStamp>,
}

impl Builder {
    /// A builder with std's defaults.
    ///
    /// ```
    /// let b = perfgraph_core::sync::Builder::new();
    /// assert_eq!(b.spawn(|| 2).unwrap().join().unwrap(), 2);
    /// ```
    pub fn new() -> Builder {
        Builder {
            inner: thread::Builder::new(),
        }
    }

    /// Names the thread (as std's `Builder::name`): its name in the tables, the trace and live print.
    ///
    /// ```
    /// let h = perfgraph_core::sync::Builder::new().name("io".into()).spawn(|| ()).unwrap();
    /// assert_eq!(h.thread().name(), Some("io"));
    /// ```
    pub fn name(self, name: String) -> Builder {
        Builder {
            inner: self.inner.name(name),
        }
    }

    /// Sets the new thread's stack size in bytes (as std's `Builder::stack_size`).
    ///
    /// ```
    /// let h = perfgraph_core::sync::Builder::new().stack_size(1 << 20).spawn(|| 3).unwrap();
    /// assert_eq!(h.join().unwrap(), 3);
    /// ```
    pub fn stack_size(self, size: usize) -> Builder {
        Builder {
            inner: self.inner.stack_size(size),
        }
    }

    /// Spawns the thread (as std's `Builder::spawn`: an error where the system could not).
    ///
    /// ```
    /// let h = perfgraph_core::sync::Builder::new().spawn(|| "done").unwrap();
    /// assert_eq!(h.join().unwrap(), "done");
    /// ```
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let parent = LockState::thread();
        let spawner = parent.map(Stamp::now);
        let delays = parent
            .filter(|_| causal::on())
            .map(|t| causal::inherited(&t.causal, t.index));
        let ended = Arc::new(SharedStamp::new());
        let at_end = Arc::clone(&ended);
        let inner = self.inner.spawn(move || {
            let me = LockState::thread();
            if let (Some(me), Some(delays)) = (me, delays) {
                causal::inherit(&me.causal, delays);
            }
            if let (Some(me), Some(spawner)) = (me, spawner) {
                started(me, SPAWN.get("spawn"), spawner);
            }
            // Stamped as the thread ends, a panic included.
            let _end = EndStamp { at_end, me };
            f()
        })?;
        Ok(JoinHandle { inner, ended })
    }
}

/// Leaves the thread's end for a join to find, when dropped (the closure returned or panicked).
struct EndStamp {
    at_end: Arc<SharedStamp>,
    me: Option<&'static crate::local::thread::ThreadState>,
}

impl Drop for EndStamp {
    fn drop(&mut self) {
        if let Some(me) = self.me {
            self.at_end.store(Stamp::now(me));
        }
    }
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to end and returns its result (as std's `join`: `Err` with the panic's
    /// payload if it panicked). A join that waits records the wait, its end the thread's end.
    ///
    /// ```
    /// let h = perfgraph_core::sync::spawn(|| panic!("no mesh"));
    /// assert!(h.join().is_err());
    /// ```
    pub fn join(self) -> thread::Result<T> {
        let waiter = LockState::thread().filter(|_| !self.inner.is_finished());
        let Some(waiter) = waiter else {
            return self.inner.join();
        };
        // Not shown by live print: the thread's own sections are.
        let wait = Wait::begin(waiter, JOIN.get("join"), 0, false);
        let r = self.inner.join();
        // The thread's `EndStamp` was dropped before the join returned, and std's join makes all the thread
        // did visible to the joiner (its exit synchronises with the join's return): the stamp is there. It
        // may come before the wait's start (the thread ended as the join began): the hand-over is still it.
        wait.end(Some(self.ended.load()));
        r
    }

    /// The thread (as std's `thread`).
    ///
    /// ```
    /// let h = perfgraph_core::sync::spawn(|| ());
    /// let id = h.thread().id();
    /// assert_ne!(id, std::thread::current().id());
    /// h.join().unwrap();
    /// ```
    pub fn thread(&self) -> &Thread {
        self.inner.thread()
    }

    /// Whether the thread has ended (as std's `is_finished`).
    ///
    /// ```
    /// let h = perfgraph_core::sync::spawn(|| ());
    /// while !h.is_finished() {
    ///     std::thread::yield_now();
    /// }
    /// h.join().unwrap();
    /// ```
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// std's handle, for an API that wants one (a join through it records nothing).
    ///
    /// ```
    /// let h: std::thread::JoinHandle<u8> = perfgraph_core::sync::spawn(|| 5).into_std();
    /// assert_eq!(h.join().unwrap(), 5);
    /// ```
    pub fn into_std(self) -> thread::JoinHandle<T> {
        self.inner
    }
}
