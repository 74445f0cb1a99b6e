//! A single-producer, single-consumer ring of fixed-size records that never blocks its producer.
//!
//! The producer (a recording thread) writes record `n` into slot `n % capacity` and then publishes the new
//! head. When the consumer (the runtime's background thread) falls more than `capacity` records behind, the
//! producer simply overwrites the oldest slots; the consumer finds out and counts them as dropped. It can never
//! take a torn or overwritten slot for a valid record, because every slot is a tiny seqlock:
//!
//! * [`Slot::write`] stores the stamp `2n+1` ("record n is being written"), then the words, then `2n+2`
//!   ("record n is complete").
//! * [`Slot::read`] for record `n` loads the stamp, the words, then the stamp again, and accepts the words only
//!   if both stamps equal `2n+2`.
//!
//! Memory ordering (the protocol `tests/loom_ring.rs` model-checks): the writer's `fence(Release)` after the odd
//! stamp pairs with the reader's `fence(Acquire)` after it loaded the words, so a reader that saw any word of a
//! later write also sees (at least) that write's odd stamp on its second stamp load and rejects the slot. The
//! writer's final `Release` store of the even stamp pairs with the reader's first `Acquire` stamp load, so a
//! reader that sees `2n+2` sees all words of record `n`. The head's `Release` store in [`Ring::push`] pairs with
//! the `Acquire` load in [`Ring::drain`]. This is the standard seqlock (Boehm, "Can seqlocks get along with
//! programming language memory models?", 2012), with the sequence number doubling as the lap detector.
//!
//! The producer never reads anything the consumer writes: the consumer's position lives in its own [`Cursor`].
//!
//! Recycling ([`Ring::reused`]): a ring made that way goes back to a process-wide pool when it is dropped
//! (its thread exited, was folded into the retired summary, and the last reader let go), keeping its slots
//! *and its head*, and the next thread that needs a ring takes it from there. The new owner goes on
//! numbering records from that head ([`Ring::start`]), so every slot's stamp still only grows and the old
//! thread's records are simply older records: a consumer whose [`Cursor`] starts at the ring's start
//! ([`Ring::cursor`]) never asks for them, and one that falls a lap behind rejects them as it rejects any
//! overwritten record (their sequence numbers are below the one it wants). No slot needs re-zeroing, and no
//! page that became resident is given back and faulted in again. When the ring's memory cannot be had at
//! all (the allocation fails, e.g. under `ulimit -v`), the thread gets a 2-slot ring allocated normally
//! instead: its calls are counted and timed as usual (the trees do not depend on the ring), only the
//! outputs that need every record lose them; [`unmapped`] counts such threads.

use crate::base::atomics::atomic::{AtomicU64, Ordering, fence};
use crate::base::poison;
use crate::base::sys;

/// Rings given back by dropped [`Ring::reused`] rings: their slots and their head. At most
/// [`POOL_KEEP_BYTES`] of them: a ring given back past that is freed (its address space unmapped), so the
/// pool holds what a few new threads need, not one ring for every thread that was ever waiting to be
/// folded (with a trace, 10 MiB each).
static POOL: std::sync::Mutex<Pool> = std::sync::Mutex::new(Vec::new());

/// Most bytes of slots the pool keeps: 32 MiB (three 10 MiB trace rings, or a hundred 320 KiB ones).
pub const POOL_KEEP_BYTES: usize = 32 << 20;

/// What [`POOL`] holds: rings given back, with their heads.
pub type Pool = Vec<(Slots, u64)>;

/// The pool's lock, taken before a `fork()` (`collector::fork`, after the thread list's, the order every
/// other path takes them in) so a child never inherits it held.
pub fn hold_pool_for_fork() -> std::sync::MutexGuard<'static, Pool> {
    poison::lock(&POOL)
}

/// Threads waiting for a ring to come back to the pool ([`Waiting`]): a ring dropped meanwhile goes to
/// the pool even past [`POOL_KEEP_BYTES`], rather than back to the allocator.
static WAITING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A thread waiting for a ring, while it lives (see [`WAITING`]).
pub struct Waiting(());

