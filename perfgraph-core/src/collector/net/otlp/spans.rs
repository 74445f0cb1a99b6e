//! Calls to spans (`PERFGRAPH_OTLP_SPANS`), from the records the background thread drains.
//!
//! A thread's records arrive as its calls end: a call's children before the call. So a call is chosen
//! when its record comes (`all`: every call; `slow`: one that ran at least the threshold, or that live
//! print showed, running past its time limit), and its callers on the thread
//! are then chosen too, whatever their time, when theirs come: each exported span's parent is exported,
//! and a tree of spans is whole. A caller's span id (and the trace id of the call at depth 0) is made
//! when its first chosen child is, and kept by depth until the caller's record comes. A record lost to
//! ring overflow leaves its slot behind: a call takes the slot at its depth only if it started before the
//! child that made it, and the slots deeper than a record's are dropped.
//!
//! The spans are encoded into pieces of at most [`PIECE`] bytes, each a buffer of the output memory
//! budget ([`budget`](crate::base::budget)) reserved whole when it begins: a full piece waits in
//! [`Spans::ready`] for the exporter to make it a request, so no buffer grows with the number of spans a
//! drain brings. A piece the budget (or the system) refuses is spans lost, counted.

use std::collections::HashMap;

use crate::base::budget::OutBuf;
use crate::base::clock::{Scale, Ticks};
use crate::base::registry;
use crate::export::otlp::spans::{self, Span};
use crate::local::record::Record;
use crate::local::thread::ThreadState;

/// Bytes of encoded spans in a piece, at most (about 10,000 spans): one request's spans.
pub(crate) const PIECE: usize = 1 << 20;

/// A caller chosen by a child, waiting for its own record.
#[derive(Clone, Copy)]
struct Open {
    span_id: [u8; 8],
    trace_id: [u8; 16],
    /// The earliest start (ticks) of a chosen descendant: the caller started before it.
    first_child: u64,
}

/// One thread's slots, by depth.
struct Thread {
    name: String,
    open: Vec<Option<Open>>,
}

/// Which calls are spans.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Choice {
    /// Every call (`all`).
    pub(crate) all: bool,
    /// The shortest call that is a span, ns (`slow`).
    pub(crate) slow_ns: u64,
    /// Live print's time limit, ns, when live print is on: a call that ran past it was shown.
    pub(crate) shown_ns: Option<u64>,
}

/// The spans builder, owned by the OTLP exporter.
pub(crate) struct Spans {
    choice: Choice,
    threads: HashMap<u32, Thread>,
    /// Ids are a counter through a bijective mix, offset by a random seed per process: unique within it.
    seed: u64,
    next: u64,
    /// The piece being filled: encoded spans not yet in a batch, and how many.
    piece: OutBuf,
    pub(crate) buffered: u64,
    /// Full pieces and their spans' counts, for the exporter to take ([`Spans::take_ready`]).
    ready: Vec<(OutBuf, u64)>,
    /// One span's encoding, before it goes into the piece.
    scratch: Vec<u8>,
    /// Spans lost to a piece the output memory budget refused.
    pub(crate) lost: u64,
}

