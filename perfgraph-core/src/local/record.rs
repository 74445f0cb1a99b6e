//! The ring record: one completed section, as a recording thread pushes it and the background thread
//! drains it. The one owner of the record's word layout.
//!
//! A section measuring its CPU time (the `cpu` option, `PERFGRAPH_CPU=all`) pushes one more record just
//! before its own: [`Record::cpu_figures`], whose `depth` is [`CPU_FIGURES`]. The background thread's
//! [`Decoder`] joins it to the section's record ([`Record::cpu`]), so the ring's slots keep their size and
//! every other section pushes what it always did.

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
    /// The call's CPU time, for a section that measured it; not in [`to_words`](Record::to_words): it
    /// travels in a record of its own ([`Record::cpu_figures`]) that the [`Decoder`] joins to this one.
    pub cpu: Option<CpuFigures>,
}

/// A call's CPU time (the thread's CPU clock at its end minus at its start), in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuFigures {
    /// CPU time of the call, children included.
    pub cpu_ns: u64,
    /// Minus that of the sections inside it that measured theirs.
    pub self_cpu_ns: u64,
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
/// The `depth` of a record that carries the CPU figures of the section record that follows it
/// ([`Record::cpu_figures`]).
pub const CPU_FIGURES: u32 = u32::MAX - 3;

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
            cpu: None,
        }
    }

    /// The words of the record a section measuring its CPU pushes just before its own: `[cpu_ns,
    /// self_cpu_ns, section | CPU_FIGURES << 32, start]`, the section and start naming the call.
    #[inline(always)]
    pub fn cpu_figures(section: SectionId, start: u64, cpu: CpuFigures) -> [u64; WORDS] {
        [
            cpu.cpu_ns,
            cpu.self_cpu_ns,
            section as u64 | (CPU_FIGURES as u64) << 32,
            start,
        ]
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
            cpu: None,
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
            cpu: None,
        }
    }
}

/// Turns a thread's ring words back into records, joining each [`CPU_FIGURES`] record to the section
/// record after it. One per thread, kept across drains: the two records may fall into different ones.
#[derive(Debug, Default)]
pub struct Decoder {
    /// The last CPU figures read, with the section and start of the call they belong to.
    pending: Option<(SectionId, u64, CpuFigures)>,
}

impl Decoder {
    /// Decodes `w` (the next record drained) into `out`. CPU figures wait for their section's record; if
    /// the next record is another call's (the ring lost records in between), they are dropped.
    pub fn push(&mut self, w: [u64; WORDS], out: &mut Vec<Record>) {
        let mut r = Record::from_words(w);
        if r.depth == CPU_FIGURES {
            let cpu = CpuFigures {
                cpu_ns: w[0],
                self_cpu_ns: w[1],
            };
            self.pending = Some((r.section, w[3], cpu));
            return;
        }
        if let Some((section, start, cpu)) = self.pending.take()
            && section == r.section
            && start == r.start
            && !r.is_mark()
        {
            r.cpu = Some(cpu);
        }
        out.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::{CpuFigures, Decoder, Record};

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
            cpu: None,
        };
        assert_eq!(Record::from_words(r.to_words()), r);
    }

    #[test]
    fn cpu_figures_join_their_own_call_only() {
        let call = Record::timed(100, 200, 7, 1);
        let cpu = CpuFigures {
            cpu_ns: 90,
            self_cpu_ns: 40,
        };
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.push(Record::cpu_figures(7, 100, cpu), &mut out);
        assert!(out.is_empty(), "figures wait for their call's record");
        d.push(call.to_words(), &mut out);
        assert_eq!(
            out,
            [Record {
                cpu: Some(cpu),
                ..call
            }]
        );
        // Another call's record (the figures' own was lost): no figures.
        d.push(Record::cpu_figures(7, 50, cpu), &mut out);
        d.push(call.to_words(), &mut out);
        d.push(call.to_words(), &mut out);
        assert_eq!(&out[1..], [call, call]);
    }
}
