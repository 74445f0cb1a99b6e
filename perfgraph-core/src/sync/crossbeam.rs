//! [`bounded`] and [`unbounded`]: crossbeam-channel's channels (many senders, many receivers), named,
//! recording the waits and who ended them as [`channel`](super::channel()) does for std's: each item
//! carries its sender's stamp, so a receive that blocked knows which send woke it; each receive leaves
//! its stamp for a send that blocked on a full channel. The `crossbeam` feature's.
//!
//! The same API as crossbeam-channel's `Sender` and `Receiver` (their error types are crossbeam-channel's,
//! re-exported here), but `select!`, which works on crossbeam's own types: a `select!` over these channels
//! is not possible, and a program that needs one keeps crossbeam's channels there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel as cb;
pub use crossbeam_channel::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};

use super::stamped::{self, Shared, Tried, channel_ends, stamp};
use super::wake::Stamp;

/// A channel named `name` of unbounded capacity, as `crossbeam_channel::unbounded`: a receive that waits
/// is recorded (`wait: <name>`) with the send that woke it.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
/// let rx2 = rx.clone();
/// let h = perfgraph_core::sync::spawn(move || rx2.recv().unwrap());
/// tx.send(7).unwrap();
/// assert_eq!(h.join().unwrap(), 7);
/// ```
pub fn unbounded<T>(name: &'static str) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = cb::unbounded();
    let (shared, receiver) = Receiver::new(name, rx);
    (Sender { inner: tx, shared }, receiver)
}

/// A channel named `name` holding at most `cap` items, as `crossbeam_channel::bounded` (0: each send
/// waits for its receive): a send that waits for room is recorded with the receive that made it, a
/// receive that waits with the send that woke it.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::crossbeam::bounded("slots", 1);
/// tx.send(1).unwrap();
/// assert!(tx.try_send(2).is_err());
/// assert_eq!(rx.recv().unwrap(), 1);
/// ```
pub fn bounded<T>(name: &'static str, cap: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = cb::bounded(cap);
    let (shared, receiver) = Receiver::new(name, rx);
    (Sender { inner: tx, shared }, receiver)
}

/// The sending end of a [`bounded`] or [`unbounded`] channel, as crossbeam-channel's `Sender`.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded::<u8>("jobs");
/// tx.clone().send(1).unwrap();
/// assert_eq!((rx.len(), rx.recv().unwrap()), (1, 1));
/// ```
pub struct Sender<T> {
    inner: cb::Sender<(T, Stamp)>,
    shared: Arc<Shared>,
}

/// The receiving end of a [`bounded`] or [`unbounded`] channel, as crossbeam-channel's `Receiver` (it
/// clones: many receivers take turns).
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
/// tx.send("a").unwrap();
/// drop(tx);
/// assert_eq!(rx.iter().collect::<Vec<_>>(), ["a"]);
/// ```
pub struct Receiver<T> {
    inner: cb::Receiver<(T, Stamp)>,
    shared: Arc<Shared>,
}

impl<T> Sender<T> {
    /// Sends `t`, waiting for room on a full bounded channel (an error, giving it back, once every
    /// receiver is gone); a wait is recorded with the receive that made room.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::crossbeam::bounded("slots", 0);
    /// let h = perfgraph_core::sync::spawn(move || rx.recv().unwrap());
    /// tx.send(9).unwrap();
    /// assert_eq!(h.join().unwrap(), 9);
    /// ```
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.send_until(t, None).map_err(|e| match e {
            SendTimeoutError::Disconnected(t) | SendTimeoutError::Timeout(t) => SendError(t),
        })
    }

    /// Sends `t`, waiting at most `timeout` for room (as crossbeam's `send_timeout`).
    ///
    /// ```
    /// use perfgraph_core::sync::crossbeam::{bounded, SendTimeoutError};
    /// let (tx, _rx) = bounded("slots", 0);
    /// let r = tx.send_timeout(1, std::time::Duration::from_millis(1));
    /// assert!(matches!(r, Err(SendTimeoutError::Timeout(1))));
    /// ```
    pub fn send_timeout(&self, t: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        self.send_until(t, Some(Instant::now() + timeout))
    }

    /// Sends `t` if there is room now (as crossbeam's `try_send`); never waits.
    ///
    /// ```
    /// use perfgraph_core::sync::crossbeam::{bounded, TrySendError};
    /// let (tx, _rx) = bounded("slots", 0);
    /// assert!(matches!(tx.try_send(1), Err(TrySendError::Full(1))));
    /// ```
    pub fn try_send(&self, t: T) -> Result<(), TrySendError<T>> {
        self.inner.try_send((t, stamp())).map_err(|e| match e {
            TrySendError::Full((t, _)) => TrySendError::Full(t),
            TrySendError::Disconnected((t, _)) => TrySendError::Disconnected(t),
        })
    }

    /// A send, waiting for ever or until `deadline` (`stamped::send`).
    fn send_until(&self, t: T, deadline: Option<Instant>) -> Result<(), SendTimeoutError<T>> {
        stamped::send(
            &self.shared,
            t,
            |item| match self.inner.try_send(item) {
                Ok(()) => Tried::Sent,
                Err(TrySendError::Full(item)) => Tried::Full(item),
                Err(TrySendError::Disconnected((t, _))) => {
                    Tried::Failed(SendTimeoutError::Disconnected(t))
                }
            },
            |item| {
                match deadline {
                    Some(d) => self.inner.send_deadline(item, d),
                    None => self
                        .inner
                        .send(item)
                        .map_err(|SendError(item)| SendTimeoutError::Disconnected(item)),
                }
                .map_err(unstamped)
            },
        )
    }

    /// Items in the channel now.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the channel is empty now.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether the channel is full now (an unbounded one never is).
    pub fn is_full(&self) -> bool {
        self.inner.is_full()
    }

    /// Its capacity: `None` for an unbounded channel.
    pub fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }
}

