//! The ring record: one completed section, as a recording thread pushes it and the background thread
//! drains it. The one owner of the record's word layout.
//!
//! A section measuring its CPU time (the `cpu` option, `PERFGRAPH_CPU=all`) pushes its [`CpuFigures`] just
//! before its own record, two figures a record ([`Record::cpu_figures`]): the first pair always (its
//! `depth` is [`CPU_FIGURES`]), each further pair when not all zero (`CPU_FIGURES - k` for pair `k`). The
//! background thread's [`Decoder`] joins them to the section's record ([`Record::cpu`]), so the ring's
//! slots keep their size and every other section pushes what it always did. A call or an event with args
//! pushes them the same way, two a record, before its own ([`ARGS`], `local::args`).

use crate::base::registry::SectionId;
use crate::data::figures::CpuFigures;
use crate::local::args::{self, RawArgs};
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
    /// The call's (or event's) args, for a call site that records some while an output wants them; not in
    /// [`to_words`](Record::to_words) either: they travel in records of their own (`local::args`).
    pub args: Option<RawArgs>,
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
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub const INSTANT: u32 = u32::MAX - 2;
/// The `depth` of a record that is an `event!`: an instant at `start` (= `end`) whose section is the event
/// site's id (`local::marks::EventSite`), its args before it.
pub const EVENT: u32 = u32::MAX - 3;
/// The `depth` of a record that is a `counter!` sample at `start` (= `end`): its section is the counter's id
/// (`local::counters`), its memory words the value's `f64` bits.
pub const COUNTER: u32 = u32::MAX - 4;
/// The `depth` of a record that is a lock's hold (`perfgraph_core::sync`): `start`..`end`, its section the
/// lock name's id (`local::locks`).
pub const HOLD: u32 = u32::MAX - 5;
/// The `depth` of a record that is a wait for a lock: from the request (`start`) to the acquisition
/// (`end`), its section the lock name's id, its memory words the holder's thread index + 1 when the wait
/// began (low half) and the releasing thread's + 1 (high half), 0 when unknown.
pub const WAIT: u32 = u32::MAX - 6;
/// The `depth` of a record that is the hand-over after a wait: from the release (`start`, on the thread in
/// the memory words, index + 1) to the waiter's acquisition (`end`), its section the lock name's id.
pub const LOCK_FLOW: u32 = u32::MAX - 7;
/// The lowest `depth` of a mark: every record at or above it is not a call.
const MARKS: u32 = LOCK_FLOW;
/// The `depth` of a record that carries the first two CPU figures of the section record that follows it
/// ([`Record::cpu_figures`]); `CPU_FIGURES - k` carries pair `k`.
pub const CPU_FIGURES: u32 = u32::MAX - 8;
/// Records of CPU figures a call pushes at most: two figures each.
pub const CPU_PAIRS: usize = CpuFigures::COUNT.div_ceil(2);
// The args' records (`ARGS - k` carries pair `k`): their depths are `local::args`'s, as their words are.
use crate::local::args::ARGS;

const _: () = assert!(
    CPU_FIGURES - CPU_PAIRS as u32 >= ARGS,
    "CPU figures and args overlap"
);

impl Record {
    /// Whether this is a mark (a future's life, an instant event) rather than a section call.
    pub fn is_mark(&self) -> bool {
        self.depth >= MARKS
    }

    /// The 64-bit id a mark carries in the memory words.
    pub fn mark_id(&self) -> u64 {
        self.mem_start_kb as u64 | (self.mem_end_kb as u64) << 32
    }

    /// A mark: `depth` one of [`LIFE`], [`LIFE_CANCELLED`], [`INSTANT`], [`EVENT`], [`COUNTER`], carrying
    /// `id`.
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
            args: None,
        }
    }

    /// Hands `push` the words of the records a section measuring its CPU pushes just before its own: pair
    /// `k` of its figures as `[figure 2k, figure 2k + 1, section | (CPU_FIGURES - k) << 32, start]`, the
    /// section and start naming the call; pair 0 always, the others when not both zero.
    #[inline(always)]
    pub fn cpu_figures(
        section: SectionId,
        start: u64,
        cpu: &CpuFigures,
        mut push: impl FnMut([u64; WORDS]),
    ) {
        let v = cpu.values();
        for k in 0..CPU_PAIRS {
            let (a, b) = (v[2 * k], v.get(2 * k + 1).copied().unwrap_or(0));
            if k == 0 || a != 0 || b != 0 {
                let depth = CPU_FIGURES - k as u32;
                push([a, b, section as u64 | (depth as u64) << 32, start]);
            }
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
            cpu: None,
            args: None,
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
            args: None,
        }
    }
}

