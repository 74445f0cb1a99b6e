//! std's locks, threads, condvars, channels and barriers with a name and the same API, recording who
//! waited for what and who ended each wait: ThreadScope's lock records, and the wake-up edges the critical
//! path follows (`perfgraph report --critical-path`).
//!
//! * [`Mutex`] and [`RwLock`] (`Mutex::new("queue", value)`; `lock`, `try_lock`, `read`, `write`, guards,
//!   poisoning): how long a wait on which lock lasted, which thread held it then, how many threads
//!   contended for it, and which release let the waiter in.
//! * [`Condvar`]: each wait, ended by the notify (or the mutex's release after it).
//! * [`channel()`] and [`sync_channel`] (std's `mpsc`): a receive that waited, ended by the send of its item;
//!   a send that waited for room, ended by the receive that made it. With the `crossbeam` feature,
//!   `crossbeam::bounded` and `crossbeam::unbounded` do the same for crossbeam-channel's channels (many
//!   receivers; no `select!`).
//! * [`Barrier`]: each wait, ended by the round's last arrival.
//! * [`spawn`] and [`Builder`]: a thread's start, after its spawner asked for it; a [`JoinHandle::join`]
//!   that waited, ended by the thread's end.
//!
//! Where they show:
//!
//! * The report's `Locks:` table (`PERFGRAPH_REPORT=locks`, in `all` when a lock was used; `perfgraph
//!   report --locks`) and the JSON's `locks`: per lock name, its acquisitions, those that waited, the time
//!   waited and held, the longest of each, and the most threads waiting at once. (Locks only: a condvar's,
//!   channel's, barrier's or join's waits are in the trace and live print.)
//! * The trace: a `wait: <name>` slice on the waiting thread (naming a lock's holder when the wait began),
//!   a lock's `hold: <name>` slice, and a flow arrow from the thread that ended the wait to the waiter's
//!   return (from the spawner to a thread's start, under `spawn`).
//! * Live print: a thread blocked past the time limit shows `Waiting for queue (held by worker-2)`, with
//!   dots, as a section does (not a join: the joined thread's sections show).
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

mod barrier;
mod channel;
mod condvar;
#[cfg(feature = "crossbeam")]
pub mod crossbeam;
mod join;
mod mutex;
mod rwlock;
mod stamped;
mod state;
mod wake;

pub use crate::local::locks::MAX_LOCK_NAMES;
pub use barrier::{Barrier, BarrierWaitResult};
pub use channel::{IntoIter, Receiver, Sender, SyncSender, channel, sync_channel};
pub use condvar::Condvar;
pub use join::{Builder, JoinHandle, spawn};
pub use mutex::{Mutex, MutexGuard};
pub use rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
