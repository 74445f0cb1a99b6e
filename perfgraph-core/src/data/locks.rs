//! What `perfgraph_core::sync`'s locks recorded: one row per lock name.

/// One lock name's figures (every lock of that name, those dropped too): what the `Locks:` table shows and
/// the JSON's `locks` array holds.
///
/// ```
/// use perfgraph_core::data::LockStats;
///
/// let mut l = LockStats::new("queue");
/// l.acquisitions = 10;
/// l.contended = 2;
/// assert_eq!(l.name, "queue");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LockStats {
    /// The locks' name (`Mutex::new("queue", ...)`).
    pub name: String,
    /// Acquisitions that ended (a hold is counted when it is released; a `RwLock`'s reads included).
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    /// Time waited, summed, ns.
    pub wait_ns: u64,
    /// The longest wait, ns.
    pub max_wait_ns: u64,
    /// Time held, summed, ns.
    pub hold_ns: u64,
    /// The longest hold, ns.
    pub max_hold_ns: u64,
    /// The most threads waiting for one lock of this name at once.
    pub max_waiters: u64,
}

impl LockStats {
    /// A lock name with nothing recorded.
    pub fn new(name: impl Into<String>) -> LockStats {
        LockStats {
            name: name.into(),
            ..LockStats::default()
        }
    }

    /// Adds `other`'s figures (another process's, for a merge).
    pub fn combine(&mut self, other: &LockStats) {
        self.acquisitions = self.acquisitions.saturating_add(other.acquisitions);
        self.contended = self.contended.saturating_add(other.contended);
        self.wait_ns = self.wait_ns.saturating_add(other.wait_ns);
        self.max_wait_ns = self.max_wait_ns.max(other.max_wait_ns);
        self.hold_ns = self.hold_ns.saturating_add(other.hold_ns);
        self.max_hold_ns = self.max_hold_ns.max(other.max_hold_ns);
        self.max_waiters = self.max_waiters.max(other.max_waiters);
    }
}
