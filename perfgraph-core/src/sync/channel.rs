//! [`channel`] and [`sync_channel`]: std's `mpsc`, named, recording the waits and who ended them. Each
//! item carries its sender's stamp (thread and instant), so a receive that blocked knows exactly which
//! send woke it; each receive leaves its stamp for a send that blocked on a full channel.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use std::time::Duration;

use super::stamped::{self, Shared, Tried, channel_ends, stamp};
use super::wake::Stamp;

/// A channel named `name` of unbounded capacity, as [`std::sync::mpsc::channel`]: a receive that waits
/// is recorded (`wait: <name>`) with the send that woke it.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::channel("jobs");
/// let h = perfgraph_core::sync::spawn(move || tx.send(7).unwrap());
/// assert_eq!(rx.recv().unwrap(), 7);
/// h.join().unwrap();
/// ```
pub fn channel<T>(name: &'static str) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    let (shared, receiver) = Receiver::new(name, rx);
    (Sender { inner: tx, shared }, receiver)
}

/// A channel named `name` holding at most `bound` items, as [`std::sync::mpsc::sync_channel`] (0: each
/// send waits for its receive): a send that waits for room is recorded with the receive that made it,
/// a receive that waits with the send that woke it.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::sync_channel("slots", 1);
/// tx.send(1).unwrap();
/// assert!(tx.try_send(2).is_err());
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
pub fn sync_channel<T>(name: &'static str, bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::sync_channel(bound);
    let (shared, receiver) = Receiver::new(name, rx);
    (SyncSender { inner: tx, shared }, receiver)
}

/// The sending end of a [`channel`], as std's `Sender`.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::channel::<u8>("jobs");
/// tx.clone().send(1).unwrap();
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
pub struct Sender<T> {
    inner: mpsc::Sender<(T, Stamp)>,
    shared: Arc<Shared>,
}

/// The sending end of a [`sync_channel`], as std's `SyncSender`.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::sync_channel::<u8>("slots", 2);
/// tx.clone().send(1).unwrap();
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
pub struct SyncSender<T> {
    inner: mpsc::SyncSender<(T, Stamp)>,
    shared: Arc<Shared>,
}

/// The receiving end of a [`channel`] or [`sync_channel`], as std's `Receiver`.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::channel("jobs");
/// tx.send("a").unwrap();
/// drop(tx);
/// assert_eq!(rx.iter().collect::<Vec<_>>(), ["a"]);
/// ```
pub struct Receiver<T> {
    inner: mpsc::Receiver<(T, Stamp)>,
    shared: Arc<Shared>,
}

impl<T> Sender<T> {
    /// Sends `t` (as std's `send`: an error, giving it back, once the receiver is gone).
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::channel("jobs");
    /// drop(rx);
    /// assert_eq!(tx.send(5).unwrap_err().0, 5);
    /// ```
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.inner
            .send((t, stamp()))
            .map_err(|SendError((t, _))| SendError(t))
    }
}

impl<T> SyncSender<T> {
    /// Sends `t`, waiting for room (as std's `send`); a wait is recorded with the receive that made room.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::sync_channel("slots", 0);
    /// let h = perfgraph_core::sync::spawn(move || rx.recv().unwrap());
    /// tx.send(9).unwrap();
    /// assert_eq!(h.join().unwrap(), 9);
    /// ```
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        let unstamped = |SendError((t, _)): SendError<(T, Stamp)>| SendError(t);
        stamped::send(
            &self.shared,
            t,
            |item| match self.inner.try_send(item) {
                Ok(()) => Tried::Sent,
                Err(TrySendError::Full(item)) => Tried::Full(item),
                Err(TrySendError::Disconnected((t, _))) => Tried::Failed(SendError(t)),
            },
            |item| self.inner.send(item).map_err(unstamped),
        )
    }

    /// Sends `t` if there is room now (as std's `try_send`); never waits.
    ///
    /// ```
    /// use std::sync::mpsc::TrySendError;
    /// let (tx, _rx) = perfgraph_core::sync::sync_channel("slots", 0);
    /// assert!(matches!(tx.try_send(1), Err(TrySendError::Full(1))));
    /// ```
    pub fn try_send(&self, t: T) -> Result<(), TrySendError<T>> {
        self.inner.try_send((t, stamp())).map_err(|e| match e {
            TrySendError::Full((t, _)) => TrySendError::Full(t),
            TrySendError::Disconnected((t, _)) => TrySendError::Disconnected(t),
        })
    }
}

impl<T> Receiver<T> {
    /// The receiving end of a new channel named `name` around std's `inner`, and the part its sender
    /// shares with it: what [`channel`] and [`sync_channel`] both make.
    fn new(name: &'static str, inner: mpsc::Receiver<(T, Stamp)>) -> (Arc<Shared>, Receiver<T>) {
        let shared = Shared::new(name);
        (Arc::clone(&shared), Receiver { inner, shared })
    }

    /// Receives an item, waiting for one (as std's `recv`: an error once empty and every sender is gone); a
    /// wait is recorded with the send that ended it.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::channel::<u8>("jobs");
    /// drop(tx);
    /// assert!(rx.recv().is_err());
    /// ```
    pub fn recv(&self) -> Result<T, RecvError> {
        self.receive(None).map_err(|_| RecvError)
    }

    /// Receives an item, waiting at most `timeout` (as std's `recv_timeout`).
    ///
    /// ```
    /// use std::sync::mpsc::RecvTimeoutError;
    /// let (_tx, rx) = perfgraph_core::sync::channel::<u8>("jobs");
    /// let r = rx.recv_timeout(std::time::Duration::from_millis(1));
    /// assert_eq!(r, Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.receive(Some(timeout))
    }

    /// Receives an item if one is there now (as std's `try_recv`).
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::channel("jobs");
    /// assert!(rx.try_recv().is_err());
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_recv().unwrap(), 1);
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.shared.received_now();
        self.inner.try_recv().map(|(t, _)| t)
    }

    /// The items as they come, until every sender is gone (as std's `iter`).
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::channel("jobs");
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.iter().sum::<i32>(), 3);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(|| self.recv().ok())
    }

    /// The items there now, without waiting (as std's `try_iter`).
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::channel("jobs");
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1]);
    /// ```
    pub fn try_iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(|| self.try_recv().ok())
    }

    /// A receive, waiting for ever or at most `timeout` (`stamped::receive`).
    fn receive(&self, timeout: Option<Duration>) -> Result<T, RecvTimeoutError> {
        stamped::receive(
            &self.shared,
            || match self.inner.try_recv() {
                Ok(item) => Some(Ok(item)),
                Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
                Err(TryRecvError::Empty) => None,
            },
            || self.take(timeout),
        )
    }

    fn take(&self, timeout: Option<Duration>) -> Result<(T, Stamp), RecvTimeoutError> {
        match timeout {
            Some(d) => self.inner.recv_timeout(d),
            None => self
                .inner
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        }
    }
}

channel_ends!(clone: Sender, SyncSender; debug: Sender, SyncSender, Receiver; receiver: Receiver);

/// The items of a [`Receiver`] it owns, as they come (as std's `IntoIter`).
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::channel("jobs");
/// tx.send(4).unwrap();
/// drop(tx);
/// let all: perfgraph_core::sync::IntoIter<i32> = rx.into_iter();
/// assert_eq!(all.collect::<Vec<_>>(), [4]);
/// ```
pub struct IntoIter<T> {
    rx: Receiver<T>,
}
