//! Locks that record their waits and holds: [`Mutex`] and [`RwLock`], std's own with a name
//! (`Mutex::new("queue", value)`) and the same API (`lock`, `try_lock`, `read`, `write`, guards,
//! poisoning). ThreadScope's lock records: how long a wait on which lock lasted, which thread held it then,
//! how many threads contended for it.
//!
//! * The report's `Locks:` table (`PERFGRAPH_REPORT=locks`, in `all` when a lock was used; `perfgraph
//!   report --locks`) and the JSON's `locks`: per lock name, its acquisitions, those that waited, the time
//!   waited and held, the longest of each, and the most threads waiting at once.
//! * The trace: a `wait: <name>` slice on the waiting thread, naming the holder when the wait began, a
//!   `hold: <name>` slice, and a flow arrow from the releasing thread's hold to the waiter's acquisition.
//! * Live print: a thread blocked on a lock past the time limit shows `Waiting for queue (held by
//!   worker-2)`, with dots, as a section does.
//!
//! They wrap std's locks, not `parking_lot`'s: std's are futex-based and as fast uncontended (one
//! compare-and-swap each way), they poison, which the API keeps, and they add no dependency. An
//! uncontended lock and unlock adds two clock reads and a few stores on the lock's own cache line to std's
//! (docs/performance.md measures it side by side); a wait adds a count of waiters on that line.
//!
//! ```
//! use perfgraph_core::sync::Mutex;
//! use std::sync::Arc;
//!
//! let jobs = Arc::new(Mutex::new("jobs", Vec::new()));
//! let worker = {
//!     let jobs = Arc::clone(&jobs);
//!     std::thread::spawn(move || jobs.lock().unwrap().push(1))
//! };
//! jobs.lock().unwrap().push(2);
//! worker.join().unwrap();
//! assert_eq!(jobs.lock().unwrap().len(), 2);
//! ```

mod mutex;
mod rwlock;
mod state;

pub use crate::local::locks::MAX_LOCK_NAMES;
pub use mutex::{Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
