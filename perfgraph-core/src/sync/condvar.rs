//! [`Condvar`]: std's, named, recording each wait and who ended it.

use std::fmt;
use std::sync::{LockResult, PoisonError, WaitTimeoutResult};
use std::time::Duration;

use super::mutex::MutexGuard;
use super::state::LockState;
use super::wake::{NameId, SharedStamp, Stamp, Wait};

/// A condition variable with a name, as [`std::sync::Condvar`] (which it wraps: same API, same spurious
/// wake-ups), waiting on the guards of [`Mutex`](super::Mutex). Each wait is recorded (`wait: <name>` in
/// the trace; `Waiting for <name>` in live print past its time limit) with the thread that ended it: the
/// one that notified, or the one that released the mutex after the notify, whichever came last. The
/// critical path follows that edge.
///
/// ```
/// use perfgraph_core::sync::{Condvar, Mutex};
/// use std::sync::Arc;
///
/// let pair = Arc::new((Mutex::new("ready", false), Condvar::new("ready")));
/// let other = Arc::clone(&pair);
/// let h = perfgraph_core::sync::spawn(move || {
///     *other.0.lock().unwrap() = true;
///     other.1.notify_one();
/// });
/// let mut ready = pair.0.lock().unwrap();
/// while !*ready {
///     ready = pair.1.wait(ready).unwrap();
/// }
/// drop(ready);
/// h.join().unwrap();
/// ```
pub struct Condvar {
    name: &'static str,
    id: NameId,
    /// The last notify: its thread and instant.
    notified: SharedStamp,
    inner: std::sync::Condvar,
}

impl Condvar {
    /// A condvar named `name` (the trace's `wait: <name>` slices).
    ///
    /// ```
    /// static READY: perfgraph_core::sync::Condvar = perfgraph_core::sync::Condvar::new("ready");
    /// assert_eq!(READY.name(), "ready");
    /// ```
    pub const fn new(name: &'static str) -> Condvar {
        Condvar {
            name,
            id: NameId::new(),
            notified: SharedStamp::new(),
            inner: std::sync::Condvar::new(),
        }
    }

