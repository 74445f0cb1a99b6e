//! [`Mutex`]: std's, named, recording its waits and holds.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

use super::state::{Hold, LockState};

/// A mutual exclusion lock with a name, as [`std::sync::Mutex`] (which it wraps: same API, same poisoning),
/// recording each acquisition: the wait when it had to wait, the hold, and who held it when the wait
/// began. See the [module docs](super) for where they show.
///
/// ```
/// use perfgraph_core::sync::Mutex;
///
/// static QUEUE: Mutex<Vec<u32>> = Mutex::new("queue", Vec::new());
///
/// QUEUE.lock().unwrap().push(7);
/// assert_eq!(*QUEUE.lock().unwrap(), [7]);
/// let r = perfgraph_core::report();
/// let queue = r.run.locks.iter().find(|l| l.name == "queue").unwrap();
/// assert_eq!(queue.acquisitions, 2);
/// ```
pub struct Mutex<T: ?Sized> {
    pub(super) state: LockState,
    inner: std::sync::Mutex<T>,
}

/// The guard of a [`Mutex`]: the lock is held until it is dropped (as std's `MutexGuard`); its hold is
/// recorded then.
///
/// ```
/// let m = perfgraph_core::sync::Mutex::new("counter", 0);
/// let mut guard: perfgraph_core::sync::MutexGuard<'_, i32> = m.lock().unwrap();
/// *guard += 1;
/// ```
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized + 'a> {
    lock: &'a Mutex<T>,
    hold: Option<Hold>,
    /// Dropped by the guard's `drop`, after its hold is recorded, or handed to a condvar's wait
    /// (`into_parts`).
    inner: ManuallyDrop<std::sync::MutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex named `name` (the `Locks:` table's row, the trace's `hold: <name>` and
    /// `wait: <name>` slices; locks of one name are one row).
    ///
    /// ```
    /// let m = perfgraph_core::sync::Mutex::new("queue", 0u32);
    /// assert_eq!(m.into_inner().unwrap(), 0);
    /// ```
    pub const fn new(name: &'static str, value: T) -> Mutex<T> {
        Mutex {
            state: LockState::new(name),
            inner: std::sync::Mutex::new(value),
        }
    }

    /// The value, consuming the mutex (as std's `into_inner`).
    ///
    /// ```
    /// let m = perfgraph_core::sync::Mutex::new("queue", 5);
    /// assert_eq!(m.into_inner().unwrap(), 5);
    /// ```
    pub fn into_inner(self) -> LockResult<T> {
        // `state` drops here, giving its figures to its name's totals.
        let Mutex { state: _, inner } = self;
        inner.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// The lock's name.
    ///
    /// ```
    /// assert_eq!(perfgraph_core::sync::Mutex::new("queue", ()).name(), "queue");
    /// ```
    pub fn name(&self) -> &'static str {
        self.state.name
    }

    /// Acquires the mutex, blocking the thread until it can (as std's `lock`); a wait is recorded, with the
    /// thread that held the mutex when it began.
    ///
    /// ```
    /// let m = perfgraph_core::sync::Mutex::new("queue", 1);
    /// *m.lock().unwrap() += 1;
    /// assert_eq!(*m.lock().unwrap(), 2);
    /// ```
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        let Some(thread) = LockState::thread() else {
            return wrap(self, None, self.inner.lock());
        };
        match self.inner.try_lock() {
            Ok(g) => Ok(self.guard(g, self.state.acquired(thread, None, true))),
            Err(TryLockError::Poisoned(p)) => Err(PoisonError::new(
                self.guard(p.into_inner(), self.state.acquired(thread, None, true)),
            )),
            Err(TryLockError::WouldBlock) => {
                let wait = self.state.begin_wait(thread);
                let r = self.inner.lock();
                let hold = self.state.acquired(thread, Some(wait), true);
                wrap(self, Some(hold), r)
            }
        }
    }

    /// Acquires the mutex if it is free now (as std's `try_lock`); never waits.
    ///
    /// ```
    /// let m = perfgraph_core::sync::Mutex::new("queue", 1);
    /// let held = m.lock().unwrap();
    /// assert!(m.try_lock().is_err());
    /// drop(held);
    /// assert!(m.try_lock().is_ok());
    /// ```
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let thread = LockState::thread();
        let hold = |s: &Self| thread.map(|t| s.state.acquired(t, None, true));
        match self.inner.try_lock() {
            Ok(g) => Ok(self.guard(g, hold(self))),
            Err(TryLockError::Poisoned(p)) => Err(TryLockError::Poisoned(PoisonError::new(
                self.guard(p.into_inner(), hold(self)),
            ))),
            Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
        }
    }

    /// How many threads wait for it now (for tests that need a thread to be waiting before they go on).
    #[doc(hidden)]
    pub fn waiting(&self) -> u32 {
        self.state.waiting()
    }

    /// Whether a thread panicked while holding the mutex (as std's).
    ///
    /// ```
    /// assert!(!perfgraph_core::sync::Mutex::new("queue", ()).is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poisoned state (as std's).
    ///
    /// ```
    /// let m = perfgraph_core::sync::Mutex::new("queue", ());
    /// m.clear_poison();
    /// assert!(!m.is_poisoned());
    /// ```
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique borrow: no locking needed (as std's `get_mut`).
    ///
    /// ```
    /// let mut m = perfgraph_core::sync::Mutex::new("queue", 1);
    /// *m.get_mut().unwrap() = 2;
    /// assert_eq!(*m.lock().unwrap(), 2);
    /// ```
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }

    pub(super) fn guard<'a>(
        &'a self,
        inner: std::sync::MutexGuard<'a, T>,
        hold: impl Into<Option<Hold>>,
    ) -> MutexGuard<'a, T> {
        MutexGuard {
            lock: self,
            hold: hold.into(),
            inner: ManuallyDrop::new(inner),
        }
    }
}