/// splitmix64's finaliser: a bijection of u64 that scatters a counter's bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Spans {
    pub(crate) fn new(choice: Choice) -> Spans {
        Spans {
            choice,
            threads: HashMap::new(),
            seed: getrandom::u64().unwrap_or(0x5eed),
            next: 0,
            piece: OutBuf::new(),
            buffered: 0,
            ready: Vec::new(),
            scratch: Vec::new(),
            lost: 0,
        }
    }

    fn id(&mut self) -> u64 {
        self.next += 1;
        // Never 0 (an all-zero id is invalid in OTLP).
        mix(self.seed.wrapping_add(self.next)).max(1)
    }

    fn trace_id(&mut self) -> [u8; 16] {
        let mut t = [0u8; 16];
        t[..8].copy_from_slice(&mix(!self.seed).to_be_bytes());
        t[8..].copy_from_slice(&self.id().to_be_bytes());
        t
    }

    /// The calls `thread` ended since the last drain (marks already taken out); `start_unix_ns` and
    /// `scale` place them in wall-clock time.
    pub(crate) fn on_records(
        &mut self,
        thread: &ThreadState,
        records: &[Record],
        scale: Scale,
        start_unix_ns: u64,
    ) {
        let mut t = self
            .threads
            .remove(&thread.index)
            .unwrap_or_else(|| Thread {
                name: thread.name.clone(),
                open: Vec::new(),
            });
        for r in records.iter().filter(|r| !r.is_mark()) {
            self.on_call(&mut t, r, scale, start_unix_ns);
        }
        self.threads.insert(thread.index, t);
    }

    fn on_call(&mut self, t: &mut Thread, r: &Record, scale: Scale, start_unix_ns: u64) {
        let d = r.depth as usize;
        t.open.truncate(d + 1);
        let mine = t
            .open
            .get_mut(d)
            .and_then(Option::take)
            .filter(|o| o.first_child >= r.start);
        let ns = scale.delta_ns(Ticks(r.end.saturating_sub(r.start)));
        let info = registry::info(r.section);
        let c = self.choice;
        let shown = c.shown_ns.is_some_and(|limit| ns >= limit);
        if !(c.all || mine.is_some() || ns >= c.slow_ns || shown) {
            return;
        }
        // Its callers' slots, made where missing, all in the trace of the call at depth 0.
        if t.open.len() < d {
            t.open.resize(d, None);
        }
        let trace_id = match (mine, t.open.first().copied().flatten()) {
            (Some(o), _) => o.trace_id,
            (None, Some(root)) if d > 0 => root.trace_id,
            _ => self.trace_id(),
        };
        for k in 0..d {
            match &mut t.open[k] {
                Some(o) => o.first_child = o.first_child.min(r.start),
                None => {
                    t.open[k] = Some(Open {
                        span_id: self.id().to_be_bytes(),
                        trace_id,
                        first_child: r.start,
                    })
                }
            }
        }
        let span_id = match mine {
            Some(o) => o.span_id,
            None => self.id().to_be_bytes(),
        };
        let parent = d.checked_sub(1).and_then(|p| t.open[p]).map(|o| o.span_id);
        self.scratch.clear();
        spans::span(
            &mut self.scratch,
            &Span {
                trace_id,
                span_id,
                parent,
                name: info.map_or("?", |i| i.name),
                start_unix_ns: start_unix_ns + scale.to_ns(Ticks(r.start)),
                end_unix_ns: start_unix_ns + scale.to_ns(Ticks(r.end)),
                thread: &t.name,
            },
        );
        self.push_scratch();
    }

    /// Puts the span in `scratch` into the piece: a full piece is sealed first, and a new one reserved
    /// whole; a refusal loses the span, counted.
    fn push_scratch(&mut self) {
        if !self.piece.is_empty() && self.piece.len() + self.scratch.len() > PIECE {
            self.seal();
        }
        if self.piece.capacity() == 0 {
            match OutBuf::with_capacity(PIECE.max(self.scratch.len())) {
                Ok(piece) => self.piece = piece,
                Err(_) => {
                    self.lost += 1;
                    return;
                }
            }
        }
        if self.piece.extend(&self.scratch).is_err() {
            self.lost += 1;
            return;
        }
        self.buffered += 1;
    }

    /// The piece being filled, if it holds any span, goes to the ready ones.
    pub(crate) fn seal(&mut self) {
        if self.buffered == 0 {
            return;
        }
        let piece = std::mem::take(&mut self.piece);
        self.ready.push((piece, std::mem::take(&mut self.buffered)));
    }

    /// Whether a full piece waits.
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// A thread that exited and was drained for the last time: its slots go (memory follows the live
    /// threads).
    pub(crate) fn forget(&mut self, index: u32) {
        self.threads.remove(&index);
    }

    /// Takes the full pieces (for batches): each one's bytes and count of spans.
    pub(crate) fn take_ready(&mut self) -> Vec<(OutBuf, u64)> {
        std::mem::take(&mut self.ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::registry::{Name, Section, SectionId, SectionMeta};

    const fn site(name: &'static str, live: Option<&'static str>) -> Section {
        Section::new(SectionMeta {
            name: Name::Given(name),
            level: 1,
            live,
            dots: false,
            cpu: false,
            file: "spans.rs",
            line: 1,
            module_path: "spans",
            args: &[],
        })
    }
    static OUTER: Section = site("spans_outer", None);
    static MIDDLE: Section = site("spans_middle", None);
    static LEAF: Section = site("spans_leaf", None);
    static SHOWN: Section = site("spans_shown", Some("Working"));

    /// A call of `section` at `depth` from `start` to `end` ns (1 tick = 1 ns).
    fn call(section: SectionId, depth: u32, start: u64, end: u64) -> Record {
        Record::timed(start, end, section, depth)
    }

    /// A span as the tests read it back: name, span id, parent id, trace id.
    type Sent = (String, u64, Option<u64>, u128);

    /// The spans `records` give, in the order sent.
    fn spans(choice: Choice, records: &[Record]) -> (Vec<Sent>, Spans) {
        let mut s = Spans::new(choice);
        let thread = ThreadState::detached();
        s.on_records(&thread, records, Scale::fixed(Ticks(0), 1.0), 0);
        let buffered = s.buffered;
        s.seal();
        let out = s
            .ready
            .iter()
            .flat_map(|(p, _)| decode(p.as_slice()))
            .collect();
        s.buffered = buffered;
        (out, s)
    }

    /// The names of the spans `got`, in the order sent.
    fn names(got: &[Sent]) -> Vec<&str> {
        got.iter().map(|g| g.0.as_str()).collect()
    }

    /// The fields we check of each encoded span (`ScopeSpans.spans` entries), read back by hand.
    fn decode(mut b: &[u8]) -> Vec<Sent> {
        fn varint(b: &mut &[u8]) -> u64 {
            let mut v = 0;
            for shift in (0..).step_by(7) {
                let byte = b[0];
                *b = &b[1..];
                v |= ((byte & 0x7f) as u64) << shift;
                if byte < 0x80 {
                    break;
                }
            }
            v
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            assert_eq!(varint(&mut b), 2 << 3 | 2);
            let len = varint(&mut b) as usize;
            let (mut span, rest) = b.split_at(len);
            b = rest;
            let (mut name, mut id, mut parent, mut trace) = (String::new(), 0, None, 0);
            while !span.is_empty() {
                let key = varint(&mut span);
                let (field, wire) = (key >> 3, key & 7);
                let value: &[u8] = match wire {
                    0 => {
                        varint(&mut span);
                        &[]
                    }
                    1 => {
                        let (v, r) = span.split_at(8);
                        span = r;
                        v
                    }
                    2 => {
                        let n = varint(&mut span) as usize;
                        let (v, r) = span.split_at(n);
                        span = r;
                        v
                    }
                    w => panic!("wire type {w}"),
                };
                match field {
                    1 => trace = u128::from_be_bytes(value.try_into().unwrap()),
                    2 => id = u64::from_be_bytes(value.try_into().unwrap()),
                    4 => parent = Some(u64::from_be_bytes(value.try_into().unwrap())),
                    5 => name = String::from_utf8(value.to_vec()).unwrap(),
                    _ => {}
                }
            }
            out.push((name, id, parent, trace));
        }
        out
    }

    const SLOW: Choice = Choice {
        all: false,
        slow_ns: 100,
        shown_ns: None,
    };

    #[test]
    fn a_slow_call_brings_its_callers_and_nothing_else() {
        let (o, m, l) = (OUTER.id(), MIDDLE.id(), LEAF.id());
        // outer [0, 1000] > middle [10, 500] > leaf [20, 30] (fast), leaf [40, 400] (slow); then a fast
        // outer [2000, 2010] with nothing slow in it.
        let records = [
            call(l, 2, 20, 30),
            call(l, 2, 40, 400),
            call(m, 1, 10, 500),
            call(o, 0, 0, 1000),
            call(o, 0, 2000, 2010),
        ];
        let (got, s) = spans(SLOW, &records);
        assert_eq!(names(&got), ["spans_leaf", "spans_middle", "spans_outer"]);
        let (leaf, middle, outer) = (&got[0], &got[1], &got[2]);
        assert_eq!(leaf.2, Some(middle.1));
        assert_eq!(middle.2, Some(outer.1));
        assert_eq!(outer.2, None);
        assert!(leaf.3 == middle.3 && middle.3 == outer.3 && outer.3 != 0);
        assert_eq!(s.buffered, 3);
    }

    #[test]
    fn a_callers_record_lost_to_overflow_does_not_adopt_a_later_call() {
        let (o, m, l) = (OUTER.id(), MIDDLE.id(), LEAF.id());
        // A slow leaf whose middle's record was lost: the next middle (which started after the leaf) is
        // not its parent, and is not sent for it.
        let records = [
            call(l, 2, 20, 400),
            call(m, 1, 1000, 1010),
            call(o, 0, 0, 2000),
        ];
        let (got, _) = spans(SLOW, &records);
        assert_eq!(names(&got), ["spans_leaf", "spans_outer"]);
    }

    #[test]
    fn all_sends_every_call_and_shown_calls_count_as_slow() {
        let (o, l, shown) = (OUTER.id(), LEAF.id(), SHOWN.id());
        let records = [call(l, 1, 1, 2), call(o, 0, 0, 3), call(o, 0, 4, 5)];
        let (got, _) = spans(Choice { all: true, ..SLOW }, &records);
        assert_eq!(got.len(), 3);
        // Two calls at depth 0: two traces.
        assert_ne!(got[1].3, got[2].3);
        // A call past live print's time limit was shown: it goes, even under the threshold.
        let choice = Choice {
            all: false,
            slow_ns: 1_000_000,
            shown_ns: Some(50),
        };
        let (got, _) = spans(choice, &[call(shown, 0, 0, 60), call(o, 0, 100, 120)]);
        assert_eq!(names(&got), ["spans_shown"]);
    }
}