    /// Its name.
    ///
    /// ```
    /// assert_eq!(perfgraph_core::sync::Condvar::new("ready").name(), "ready");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Blocks until notified (as std's `wait`: it may also wake spuriously), releasing the mutex meanwhile
    /// and holding it again on return.
    ///
    /// ```
    /// # use perfgraph_core::sync::{Condvar, Mutex};
    /// # use std::sync::Arc;
    /// let pair = Arc::new((Mutex::new("flag", false), Condvar::new("flag")));
    /// let other = Arc::clone(&pair);
    /// std::thread::spawn(move || {
    ///     *other.0.lock().unwrap() = true;
    ///     other.1.notify_all();
    /// });
    /// let mut flag = pair.0.lock().unwrap();
    /// while !*flag {
    ///     flag = pair.1.wait(flag).unwrap();
    /// }
    /// ```
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        let (guard, (), poisoned) = self.around(guard, |g| match self.inner.wait(g) {
            Ok(g) => (g, (), false),
            Err(p) => (p.into_inner(), (), true),
        });
        result(guard, poisoned)
    }

    /// Blocks while `condition` holds (as std's `wait_while`).
    ///
    /// ```
    /// # use perfgraph_core::sync::{Condvar, Mutex};
    /// # use std::sync::Arc;
    /// let pair = Arc::new((Mutex::new("count", 0), Condvar::new("count")));
    /// let other = Arc::clone(&pair);
    /// std::thread::spawn(move || {
    ///     *other.0.lock().unwrap() = 3;
    ///     other.1.notify_one();
    /// });
    /// let count = pair.1.wait_while(pair.0.lock().unwrap(), |c| *c < 3).unwrap();
    /// assert_eq!(*count, 3);
    /// ```
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// Blocks until notified or `dur` has passed (as std's `wait_timeout`).
    ///
    /// ```
    /// # use perfgraph_core::sync::{Condvar, Mutex};
    /// use std::time::Duration;
    /// let (m, cv) = (Mutex::new("idle", ()), Condvar::new("idle"));
    /// let (_guard, r) = cv.wait_timeout(m.lock().unwrap(), Duration::from_millis(1)).unwrap();
    /// assert!(r.timed_out());
    /// ```
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (guard, timeout, poisoned) =
            self.around(guard, |g| match self.inner.wait_timeout(g, dur) {
                Ok((g, t)) => (g, t, false),
                Err(p) => {
                    let (g, t) = p.into_inner();
                    (g, t, true)
                }
            });
        match poisoned {
            false => Ok((guard, timeout)),
            true => Err(PoisonError::new((guard, timeout))),
        }
    }

    /// Blocks while `condition` holds, or until `dur` has passed (as std's `wait_timeout_while`).
    ///
    /// ```
    /// # use perfgraph_core::sync::{Condvar, Mutex};
    /// use std::time::Duration;
    /// let (m, cv) = (Mutex::new("never", false), Condvar::new("never"));
    /// let (g, r) = cv.wait_timeout_while(m.lock().unwrap(), Duration::from_millis(1), |f| !*f).unwrap();
    /// assert!(r.timed_out() && !*g);
    /// ```
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        dur: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let start = std::time::Instant::now();
        loop {
            if !condition(&mut *guard) {
                return Ok((guard, timeout_result(false)));
            }
            let Some(left) = dur.checked_sub(start.elapsed()) else {
                return Ok((guard, timeout_result(true)));
            };
            guard = self.wait_timeout(guard, left)?.0;
        }
    }

    /// Wakes one waiting thread (as std's `notify_one`); the notify is the edge its wait ends with.
    ///
    /// ```
    /// perfgraph_core::sync::Condvar::new("ready").notify_one();
    /// ```
    pub fn notify_one(&self) {
        self.stamp();
        self.inner.notify_one();
    }

    /// Wakes every waiting thread (as std's `notify_all`).
    ///
    /// ```
    /// perfgraph_core::sync::Condvar::new("ready").notify_all();
    /// ```
    pub fn notify_all(&self) {
        self.stamp();
        self.inner.notify_all();
    }

    fn stamp(&self) {
        if let Some(t) = LockState::thread() {
            self.notified.store(Stamp::now(t));
        }
    }

    /// Runs std's `wait` on the guard taken apart: its hold ends, the wait is recorded, a new hold starts
    /// on return. Recorded only where the guard records (its lock was taken while recording).
    fn around<'a, T: ?Sized, R>(
        &self,
        guard: MutexGuard<'a, T>,
        wait: impl FnOnce(std::sync::MutexGuard<'a, T>) -> (std::sync::MutexGuard<'a, T>, R, bool),
    ) -> (MutexGuard<'a, T>, R, bool) {
        let (lock, hold, inner) = guard.into_parts();
        let Some(hold) = hold else {
            let (inner, r, poisoned) = wait(inner);
            return (lock.guard(inner, None), r, poisoned);
        };
        let thread = hold.thread();
        lock.state.release(hold);
        let w = Wait::begin(thread, self.id.get(self.name), 0, true);
        let start = w.start();
        let (inner, r, poisoned) = wait(inner);
        w.end(self.waker(&lock.state, start));
        let hold = lock.state.acquired(thread, None, true);
        (lock.guard(inner, hold), r, poisoned)
    }

    /// Who ended a wait that began at `start`: the last notify since, or the mutex's release after it (the
    /// waiter could not return before); none for a wait no notify came into (a time-out, a spurious
    /// wake-up).
    fn waker(&self, lock: &LockState, start: u64) -> Option<Stamp> {
        let n = self.notified.load();
        if n.thread == 0 || n.at < start {
            return None;
        }
        let r = lock.last_release();
        Some(if r.thread != 0 && r.at >= n.at { r } else { n })
    }
}

/// std's result for a guard after a wait.
fn result<G>(guard: G, poisoned: bool) -> LockResult<G> {
    match poisoned {
        false => Ok(guard),
        true => Err(PoisonError::new(guard)),
    }
}

/// A `WaitTimeoutResult` that timed out or not (std has no constructor: std's own `wait_timeout_while`,
/// waiting no time, answers so while its condition holds, and not when it does not).
fn timeout_result(timed_out: bool) -> WaitTimeoutResult {
    let (m, cv) = (std::sync::Mutex::new(()), std::sync::Condvar::new());
    let g = m.lock().unwrap_or_else(PoisonError::into_inner);
    let (_g, r) = cv
        .wait_timeout_while(g, Duration::ZERO, |_| timed_out)
        .unwrap_or_else(PoisonError::into_inner);
    r
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar").field("name", &self.name).finish()
    }
}

impl Default for Condvar {
    /// A condvar named `"(unnamed)"`.
    fn default() -> Condvar {
        Condvar::new("(unnamed)")
    }
}