/// std's result as ours.
fn wrap<'a, T: ?Sized>(
    m: &'a Mutex<T>,
    hold: Option<Hold>,
    r: LockResult<std::sync::MutexGuard<'a, T>>,
) -> LockResult<MutexGuard<'a, T>> {
    match r {
        Ok(g) => Ok(m.guard(g, hold)),
        Err(p) => Err(PoisonError::new(m.guard(p.into_inner(), hold))),
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The guard taken apart, nothing recorded or unlocked: its mutex, its hold, std's guard (for a
    /// condvar's wait, which hands std's guard to std's condvar).
    pub(super) fn into_parts(self) -> (&'a Mutex<T>, Option<Hold>, std::sync::MutexGuard<'a, T>) {
        let mut me = ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so `inner` is taken out exactly once, here, and not dropped again.
        let inner = unsafe { ManuallyDrop::take(&mut me.inner) };
        (me.lock, me.hold.take(), inner)
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if let Some(h) = self.hold.take() {
            self.lock.state.release(h);
        }
        // SAFETY: `inner` is dropped only here, once (a guard taken apart by `into_parts` is not dropped):
        // the unlock comes after the hold is recorded.
        unsafe { ManuallyDrop::drop(&mut self.inner) };
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex")
            .field("name", &self.state.name)
            .field("inner", &&self.inner)
            .finish()
    }
}

impl<T: Default> Default for Mutex<T> {
    /// A mutex named `"(unnamed)"` holding `T::default()`.
    fn default() -> Mutex<T> {
        Mutex::new("(unnamed)", T::default())
    }
}

#[cfg(test)]
mod tests {
    use super::Mutex;

    /// Taken apart or dropped, a lock leaves its figures under its name.
    #[test]
    fn into_inner_and_drop_keep_the_figures() {
        let a = Mutex::new("mutex::tests kept", 1);
        drop(a.lock().unwrap());
        assert_eq!(a.into_inner().unwrap(), 1);
        let b = Mutex::new("mutex::tests kept", 2);
        drop(b.lock().unwrap());
        drop(b);
        let rows = crate::local::locks::gather(|t| t);
        let row = rows.iter().find(|r| r.name == "mutex::tests kept").unwrap();
        assert_eq!(row.acquisitions, 2);
    }
}
