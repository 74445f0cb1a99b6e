//! [`RwLock`]: std's, named, recording its waits and holds.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};

use super::state::{Hold, LockState};

/// A reader-writer lock with a name, as [`std::sync::RwLock`] (which it wraps: same API, same poisoning),
/// recording each acquisition, read or write, as [`Mutex`](super::Mutex) does.
///
/// ```
/// use perfgraph_core::sync::RwLock;
///
/// let table = RwLock::new("table", vec![1, 2]);
/// assert_eq!(table.read().unwrap().len(), 2);
/// table.write().unwrap().push(3);
/// assert_eq!(*table.read().unwrap(), [1, 2, 3]);
/// ```
pub struct RwLock<T: ?Sized> {
    state: LockState,
    inner: std::sync::RwLock<T>,
}

/// A shared hold of a [`RwLock`], as std's `RwLockReadGuard`.
///
/// ```
/// let l = perfgraph_core::sync::RwLock::new("table", 1);
/// let r: perfgraph_core::sync::RwLockReadGuard<'_, i32> = l.read().unwrap();
/// assert_eq!(*r, 1);
/// ```
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    hold: Option<Hold>,
    inner: std::sync::RwLockReadGuard<'a, T>,
}

/// An exclusive hold of a [`RwLock`], as std's `RwLockWriteGuard`.
///
/// ```
/// let l = perfgraph_core::sync::RwLock::new("table", 1);
/// let mut w: perfgraph_core::sync::RwLockWriteGuard<'_, i32> = l.write().unwrap();
/// *w += 1;
/// ```
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized + 'a> {
    lock: &'a RwLock<T>,
    hold: Option<Hold>,
    inner: std::sync::RwLockWriteGuard<'a, T>,
}

impl<T> RwLock<T> {
    /// A new unlocked lock named `name` (see [`Mutex::new`](super::Mutex::new)).
    ///
    /// ```
    /// let l = perfgraph_core::sync::RwLock::new("table", 0u8);
    /// assert_eq!(l.into_inner().unwrap(), 0);
    /// ```
    pub const fn new(name: &'static str, value: T) -> RwLock<T> {
        RwLock {
            state: LockState::new(name),
            inner: std::sync::RwLock::new(value),
        }
    }

    /// The value, consuming the lock (as std's `into_inner`).
    ///
    /// ```
    /// assert_eq!(perfgraph_core::sync::RwLock::new("table", 3).into_inner().unwrap(), 3);
    /// ```
    pub fn into_inner(self) -> LockResult<T> {
        // `state` drops here, giving its figures to its name's totals.
        let RwLock { state: _, inner } = self;
        inner.into_inner()
    }
}

/// The four ways in: shared or exclusive, blocking or not, each std's call and its guard's wrapper.
macro_rules! acquire {
    ($(#[$doc:meta])* $fn:ident, $try_doc:meta, $try:ident, $guard:ident, $exclusive:expr) => {
        $(#[$doc])*
        pub fn $fn(&self) -> LockResult<$guard<'_, T>> {
            let Some(thread) = LockState::thread() else {
                return match self.inner.$fn() {
                    Ok(g) => Ok($guard { lock: self, hold: None, inner: g }),
                    Err(p) => Err(PoisonError::new($guard { lock: self, hold: None, inner: p.into_inner() })),
                };
            };
            let (r, wait) = match self.inner.$try() {
                Ok(g) => (Ok(g), None),
                Err(TryLockError::Poisoned(p)) => (Err(p), None),
                Err(TryLockError::WouldBlock) => {
                    let wait = self.state.begin_wait(thread);
                    (self.inner.$fn(), Some(wait))
                }
            };
            let hold = Some(self.state.acquired(thread, wait, $exclusive));
            match r {
                Ok(g) => Ok($guard { lock: self, hold, inner: g }),
                Err(p) => Err(PoisonError::new($guard { lock: self, hold, inner: p.into_inner() })),
            }
        }

        #[$try_doc]
        pub fn $try(&self) -> TryLockResult<$guard<'_, T>> {
            let hold = || LockState::thread().map(|t| self.state.acquired(t, None, $exclusive));
            match self.inner.$try() {
                Ok(g) => Ok($guard { lock: self, hold: hold(), inner: g }),
                Err(TryLockError::Poisoned(p)) => Err(TryLockError::Poisoned(PoisonError::new(
                    $guard { lock: self, hold: hold(), inner: p.into_inner() },
                ))),
                Err(TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
            }
        }
    };
}

impl<T: ?Sized> RwLock<T> {
    /// The lock's name.
    ///
    /// ```
    /// assert_eq!(perfgraph_core::sync::RwLock::new("table", ()).name(), "table");
    /// ```
    pub fn name(&self) -> &'static str {
        self.state.name
    }

    acquire!(
        /// Shared access, blocking while a writer holds the lock (as std's `read`).
        ///
        /// ```
        /// let l = perfgraph_core::sync::RwLock::new("table", 1);
        /// let (a, b) = (l.read().unwrap(), l.read().unwrap());
        /// assert_eq!(*a + *b, 2);
        /// ```
        read,
        doc = "Shared access if no writer holds the lock now (as std's `try_read`).",
        try_read,
        RwLockReadGuard,
        false
    );

    acquire!(
        /// Exclusive access, blocking while anyone holds the lock (as std's `write`).
        ///
        /// ```
        /// let l = perfgraph_core::sync::RwLock::new("table", 1);
        /// *l.write().unwrap() = 2;
        /// assert_eq!(*l.read().unwrap(), 2);
        /// ```
        write,
        doc = "Exclusive access if nobody holds the lock now (as std's `try_write`).",
        try_write,
        RwLockWriteGuard,
        true
    );

    /// Whether a writer panicked while holding the lock (as std's).
    ///
    /// ```
    /// assert!(!perfgraph_core::sync::RwLock::new("table", ()).is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.inner.is_poisoned()
    }

    /// Clears the poisoned state (as std's).
    ///
    /// ```
    /// let l = perfgraph_core::sync::RwLock::new("table", ());
    /// l.clear_poison();
    /// ```
    pub fn clear_poison(&self) {
        self.inner.clear_poison();
    }

    /// The value, through a unique borrow: no locking needed (as std's `get_mut`).
    ///
    /// ```
    /// let mut l = perfgraph_core::sync::RwLock::new("table", 1);
    /// *l.get_mut().unwrap() = 5;
    /// assert_eq!(*l.read().unwrap(), 5);
    /// ```
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        self.inner.get_mut()
    }
}

macro_rules! guard_impls {
    ($guard:ident) => {
        impl<T: ?Sized> Drop for $guard<'_, T> {
            #[inline]
            fn drop(&mut self) {
                if let Some(h) = self.hold.take() {
                    self.lock.state.release(h);
                }
                // `inner` drops next: the unlock comes after the hold is recorded.
            }
        }

        impl<T: ?Sized> Deref for $guard<'_, T> {
            type Target = T;
            fn deref(&self) -> &T {
                &self.inner
            }
        }

        impl<T: ?Sized + fmt::Debug> fmt::Debug for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }

        impl<T: ?Sized + fmt::Display> fmt::Display for $guard<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    };
}

guard_impls!(RwLockReadGuard);
guard_impls!(RwLockWriteGuard);

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RwLock")
            .field("name", &self.state.name)
            .field("inner", &&self.inner)
            .finish()
    }
}

impl<T: Default> Default for RwLock<T> {
    /// A lock named `"(unnamed)"` holding `T::default()`.
    fn default() -> RwLock<T> {
        RwLock::new("(unnamed)", T::default())
    }
}
