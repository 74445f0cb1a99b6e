//! The ring record: one completed section, as a recording thread pushes it and the background thread
//! drains it. The one owner of the record's word layout.

use crate::base::registry::SectionId;
use crate::local::ring::WORDS;

/// One completed section, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Clock ticks at start.
    pub start: u64,
    /// Clock ticks at end.
    pub end: u64,
    /// The section.
    pub section: SectionId,
    /// Nesting depth, 0 outermost.
    pub depth: u32,
    /// Resident memory at start, KiB.
    pub mem_start_kb: u32,
    /// Resident memory at end, KiB.
    pub mem_end_kb: u32,
    /// The section's exact heap growth (the counting allocator installed) passed live print's memory
    /// limit: live print's memory rule then follows this instead of the resident-memory change.
    pub heap_alert: bool,
}

/// The bit of the third word (above the section id, which is below 2^18) that holds
/// [`Record::heap_alert`].
const HEAP_ALERT: u64 = 1 << 31;

/// The `depth` of a record that is a timed future's whole life (first poll to completion), not a call:
/// `start`..`end`, and its id in the memory words.
pub const LIFE: u32 = u32::MAX;
/// As [`LIFE`], for a future dropped before it completed.
pub const LIFE_CANCELLED: u32 = u32::MAX - 1;
/// The `depth` of a record that is an instant event (a `tracing` event inside a recorded span) at
/// `start` (= `end`), its message's number ([`crate::local::marks`]) in the memory words.
pub const INSTANT: u32 = u32::MAX - 2;

impl Record {
    /// Whether this is a mark (a future's life, an instant event) rather than a section call.
    pub fn is_mark(&self) -> bool {
        self.depth >= INSTANT
    }

    /// The 64-bit id a mark carries in the memory words.
    pub fn mark_id(&self) -> u64 {
        self.mem_start_kb as u64 | (self.mem_end_kb as u64) << 32
    }

    /// A mark: `depth` one of [`LIFE`], [`LIFE_CANCELLED`], [`INSTANT`], carrying `id`.
    pub fn mark(section: SectionId, start: u64, end: u64, depth: u32, id: u64) -> Record {
        Record {
            start,
            end,
            section,
            depth,
            mem_start_kb: id as u32,
            mem_end_kb: (id >> 32) as u32,
            heap_alert: false,
        }
    }

    /// The ring's words: `[start, end, section | heap_alert << 31 | depth << 32, mem_start_kb | mem_end_kb <<
    /// 32]`.
    #[inline(always)]
    pub fn to_words(self) -> [u64; WORDS] {
        [
            self.start,
            self.end,
            self.section as u64
                | if self.heap_alert { HEAP_ALERT } else { 0 }
                | (self.depth as u64) << 32,
            self.mem_start_kb as u64 | (self.mem_end_kb as u64) << 32,
        ]
    }

    /// Decodes [`to_words`](Record::to_words).
    pub fn from_words(w: [u64; WORDS]) -> Record {
        Record {
            start: w[0],
            end: w[1],
            section: w[2] as u32 & !(HEAP_ALERT as u32),
            heap_alert: w[2] & HEAP_ALERT != 0,
            depth: (w[2] >> 32) as u32,
            mem_start_kb: w[3] as u32,
            mem_end_kb: (w[3] >> 32) as u32,
        }
    }

    /// A record without memory figures, for the renderers' tests.
    #[cfg(test)]
    pub(crate) fn timed(start: u64, end: u64, section: SectionId, depth: u32) -> Record {
        Record {
            start,
            end,
            section,
            depth,
            mem_start_kb: 0,
            mem_end_kb: 0,
            heap_alert: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Record;

    #[test]
    fn words_round_trip() {
        let r = Record {
            start: u64::MAX - 1,
            end: u64::MAX,
            section: 262_143,
            depth: u32::MAX,
            mem_start_kb: 7,
            mem_end_kb: u32::MAX,
            heap_alert: true,
        };
        assert_eq!(Record::from_words(r.to_words()), r);
    }
}
