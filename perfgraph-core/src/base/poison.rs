//! Taking a lock that a panic poisoned. perfgraph's own locks guard plain data that a panicking holder
//! leaves whole (a list, a table, a flag), so the lock is taken anyway: a panic in the program never makes
//! perfgraph unusable.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, poisoned or not.
#[inline]
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
