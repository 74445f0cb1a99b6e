//! [`Barrier`]: std's, named, recording each wait and the last arrival that ended it.

use std::fmt;

use super::state::LockState;
use super::wake::{NameId, Stamp, Wait};
use crate::base::poison;

/// A barrier with a name, as [`std::sync::Barrier`]: `n` threads wait until all have arrived. Each
/// wait that blocks is recorded (`wait: <name>`) with the last arrival as the edge that ended it, which
/// the critical path follows.
///
/// ```
/// use perfgraph_core::sync::Barrier;
/// use std::sync::Arc;
///
/// let b = Arc::new(Barrier::new("step", 2));
/// let other = Arc::clone(&b);
/// let h = perfgraph_core::sync::spawn(move || other.wait().is_leader());
/// let leaders = u8::from(b.wait().is_leader()) + u8::from(h.join().unwrap());
/// assert_eq!(leaders, 1);
/// ```
pub struct Barrier {
    name: &'static str,
    id: NameId,
    n: usize,
    state: std::sync::Mutex<Round>,
    released: std::sync::Condvar,
}

/// The barrier's round: arrivals so far, its number, and the last arrival of the round before.
#[derive(Debug, Default)]
struct Round {
    count: usize,
    generation: u64,
    last: Stamp,
}

/// What [`Barrier::wait`] returns, as std's `BarrierWaitResult`: one thread of each round is the leader.
///
/// ```
/// let r = perfgraph_core::sync::Barrier::new("one", 1).wait();
/// assert!(r.is_leader());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this thread is its round's leader: the last to arrive.
    ///
    /// ```
    /// assert!(perfgraph_core::sync::Barrier::new("one", 1).wait().is_leader());
    /// ```
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier named `name` for `n` threads (as std's: `n` of 0 or 1 never blocks).
    ///
    /// ```
    /// let b = perfgraph_core::sync::Barrier::new("step", 4);
    /// assert_eq!(b.name(), "step");
    /// ```
    pub const fn new(name: &'static str, n: usize) -> Barrier {
        Barrier {
            name,
            id: NameId::new(),
            n,
            state: std::sync::Mutex::new(Round {
                count: 0,
                generation: 0,
                last: Stamp { thread: 0, at: 0 },
            }),
            released: std::sync::Condvar::new(),
        }
    }

    /// Its name.
    ///
    /// ```
    /// assert_eq!(perfgraph_core::sync::Barrier::new("step", 2).name(), "step");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Blocks until all `n` threads have arrived (as std's `wait`); the last to arrive is the leader and
    /// releases the others.
    ///
    /// ```
    /// let b = perfgraph_core::sync::Barrier::new("alone", 1);
    /// assert!(b.wait().is_leader());
    /// ```
    pub fn wait(&self) -> BarrierWaitResult {
        let thread = LockState::thread();
        let mut round = poison::lock(&self.state);
        round.count += 1;
        if round.count >= self.n {
            round.count = 0;
            round.generation = round.generation.wrapping_add(1);
            round.last = thread.map(Stamp::now).unwrap_or_default();
            drop(round);
            self.released.notify_all();
            return BarrierWaitResult(true);
        }
        let generation = round.generation;
        let wait = thread.map(|t| Wait::begin(t, self.id.get(self.name), 0, true));
        while round.generation == generation {
            round = self
                .released
                .wait(round)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        // The round's last arrival: no later round can end before this thread arrives again.
        let last = round.last;
        drop(round);
        if let Some(w) = wait {
            w.end(Some(last));
        }
        BarrierWaitResult(false)
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("name", &self.name)
            .field("n", &self.n)
            .finish()
    }
}
