//! `counter!`: named values a program sets, summed per thread where they are set. Each `counter!` call
//! site is a `static` [`CounterSite`] with an id given at its first use (lock-free, so a forked child never
//! finds a lock held); sites with the same name are one counter in the reports.
//!
//! A thread keeps, per site it set, the samples, sum, minimum, maximum, last value and when it was set
//! ([`Stats`]), in a [`CounterTable`] only it writes: one slot per site, each a small seqlock
//! (`local::counter_slot`), so a report read while the thread runs never sees half a sample. The table grows
//! by segments that never move, allocated at the first sample of a site in them. An exited thread's
//! figures are folded into the retired summary (`local::retired`), so memory follows the live threads and
//! the sites, not the run's length.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::counter_slot::{Slot, WORDS};
use crate::base::site_table::{self, SiteTable};

/// Most `counter!` call sites a process names; a site past them shares the counter `(too many counters)`.
pub const MAX_COUNTER_SITES: usize = SEGMENTS * SEGMENT;

/// The sites by id.
static SITES: SiteTable<CounterSite, MAX_COUNTER_SITES> = SiteTable::new();

/// The site every `counter!` past [`MAX_COUNTER_SITES`] shares (its id is the last one).
static TOO_MANY: CounterSite = CounterSite::new("(too many counters)");

/// One `counter!` call site: a `static` the macro emits.
#[doc(hidden)]
#[derive(Debug)]
pub struct CounterSite {
    /// Dense id from 1, 0 until registered.
    id: AtomicU32,
    /// The counter's name.
    pub name: &'static str,
}

impl CounterSite {
    /// The site of the counter `name`.
    pub const fn new(name: &'static str) -> CounterSite {
        CounterSite {
            id: AtomicU32::new(0),
            name,
        }
    }

    /// Its id, registering it at its first use.
    #[inline]
    pub fn id(&'static self) -> u32 {
        site_table::id_or_register(&self.id, || self.register())
    }

    #[cold]
    fn register(&'static self) -> u32 {
        let last = MAX_COUNTER_SITES as u32;
        // The last id is the one every site past the others shares.
        let (n, site) = match SITES.next_id() {
            n if n < last => (n, self),
            _ => (last, &TOO_MANY),
        };
        SITES.publish(n, site);
        site_table::settle(&self.id, n)
    }
}

/// The counter site with id `id`.
pub fn site(id: u32) -> Option<&'static CounterSite> {
    SITES.get(id)
}

/// One counter's samples on one thread (or many, combined).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// How many values were set.
    pub samples: u64,
    /// Their sum.
    pub sum: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// The last one set.
    pub last: f64,
    /// Clock ticks when the last one was set.
    pub last_ticks: u64,
}

impl Stats {
    /// One more sample, `value` at `ticks`.
    #[inline]
    pub fn add(&mut self, value: f64, ticks: u64) {
        if self.samples == 0 {
            (self.min, self.max) = (value, value);
        } else {
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
        self.samples += 1;
        self.sum += value;
        self.last = value;
        self.last_ticks = ticks;
    }

    /// Adds `other`'s samples; the last value is the later one's.
    pub fn combine(&mut self, other: &Stats) {
        if other.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *other;
            return;
        }
        self.samples = self.samples.saturating_add(other.samples);
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        if other.last_ticks >= self.last_ticks {
            (self.last, self.last_ticks) = (other.last, other.last_ticks);
        }
    }

    fn to_words(self) -> [u64; WORDS] {
        [
            self.samples,
            self.sum.to_bits(),
            self.min.to_bits(),
            self.max.to_bits(),
            self.last.to_bits(),
            self.last_ticks,
        ]
    }

    fn from_words(w: [u64; WORDS]) -> Stats {
        Stats {
            samples: w[0],
            sum: f64::from_bits(w[1]),
            min: f64::from_bits(w[2]),
            max: f64::from_bits(w[3]),
            last: f64::from_bits(w[4]),
            last_ticks: w[5],
        }
    }
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            samples: 0,
            sum: 0.0,
            min: 0.0,
            max: 0.0,
            last: 0.0,
            last_ticks: 0,
        }
    }
}

/// Slots per segment.
const SEGMENT: usize = 64;
/// Segments per table.
const SEGMENTS: usize = 64;

type Segment = [Slot; SEGMENT];

/// A thread's counters, by site id: its owner writes, any thread reads.
#[derive(Debug)]
pub struct CounterTable {
    segments: [AtomicPtr<Segment>; SEGMENTS],
}

impl Default for CounterTable {
    fn default() -> CounterTable {
        CounterTable {
            segments: [const { AtomicPtr::new(std::ptr::null_mut()) }; SEGMENTS],
        }
    }
}