impl Waiting {
    /// Counts the calling thread as waiting until the value is dropped.
    pub fn start() -> Waiting {
        WAITING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Waiting(())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Threads whose ring could not be allocated (they got a 2-slot ring instead).
static UNMAPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many threads got a 2-slot ring because their ring's memory could not be allocated.
pub fn unmapped() -> u64 {
    UNMAPPED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Words per record.
pub const WORDS: usize = 4;

/// One record's storage, guarded by its stamp.
///
/// Invariant: `stamp` is 0 (never written), `2n+1` (record `n` being written) or `2n+2` (record `n`
/// complete); it only grows, and only the single producer writes it.
#[derive(Debug)]
pub struct Slot {
    stamp: AtomicU64,
    words: [AtomicU64; WORDS],
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            stamp: AtomicU64::new(0),
            words: [(); WORDS].map(|_| AtomicU64::new(0)),
        }
    }
}

impl Slot {
    /// Stores record `seq`. Only one thread may ever write a given slot, with increasing `seq`.
    #[inline(always)]
    pub fn write(&self, seq: u64, words: [u64; WORDS]) {
        self.stamp.store(2 * seq + 1, Ordering::Relaxed);
        // Release fence: pairs with the reader's Acquire fence in `read`, so a reader that observes any of the
        // words below also observes the odd stamp above on its second stamp load.
        fence(Ordering::Release);
        for (cell, word) in self.words.iter().zip(words) {
            cell.store(word, Ordering::Relaxed);
        }
        // Release: pairs with the Acquire stamp load in `read`/`read_latest`; seeing 2*seq+2 means seeing the words.
        self.stamp.store(2 * seq + 2, Ordering::Release);
    }

    /// The words this slot holds, for its writer only (who knows they are not being written).
    #[inline(always)]
    pub fn peek(&self) -> [u64; WORDS] {
        let mut words = [0u64; WORDS];
        for (word, cell) in words.iter_mut().zip(&self.words) {
            *word = cell.load(Ordering::Relaxed);
        }
        words
    }

    /// Word `i` of the record this slot holds, for its writer only.
    #[inline(always)]
    pub fn peek_word(&self, i: usize) -> u64 {
        self.words[i].load(Ordering::Relaxed)
    }

    /// Replaces word `i` of the record this slot holds, in place, with no new stamp. Its writer only, and
    /// only after [`write`](Slot::write) returned. A reader that accepts that record gets the old or the new
    /// value of the word; one that wants an older record still rejects the slot, because the store comes
    /// after the newer record's `Release` fence (see the module docs).
    #[inline(always)]
    pub fn amend(&self, i: usize, word: u64) {
        self.words[i].store(word, Ordering::Relaxed);
    }

    /// Record `seq` if the slot holds it, complete and untouched while we read.
    #[inline]
    pub fn read(&self, seq: u64) -> Option<[u64; WORDS]> {
        match self.read_latest() {
            Some((s, words)) if s == seq => Some(words),
            _ => None,
        }
    }

    /// The record the slot holds now, with its sequence number, if one is complete and stays so while read.
    #[inline]
    pub fn read_latest(&self) -> Option<(u64, [u64; WORDS])> {
        // Acquire: pairs with the final Release store in `write`.
        let before = self.stamp.load(Ordering::Acquire);
        if before == 0 || before % 2 == 1 {
            return None;
        }
        let mut words = [0u64; WORDS];
        for (word, cell) in words.iter_mut().zip(&self.words) {
            *word = cell.load(Ordering::Relaxed);
        }
        // Acquire fence: pairs with the Release fence in `write` (see the module docs).
        fence(Ordering::Acquire);
        let after = self.stamp.load(Ordering::Relaxed);
        (before == after).then(|| (before / 2 - 1, words))
    }
}

// 40 bytes: the stamp and the words, no padding (loom's atomics, in the model, are larger).
const _: () =
    assert!(crate::base::atomics::MODEL || std::mem::size_of::<Slot>() == 8 * (WORDS + 1));

/// The shared part of a ring: the slots and the producer's head.
#[derive(Debug)]
pub struct Ring {
    /// `capacity` slots, a power of two.
    slots: Slots,
    /// Number of records ever pushed, from `start`. Written only by the producer (Release), read by the
    /// consumer (Acquire).
    head: AtomicU64,
    /// The head when this owner got the ring: 0 for a new ring, the last owner's head for a recycled one.
    start: u64,
    /// Whether the ring goes back to the pool when dropped.
    pooled: bool,
}

/// The consumer's position; owned by the consumer, so the producer never touches its cache line.
#[derive(Debug, Default, Clone)]
pub struct Cursor {
    /// Sequence number of the next record to read.
    pub next: u64,
    /// Records overwritten or torn before they could be read.
    pub dropped: u64,
}

impl Ring {
    /// A ring of `capacity` records (rounded up to a power of two, at least 2).
    pub fn new(capacity: usize) -> Ring {
        let capacity = capacity.max(2).next_power_of_two();
        let slots = new_slots(capacity).unwrap_or_else(|| small_slots(capacity));
        Ring {
            slots,
            head: AtomicU64::new(0),
            start: 0,
            pooled: false,
        }
    }

