//! The collector's addresses: an IP address as `PERFGRAPH_OTLP` gives it, or a host name resolved on a
//! short-lived thread of its own (`perfgraph-dns`), since `getaddrinfo` can block for seconds.
//!
//! The lookup begins with the exporter, at the start, so its answer is in long before the first export
//! and long before exit. A name that does not resolve is remembered ([`Address::Failed`]): it is looked up
//! again only when a batch is due after the back-off, never on the exit path, which waits for no lookup.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use crate::base::endpoint::Endpoint;
use crate::base::heap;

/// A lookup's answer, once the thread has it.
type Slot = Arc<Mutex<Option<io::Result<Vec<SocketAddr>>>>>;

/// Where the collector is.
pub(crate) enum Address {
    /// Its addresses (a host name may have several).
    Known(Vec<SocketAddr>),
    /// A lookup under way on its own thread.
    Looking(Slot),
    /// The last lookup failed: why, in a few words.
    Failed(String),
}

impl Address {
    /// `endpoint`'s address: known at once for an IP address, else a lookup begun now.
    pub(crate) fn of(endpoint: &Endpoint) -> Address {
        match endpoint.ip() {
            Some(ip) => Address::Known(vec![SocketAddr::new(ip, endpoint.port)]),
            None => look_up(&endpoint.host, endpoint.port),
        }
    }

    /// A lookup under way whose answer has come becomes [`Known`](Address::Known) or
    /// [`Failed`](Address::Failed); returns why when it failed (just now). Never waits.
    pub(crate) fn settle(&mut self, host: &str) -> Option<String> {
        let Address::Looking(slot) = self else {
            return None;
        };
        let found = slot.lock().ok()?.take()?;
        let why = match found {
            Ok(addrs) if !addrs.is_empty() => {
                *self = Address::Known(addrs);
                return None;
            }
            Ok(_) => format!("{host} has no address"),
            Err(e) => format!("cannot resolve {host}: {e}"),
        };
        *self = Address::Failed(why.clone());
        Some(why)
    }

    /// How many addresses a request may try in turn (1 while not known).
    pub(crate) fn count(&self) -> usize {
        match self {
            Address::Known(addrs) => addrs.len().max(1),
            Address::Looking(_) | Address::Failed(_) => 1,
        }
    }
}

/// Starts a lookup of `host` on a thread of its own.
fn look_up(host: &str, port: u16) -> Address {
    let slot: Slot = Arc::new(Mutex::new(None));
    let answer = Arc::clone(&slot);
    let host = host.to_owned();
    // The thread inherits the background thread's blocked signals; what it allocates is perfgraph's.
    let spawned = std::thread::Builder::new()
        .name("perfgraph-dns".into())
        .spawn(move || {
            heap::pause();
            let found = (host.as_str(), port)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>());
            if let Ok(mut slot) = answer.lock() {
                *slot = Some(found);
            }
        });
    if let Err(e) = spawned
        && let Ok(mut slot) = slot.lock()
    {
        *slot = Some(Err(e));
    }
    Address::Looking(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits (in the test only) for a lookup's answer.
    fn settled(mut a: Address, host: &str) -> (Address, Option<String>) {
        for _ in 0..1000 {
            if !matches!(a, Address::Looking(_)) {
                break;
            }
            if let Some(why) = a.settle(host) {
                return (a, Some(why));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        (a, None)
    }

    #[test]
    fn an_ip_address_is_known_at_once_and_a_failed_name_is_remembered() {
        let ip = Endpoint::parse("http://127.0.0.1:4318").unwrap();
        assert!(matches!(Address::of(&ip), Address::Known(a) if a.len() == 1));
        let bad = Endpoint::parse("http://no-such-host.invalid:4318").unwrap();
        let (mut a, why) = settled(Address::of(&bad), &bad.host);
        let why = why.expect("a name under .invalid does not resolve");
        assert!(why.contains("no-such-host.invalid"), "{why}");
        assert!(matches!(&a, Address::Failed(w) if *w == why));
        // Remembered: settling again neither fails anew nor looks it up again.
        assert_eq!(a.settle(&bad.host), None);
        assert!(matches!(a, Address::Failed(_)));
        assert_eq!(a.count(), 1);
    }
}