impl CounterTable {
    /// Adds `value`, set at `ticks`, to site `id`'s stats. Owner only.
    ///
    /// # Safety
    /// Only the thread that owns the table may call this (it is the slots' single writer).
    #[inline]
    pub unsafe fn record(&self, id: u32, value: f64, ticks: u64) {
        let i = (id as usize).wrapping_sub(1) % MAX_COUNTER_SITES;
        self.slot(i / SEGMENT, i % SEGMENT).update(|words| {
            let mut stats = Stats::from_words(words);
            stats.add(value, ticks);
            stats.to_words()
        });
    }

    /// Slot `k` of segment `s`, allocating the segment at its first use (owner only).
    #[inline]
    fn slot(&self, s: usize, k: usize) -> &Slot {
        let mut ptr = self.segments[s].load(Ordering::Acquire);
        if ptr.is_null() {
            ptr = self.grow(s);
        }
        // SAFETY: a non-null segment pointer comes from `grow`'s `Box::into_raw` and lives until the table
        // drops.
        unsafe { &(*ptr)[k] }
    }

    #[cold]
    fn grow(&self, s: usize) -> *mut Segment {
        let segment: Box<Segment> =
            crate::base::heap::untracked(|| Box::new(std::array::from_fn(|_| Slot::default())));
        let ptr = Box::into_raw(segment);
        // Release: pairs with the Acquire loads in `slot` and `read`, so a reader of the pointer sees the
        // zeroed slots.
        self.segments[s].store(ptr, Ordering::Release);
        ptr
    }

    /// Every site this thread set, with its stats. Any thread.
    pub fn read(&self) -> Vec<(u32, Stats)> {
        let mut out = Vec::new();
        for (s, segment) in self.segments.iter().enumerate() {
            // Acquire: pairs with the Release store in `grow`.
            let ptr = segment.load(Ordering::Acquire);
            if ptr.is_null() {
                continue;
            }
            // SAFETY: as in `slot`: the segment lives as long as the table, which `self` borrows.
            let segment = unsafe { &*ptr };
            for (k, slot) in segment.iter().enumerate() {
                let stats = Stats::from_words(slot.read());
                if stats.samples > 0 {
                    out.push(((s * SEGMENT + k + 1) as u32, stats));
                }
            }
        }
        out
    }
}

impl Drop for CounterTable {
    fn drop(&mut self) {
        for segment in &self.segments {
            let ptr = segment.load(Ordering::Relaxed);
            if !ptr.is_null() {
                // SAFETY: made by `Box::into_raw` in `grow`, freed once, here, with no reader left (`&mut self`).
                drop(unsafe { Box::from_raw(ptr) });
            }
        }
    }
}

/// The value a `counter!` takes: any primitive number.
#[diagnostic::on_unimplemented(
    message = "`counter!` takes a number, not `{Self}`",
    label = "not an integer or a float",
    note = "a counter's value is any integer or float: `counter!(\"residual\", r)`"
)]
pub trait CounterValue {
    /// The value as a float (integers past 2^53 lose their last digits).
    fn to_f64(self) -> f64;
}

macro_rules! counter_value {
    ($($t:ty),*) => {
        $(impl CounterValue for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        })*
    };
}

counter_value!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64
);

#[cfg(test)]
mod tests {
    use super::{CounterTable, Stats};

    #[test]
    fn stats_sum_their_samples_and_keep_the_last_by_time() {
        let mut a = Stats::default();
        a.add(3.0, 10);
        a.add(-1.0, 20);
        let mut b = Stats::default();
        b.add(7.0, 15);
        let mut both = a;
        both.combine(&b);
        assert_eq!(
            (both.samples, both.sum, both.min, both.max, both.last),
            (3, 9.0, -1.0, 7.0, -1.0)
        );
        b.combine(&a);
        assert_eq!(b.last, -1.0);
        let mut empty = Stats::default();
        empty.combine(&a);
        assert_eq!(empty, a);
    }

    #[test]
    fn a_table_keeps_each_site_apart_across_segments() {
        let t = CounterTable::default();
        // SAFETY: this thread is the table's only writer.
        unsafe {
            t.record(1, 2.0, 1);
            t.record(1, 4.0, 2);
            t.record(200, 0.5, 3);
        }
        let read = t.read();
        assert_eq!(read.len(), 2);
        assert_eq!((read[0].0, read[0].1.samples, read[0].1.sum), (1, 2, 6.0));
        assert_eq!((read[1].0, read[1].1.last), (200, 0.5));
    }
}