    /// A ring of `capacity` records (a power of two) from the pool of dropped ones, or a new one; it goes
    /// back to the pool when dropped (see the module docs). If no memory can be had for a new one, a 2-slot
    /// ring, counted in [`unmapped`].
    pub fn reused(capacity: usize) -> Ring {
        let capacity = capacity.max(2).next_power_of_two();
        let mut pool = poison::lock(&POOL);
        if let Some(i) = pool.iter().rposition(|(s, _)| s.len() == capacity) {
            let (slots, head) = pool.swap_remove(i);
            drop(pool);
            return Ring {
                slots,
                head: AtomicU64::new(head),
                start: head,
                pooled: true,
            };
        }
        drop(pool);
        match new_slots(capacity) {
            Some(slots) => Ring {
                slots,
                head: AtomicU64::new(0),
                start: 0,
                pooled: !crate::base::atomics::MODEL,
            },
            None => {
                UNMAPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ring::new(2)
            }
        }
    }

    /// A 2-slot ring for a thread whose full ring would take room the program may need (an address-space
    /// limit close by): counted in [`unmapped`] as one whose memory could not be had.
    pub fn without_room() -> Ring {
        UNMAPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ring::new(2)
    }

    /// Whether the pool holds a ring of `capacity` records (a new thread then needs no new memory).
    pub fn pooled(capacity: usize) -> bool {
        let capacity = capacity.max(2).next_power_of_two();
        poison::lock(&POOL).iter().any(|(s, _)| s.len() == capacity)
    }

    /// The head when this owner got the ring (records before it are a previous owner's).
    pub fn start(&self) -> u64 {
        self.start
    }

    /// A consumer's position at the ring's start: the first record of its current owner.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            next: self.start,
            dropped: 0,
        }
    }

    /// Appends a record, overwriting the oldest one when the consumer is a full lap behind. Producer only.
    #[inline(always)]
    pub fn push(&self, words: [u64; WORDS]) {
        // Relaxed: only this (the single producer) thread ever stores `head`.
        let head = self.head.load(Ordering::Relaxed);
        let index = (head as usize) & (self.slots.len() - 1);
        debug_assert!(index < self.slots.len());
        self.slots[index].write(head, words);
        // Release: pairs with the Acquire load in `drain`; the consumer that sees the new head sees the slot.
        self.head.store(head + 1, Ordering::Release);
    }

    /// Number of slots (a power of two).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Number of records its current owner pushed.
    pub fn pushed(&self) -> u64 {
        // Acquire: pairs with the Release store in `push`.
        self.head.load(Ordering::Acquire) - self.start
    }

    /// Hands every record published since `cursor` to `f`, in order, and counts what was lost. Consumer only.
    pub fn drain(&self, cursor: &mut Cursor, mut f: impl FnMut([u64; WORDS])) {
        // Acquire: pairs with the Release store in `push`.
        let head = self.head.load(Ordering::Acquire);
        let capacity = self.slots.len() as u64;
        if head.saturating_sub(cursor.next) > capacity {
            let lost = head - capacity - cursor.next;
            cursor.dropped += lost;
            cursor.next += lost;
        }
        while cursor.next < head {
            let seq = cursor.next;
            match self.slots[(seq % capacity) as usize].read(seq) {
                Some(words) => f(words),
                None => cursor.dropped += 1,
            }
            cursor.next += 1;
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if !self.pooled {
            return;
        }
        // `&mut self`: no producer or consumer is left. The head goes with the slots (see the module docs).
        let slots = std::mem::take(&mut self.slots);
        let head = self.head.load(Ordering::Relaxed);
        let mut pool = poison::lock(&POOL);
        let kept: usize = pool.iter().map(|(s, _)| std::mem::size_of_val(&**s)).sum();
        // A thread waiting for a ring (`local::ring_supply::new_ring`) takes this one, whatever the pool holds.
        if kept + std::mem::size_of_val(&*slots) <= POOL_KEEP_BYTES
            || WAITING.load(std::sync::atomic::Ordering::Relaxed) > 0
        {
            pool.push((slots, head));
        } else {
            // Past what the pool keeps: freed, outside the lock.
            drop(pool);
            drop(slots);
        }
    }
}

