//! What the two channel wrappers share (std's `mpsc`: [`channel`](super::channel()); crossbeam-channel's:
//! `sync::crossbeam`): the ends' name and last receive, each item's sender stamp, and the two calls that
//! may wait, a receive for an item and a send for room, each recorded with who ended its wait.

use std::sync::Arc;

use super::state::LockState;
use super::wake::{NameId, SharedStamp, Stamp, Wait};
use crate::local::thread::ThreadState;

/// What the ends of one channel share: its name, and the last receive.
#[derive(Debug)]
pub(super) struct Shared {
    pub name: &'static str,
    id: NameId,
    received: SharedStamp,
}

impl Shared {
    pub fn new(name: &'static str) -> Arc<Shared> {
        Arc::new(Shared {
            name,
            id: NameId::new(),
            received: SharedStamp::new(),
        })
    }

    fn begin(&self, thread: &'static ThreadState) -> Wait {
        Wait::begin(thread, self.id.get(self.name), 0, true)
    }

    /// A receive that does not wait leaves its stamp all the same: a send waiting for room may be let in
    /// by it.
    pub fn received_now(&self) {
        self.received.store(stamp());
    }
}

/// The calling thread's stamp now, where it records.
pub(super) fn stamp() -> Stamp {
    LockState::thread().map(Stamp::now).unwrap_or_default()
}

/// What a send that does not wait gave.
pub(super) enum Tried<T, E> {
    Sent,
    /// No room: the item back.
    Full(T),
    /// The other end is gone (the item is in the error).
    Failed(E),
}

/// A send of `t`: `try_give` first, which never waits; on a full channel `give` waits for room, recorded
/// with the receive that made it.
pub(super) fn send<T, E>(
    shared: &Shared,
    t: T,
    try_give: impl FnOnce((T, Stamp)) -> Tried<(T, Stamp), E>,
    give: impl FnOnce((T, Stamp)) -> Result<(), E>,
) -> Result<(), E> {
    let Some(thread) = LockState::thread() else {
        return give((t, Stamp::default()));
    };
    let t = match try_give((t, Stamp::now(thread))) {
        Tried::Sent => return Ok(()),
        Tried::Failed(e) => return Err(e),
        Tried::Full((t, _)) => t,
    };
    let w = shared.begin(thread);
    let start = w.start();
    let r = give((t, Stamp::now(thread)));
    let made_room = shared.received.load();
    w.end((r.is_ok() && made_room.at >= start).then_some(made_room));
    r
}

/// A receive: `try_take` first, which never waits (`None`: the channel is empty); then `take` waits,
/// recorded with the stamp of the item it got. The receive's stamp is left before the item is taken (so
/// a sender the take lets in sees it: the channel orders the two).
pub(super) fn receive<T, E>(
    shared: &Shared,
    try_take: impl FnOnce() -> Option<Result<(T, Stamp), E>>,
    take: impl FnOnce() -> Result<(T, Stamp), E>,
) -> Result<T, E> {
    let Some(thread) = LockState::thread() else {
        return take().map(|(t, _)| t);
    };
    shared.received.store(Stamp::now(thread));
    if let Some(r) = try_take() {
        return r.map(|(t, _)| t);
    }
    let w = shared.begin(thread);
    match take() {
        Ok((t, sent)) => {
            w.end(Some(sent));
            shared.received.store(Stamp::now(thread));
            Ok(t)
        }
        Err(e) => {
            w.end(None);
            Err(e)
        }
    }
}

/// The impls both wrappers' ends have: `Clone` (each of `$cloned`), `Debug` by name (each of `$named`),
/// and a receiver's iterators (`$receiver`, its `IntoIter`).
macro_rules! channel_ends {
    (clone: $($cloned:ident),*; debug: $($named:ident),*; receiver: $receiver:ident) => {
        $(
            impl<T> Clone for $cloned<T> {
                fn clone(&self) -> $cloned<T> {
                    $cloned {
                        inner: self.inner.clone(),
                        shared: std::sync::Arc::clone(&self.shared),
                    }
                }
            }
        )*
        $(
            impl<T> std::fmt::Debug for $named<T> {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.debug_struct(stringify!($named)).field("name", &self.shared.name).finish()
                }
            }
        )*
        impl<'a, T> IntoIterator for &'a $receiver<T> {
            type Item = T;
            type IntoIter = Box<dyn Iterator<Item = T> + 'a>;
            fn into_iter(self) -> Self::IntoIter {
                Box::new(self.iter())
            }
        }

        impl<T> IntoIterator for $receiver<T> {
            type Item = T;
            type IntoIter = IntoIter<T>;
            fn into_iter(self) -> IntoIter<T> {
                IntoIter { rx: self }
            }
        }

        impl<T> Iterator for IntoIter<T> {
            type Item = T;
            fn next(&mut self) -> Option<T> {
                self.rx.recv().ok()
            }
        }
    };
}
pub(super) use channel_ends;