/// A send's error, its stamp taken off the item.
fn unstamped<T>(e: SendTimeoutError<(T, Stamp)>) -> SendTimeoutError<T> {
    match e {
        SendTimeoutError::Timeout((t, _)) => SendTimeoutError::Timeout(t),
        SendTimeoutError::Disconnected((t, _)) => SendTimeoutError::Disconnected(t),
    }
}

impl<T> Receiver<T> {
    /// The receiving end of a new channel named `name` around crossbeam's `inner`, and the part its
    /// senders share with it: what [`unbounded`] and [`bounded`] both make.
    fn new(name: &'static str, inner: cb::Receiver<(T, Stamp)>) -> (Arc<Shared>, Receiver<T>) {
        let shared = Shared::new(name);
        (Arc::clone(&shared), Receiver { inner, shared })
    }

    /// Receives an item, waiting for one (an error once empty and every sender is gone); a wait is
    /// recorded with the send that ended it.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded::<u8>("jobs");
    /// drop(tx);
    /// assert!(rx.recv().is_err());
    /// ```
    pub fn recv(&self) -> Result<T, RecvError> {
        self.receive(None).map_err(|_| RecvError)
    }

    /// Receives an item, waiting at most `timeout` (as crossbeam's `recv_timeout`).
    ///
    /// ```
    /// use perfgraph_core::sync::crossbeam::{unbounded, RecvTimeoutError};
    /// let (_tx, rx) = unbounded::<u8>("jobs");
    /// let r = rx.recv_timeout(std::time::Duration::from_millis(1));
    /// assert_eq!(r, Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.receive(Some(Instant::now() + timeout))
    }

    /// Receives an item if one is there now (as crossbeam's `try_recv`).
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
    /// assert!(rx.try_recv().is_err());
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_recv().unwrap(), 1);
    /// ```
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.shared.received_now();
        self.inner.try_recv().map(|(t, _)| t)
    }

    /// The items as they come, until every sender is gone.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
    /// tx.send(1).unwrap();
    /// tx.send(2).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.iter().sum::<i32>(), 3);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(|| self.recv().ok())
    }

    /// The items there now, without waiting.
    ///
    /// ```
    /// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
    /// tx.send(1).unwrap();
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1]);
    /// ```
    pub fn try_iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(|| self.try_recv().ok())
    }

    /// Items in the channel now.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the channel is empty now.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Its capacity: `None` for an unbounded channel.
    pub fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }

    /// A receive, waiting for ever or until `deadline` (`stamped::receive`).
    fn receive(&self, deadline: Option<Instant>) -> Result<T, RecvTimeoutError> {
        stamped::receive(
            &self.shared,
            || match self.inner.try_recv() {
                Ok(item) => Some(Ok(item)),
                Err(TryRecvError::Disconnected) => Some(Err(RecvTimeoutError::Disconnected)),
                Err(TryRecvError::Empty) => None,
            },
            || self.take(deadline),
        )
    }

    fn take(&self, deadline: Option<Instant>) -> Result<(T, Stamp), RecvTimeoutError> {
        match deadline {
            Some(d) => self.inner.recv_deadline(d),
            None => self
                .inner
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        }
    }
}

channel_ends!(clone: Sender, Receiver; debug: Sender, Receiver; receiver: Receiver);

/// The items of a [`Receiver`] it owns, as they come.
///
/// ```
/// let (tx, rx) = perfgraph_core::sync::crossbeam::unbounded("jobs");
/// tx.send(4).unwrap();
/// drop(tx);
/// let all: perfgraph_core::sync::crossbeam::IntoIter<i32> = rx.into_iter();
/// assert_eq!(all.collect::<Vec<_>>(), [4]);
/// ```
pub struct IntoIter<T> {
    rx: Receiver<T>,
}