/// A ring's slots: pages mapped for them alone ([`sys::map_zeroed`]), so a ring freed gives its address
/// space back to the system at once (a 10 MiB block from the allocator may stay in its heap, and a program
/// that churns threads under `ulimit -v` then sees its address space fill with freed rings); or, for the
/// loom model and the 2 slots of a ring whose memory could not be had, a boxed slice.
#[derive(Debug)]
pub struct Slots {
    ptr: std::ptr::NonNull<Slot>,
    len: usize,
    mapped: bool,
}

// SAFETY: `Slots` owns its slots as a `Box<[Slot]>` would, and `Slot` (atomics) is `Send` and `Sync`.
unsafe impl Send for Slots {}
// SAFETY: as above: shared access only reads and writes the slots' atomics.
unsafe impl Sync for Slots {}

impl Slots {
    fn boxed(slots: Box<[Slot]>) -> Slots {
        let len = slots.len();
        let ptr = Box::into_raw(slots).cast::<Slot>();
        Slots {
            // SAFETY: `Box::into_raw` never returns null.
            ptr: unsafe { std::ptr::NonNull::new_unchecked(ptr) },
            len,
            mapped: false,
        }
    }
}

/// No slots (what a dropped ring leaves behind).
impl Default for Slots {
    fn default() -> Slots {
        Slots {
            ptr: std::ptr::NonNull::dangling(),
            len: 0,
            mapped: false,
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [Slot];
    fn deref(&self) -> &[Slot] {
        // SAFETY: `ptr` points at `len` initialised slots (all-zero pages are valid slots, see `new_slots`)
        // that live as long as `self`; `default`'s dangling pointer goes with a length of 0.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        if self.mapped {
            // SAFETY: a mapping `new_slots` made of exactly this many slots, which nothing uses any more
            // (`&mut self`).
            unsafe { sys::unmap(self.ptr.cast(), self.len * std::mem::size_of::<Slot>()) };
        } else {
            // SAFETY: made by `boxed` from a `Box<[Slot]>` of `len` slots, not freed since.
            drop(unsafe {
                Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    self.ptr.as_ptr(),
                    self.len,
                ))
            });
        }
    }
}

/// `capacity` slots built one by one (loom's atomics are not plain integers; also the fallback when the
/// zeroed pages cannot be had, for the 2 slots of a ring that could not be had).
fn small_slots(capacity: usize) -> Slots {
    Slots::boxed((0..capacity).map(|_| Slot::default()).collect())
}

/// `capacity` zeroed slots in pages of their own, or `None` if the memory cannot be had.
fn new_slots(capacity: usize) -> Option<Slots> {
    if crate::base::atomics::MODEL {
        return Some(small_slots(capacity));
    }
    let bytes = capacity.checked_mul(std::mem::size_of::<Slot>())?;
    let ptr = sys::map_zeroed(bytes)?;
    // All-zero bytes are a valid `Slot` (std atomics of 0; the loom build, whose atomics are not, took the
    // branch above), and a page is aligned for it. Untouched pages stay unmapped in memory, so a ring costs
    // resident memory only as it fills.
    Some(Slots {
        ptr: ptr.cast(),
        len: capacity,
        mapped: true,
    })
}
