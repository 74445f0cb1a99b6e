//! The memory budget of perfgraph's own output buffers: the bytes that grow with the data an output
//! carries (OTLP's requests and their queue; the trace's encode buffer, Prometheus's text and the control
//! socket's answers grow with the sections, not the run, and are not on it). Every such buffer is an
//! [`OutBuf`], grown only fallibly (`Vec::try_reserve`) and
//! only within [`LIMIT`] bytes for all of them together: growth past the budget, or an allocation the
//! system refuses (an address-space limit, `ulimit -v`), is refused, and the output drops that piece and
//! counts it in its own loss line, instead of the process aborting in the allocator.
//!
//! What grows with the run but is not a byte buffer, the critical path's timeline
//! (`PERFGRAPH_REPORT=critical`), takes its bytes from the same budget as a [`Charge`].
//!
//! The small allocations around them (a span's ids, a header line) stay ordinary: what matters is what
//! grows with the number of calls.

// The byte buffers are OTLP's; the critical path's timeline takes a `Charge` in every build.
#![cfg_attr(not(feature = "otlp"), allow(dead_code))]

use std::sync::atomic::{AtomicUsize, Ordering};

/// The budget, bytes: 64 MiB, for every output buffer together: room for OTLP's whole queue (32 MiB) with
/// the request under way, and for the critical path's timeline.
pub const LIMIT: usize = 64 << 20;

/// Bytes charged now.
static USED: AtomicUsize = AtomicUsize::new(0);

/// A growth that was refused: the budget was spent, or the system had no memory for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

/// Takes `bytes` from the budget, if they are there.
fn charge(bytes: usize) -> bool {
    USED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
        used.checked_add(bytes).filter(|&after| after <= LIMIT)
    })
    .is_ok()
}

/// Gives `bytes` back.
fn release(bytes: usize) {
    USED.fetch_sub(bytes, Ordering::AcqRel);
}

fn refused() -> Refused {
    Refused
}

/// A byte buffer whose capacity is charged to the budget, and given back when it goes.
#[derive(Debug, Default)]
pub struct OutBuf {
    bytes: Vec<u8>,
    charged: usize,
}

impl OutBuf {
    pub const fn new() -> OutBuf {
        OutBuf {
            bytes: Vec::new(),
            charged: 0,
        }
    }

    /// An empty buffer of exactly `capacity` bytes, or `Refused`.
    pub fn with_capacity(capacity: usize) -> Result<OutBuf, Refused> {
        let mut b = OutBuf::new();
        b.reserve_exact(capacity)?;
        Ok(b)
    }

    /// Room for `additional` more bytes, growing as a `Vec` does (doubling), or exactly as much when
    /// doubling would not fit the budget; `Refused` leaves the buffer as it was.
    pub fn reserve(&mut self, additional: usize) -> Result<(), Refused> {
        let Some(need) = self.needed(additional)? else {
            return Ok(());
        };
        let doubled = need.max(self.bytes.capacity().saturating_mul(2)).max(64);
        if self.grow_to(doubled).is_ok() {
            return Ok(());
        }
        self.grow_to(need)
    }

    /// Room for exactly `additional` more bytes (no more is charged).
    pub fn reserve_exact(&mut self, additional: usize) -> Result<(), Refused> {
        match self.needed(additional)? {
            Some(need) => self.grow_to(need),
            None => Ok(()),
        }
    }

    /// The capacity `additional` more bytes need, `None` when the buffer has it already; `Refused` when
    /// the sum overflows.
    fn needed(&self, additional: usize) -> Result<Option<usize>, Refused> {
        let need = self
            .bytes
            .len()
            .checked_add(additional)
            .ok_or_else(refused)?;
        Ok((need > self.bytes.capacity()).then_some(need))
    }

    /// Grows the capacity to `capacity` (more than now), charging the difference first.
    fn grow_to(&mut self, capacity: usize) -> Result<(), Refused> {
        // `charged` is never less than the capacity: only the growth is new.
        let extra = capacity.saturating_sub(self.charged);
        if !charge(extra) {
            return Err(refused());
        }
        if self
            .bytes
            .try_reserve_exact(capacity - self.bytes.len())
            .is_err()
        {
            release(extra);
            return Err(refused());
        }
        self.charged += extra;
        self.settle();
        Ok(())
    }

    /// Charges what the vector holds beyond what was charged (an allocator may give more than asked,
    /// and [`write`](Self::write)'s encoder may have outgrown its reservation): counted, never refused,
    /// since the bytes are there already.
    fn settle(&mut self) {
        let cap = self.bytes.capacity();
        if cap > self.charged {
            USED.fetch_add(cap - self.charged, Ordering::AcqRel);
            self.charged = cap;
        }
    }

    /// Appends `data`, or `Refused` (the buffer unchanged).
    pub fn extend(&mut self, data: &[u8]) -> Result<(), Refused> {
        self.reserve(data.len())?;
        self.bytes.extend_from_slice(data);
        Ok(())
    }

    /// Lets `encode` append at most `most` bytes, reserved first: `Refused` (nothing written) when they
    /// cannot be.
    pub fn write(&mut self, most: usize, encode: impl FnOnce(&mut Vec<u8>)) -> Result<(), Refused> {
        self.reserve(most)?;
        encode(&mut self.bytes);
        self.settle();
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for OutBuf {
    fn drop(&mut self) {
        release(self.charged);
    }
}

/// Bytes charged to the budget for what is not a byte buffer (the critical path's timeline, which grows
/// with the calls it keeps): taken in steps with [`take`](Charge::take), given back when it goes.
#[derive(Debug, Default)]
pub struct Charge {
    bytes: usize,
}

impl Charge {
    /// Takes `bytes` more, or `Refused` (nothing taken) when the budget has not got them.
    pub fn take(&mut self, bytes: usize) -> Result<(), Refused> {
        if !charge(bytes) {
            return Err(refused());
        }
        self.bytes += bytes;
        Ok(())
    }

    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_charged_refused_past_the_budget_and_given_back() {
        // The buffer's own charge: the process-wide count moves with the other tests' buffers meanwhile
        // (it failed once in CI when one was given back between the two reads).
        let mut a = OutBuf::with_capacity(1000).unwrap();
        assert!(a.charged >= 1000);
        a.extend(&[1; 1500]).unwrap();
        assert_eq!(a.len(), 1500);
        assert!(a.capacity() >= 1500 && a.charged >= a.capacity());
        // Far more than the budget: refused, the buffer as it was.
        assert_eq!(a.reserve(LIMIT + 1), Err(Refused));
        assert_eq!(a.len(), 1500);
        // Written through an encoder within its reservation.
        a.write(10, |v| v.extend_from_slice(b"0123456789")).unwrap();
        assert_eq!(&a.as_slice()[1500..], b"0123456789");
        drop(a);
    }

    #[test]
    fn a_charge_is_refused_past_the_budget_and_given_back() {
        let mut c = Charge::default();
        c.take(4096).unwrap();
        assert_eq!(c.take(LIMIT + 1), Err(Refused));
        assert_eq!(c.bytes(), 4096);
        drop(c);
    }
}