/// Turns a thread's ring words back into records, joining the [`CPU_FIGURES`] and [`ARGS`] records to the
/// section (or event) record after them. One per thread, kept across drains: the records may fall into
/// different ones.
#[derive(Debug, Default)]
pub struct Decoder {
    /// The CPU figures read so far, with the section and start of the call they belong to.
    pending: Option<(SectionId, u64, [u64; CpuFigures::COUNT])>,
    /// The args read so far, with the site they belong to.
    pending_args: Option<(u32, RawArgs)>,
}

impl Decoder {
    /// Decodes `w` (the next record drained) into `out`. CPU figures and args wait for their call's (or
    /// event's) record; if the next record is another's (the ring lost records in between), they are
    /// dropped, and a text arg's message with them.
    pub fn push(&mut self, w: [u64; WORDS], out: &mut Vec<Record>) {
        let mut r = Record::from_words(w);
        if let Some(k) = args::pair_of(r.depth) {
            let site = r.section;
            if k == 0 {
                self.drop_pending_args();
                self.pending_args = Some((site, RawArgs::default()));
            }
            if let Some((s, raw)) = self.pending_args.as_mut()
                && *s == site
            {
                raw.add(k, w);
            }
            return;
        }
        let pair = CPU_FIGURES.wrapping_sub(r.depth) as usize;
        if r.depth <= CPU_FIGURES && pair < CPU_PAIRS {
            let (section, start) = (r.section, w[3]);
            if pair == 0 {
                self.pending = Some((section, start, [0; CpuFigures::COUNT]));
            }
            if let Some((s, t, figures)) = self.pending.as_mut()
                && (*s, *t) == (section, start)
            {
                figures[2 * pair] = w[0];
                if let Some(f) = figures.get_mut(2 * pair + 1) {
                    *f = w[1];
                }
            }
            return;
        }
        if let Some((section, start, figures)) = self.pending.take()
            && section == r.section
            && start == r.start
            && !r.is_mark()
        {
            r.cpu = Some(CpuFigures::from_values(figures));
        }
        if let Some((site, raw)) = self.pending_args.take() {
            if site == r.section
                && (!r.is_mark() || matches!(r.depth, EVENT | LIFE | LIFE_CANCELLED))
            {
                r.args = Some(raw);
            } else {
                let _ = raw.take();
            }
        }
        out.push(r);
    }

    /// Lets go of args whose call's record never came, taking their text (so none is left in `marks`).
    fn drop_pending_args(&mut self) {
        if let Some((_, raw)) = self.pending_args.take() {
            let _ = raw.take();
        }
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
            args: None,
        };
        assert_eq!(Record::from_words(r.to_words()), r);
    }

    #[test]
    fn cpu_figures_join_their_own_call_only() {
        let call = Record::timed(100, 200, 7, 1);
        let cpu = CpuFigures::from_values(std::array::from_fn(|i| 90 - i as u64));
        let mut d = Decoder::default();
        let mut out = Vec::new();
        Record::cpu_figures(7, 100, &cpu, |w| d.push(w, &mut out));
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
        Record::cpu_figures(7, 50, &cpu, |w| d.push(w, &mut out));
        d.push(call.to_words(), &mut out);
        d.push(call.to_words(), &mut out);
        assert_eq!(&out[1..], [call, call]);
    }

    #[test]
    fn pairs_of_zeros_after_the_first_are_not_pushed() {
        let mut words = Vec::new();
        Record::cpu_figures(7, 100, &CpuFigures::default(), |w| words.push(w));
        assert_eq!(words.len(), 1, "the first pair only");
        let all = CpuFigures::from_values([3; CpuFigures::COUNT]);
        words.clear();
        Record::cpu_figures(7, 100, &all, |w| words.push(w));
        assert_eq!(words.len(), super::CPU_PAIRS);
    }
}
