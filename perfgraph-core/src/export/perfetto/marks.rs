//! Events that are not section calls: a future's life (a slice on a track of its own), `tracing` and
//! `event!` instants on their thread's track, the lines live print printed, and the trace's last event,
//! `perfgraph trace end`, stating what is missing.

use super::fields::*;
use super::sequence::{MARKER_SEQUENCE, META_SEQUENCE, Sequence, absolute_event, open_sequence};
use super::tracks::{future_uuid, marker_uuid, process_uuid, thread_uuid};
use super::wire::{message, packet, string, uint};
use super::{Perfetto, debug_args};
use crate::export::trace::{Mark, MarkKind, Summary};

impl Perfetto {
    /// A future's life (a slice on a track of its own, described here) or an instant event on its
    /// thread's track (named before, [`Perfetto::thread`]); `name` is its section's name.
    pub(crate) fn mark(&mut self, out: &mut Vec<u8>, mark: &Mark, name: &str) {
        let pid = self.pid;
        let seq = self.absolute(out, mark.start_ns);
        match &mark.kind {
            MarkKind::Life { id, cancelled } => {
                let track = future_uuid(pid, *id);
                packet(out, |p| {
                    uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                    message(p, TRACK_DESCRIPTOR, |d| {
                        uint(d, TD_UUID, track);
                        uint(d, TD_PARENT_UUID, process_uuid(pid));
                        string(d, TD_NAME, name);
                    });
                });
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, SLICE_BEGIN);
                    uint(e, EV_TRACK_UUID, track);
                    string(e, EV_NAME, name);
                    message(e, EV_DEBUG, |a| {
                        string(a, ANN_NAME, "id");
                        uint(a, ANN_UINT, *id);
                    });
                    message(e, EV_DEBUG, |a| {
                        string(a, ANN_NAME, "cancelled");
                        uint(a, ANN_BOOL, *cancelled as u64);
                    });
                    debug_args(e, mark.args.iter().map(|(n, v)| (*n, v)));
                });
                absolute_event(out, seq, mark.end_ns.max(mark.start_ns), |e| {
                    uint(e, EV_TYPE, SLICE_END);
                    uint(e, EV_TRACK_UUID, track);
                });
            }
            MarkKind::Event => {
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, INSTANT);
                    uint(e, EV_TRACK_UUID, thread_uuid(pid, mark.thread));
                    string(e, EV_NAME, name);
                    debug_args(e, mark.args.iter().map(|(n, v)| (*n, v)));
                });
            }
            MarkKind::Instant(text) => {
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, INSTANT);
                    uint(e, EV_TRACK_UUID, thread_uuid(pid, mark.thread));
                    string(e, EV_NAME, text);
                    message(e, EV_DEBUG, |a| {
                        string(a, ANN_NAME, "span");
                        string(a, ANN_STRING, name);
                    });
                });
            }
        }
    }

    /// Live print printed `text` (one line) at `ts_ns`: an instant event on the live print track.
    pub(crate) fn marker(&mut self, out: &mut Vec<u8>, ts_ns: u64, text: &str) {
        self.markers(out, ts_ns).event(out, ts_ns, |e| {
            uint(e, EV_TYPE, INSTANT);
            string(e, EV_NAME, text);
        });
    }

    /// The end of a complete trace: the `perfgraph trace end` instant event on the live print track, its
    /// debug annotations stating what is missing.
    pub(crate) fn footer(&mut self, out: &mut Vec<u8>, summary: &Summary) {
        let seq = self.markers(out, summary.end_ns);
        let losses = &summary.losses;
        let sentence = losses.sentence();
        seq.event(out, summary.end_ns, |e| {
            uint(e, EV_TYPE, INSTANT);
            string(e, EV_NAME, "perfgraph trace end");
            let mut annotate = |name: &str, value: u64| {
                message(e, EV_DEBUG, |a| {
                    string(a, ANN_NAME, name);
                    uint(a, ANN_UINT, value);
                });
            };
            annotate("events", summary.calls);
            annotate("unfinished", summary.unfinished);
            annotate("dropped_past_trace_limit", losses.past_limit);
            annotate("dropped_unwritten", losses.unwritten);
            annotate("dropped_ring_overflow", losses.ring_overflow_total());
            annotate("threads_without_ring", losses.unmapped_ring_threads);
            if let Some(limit) = losses.limit {
                annotate("trace_limit_bytes", limit);
            }
            for (name, n) in &losses.ring_overflow {
                annotate(&format!("dropped_ring_overflow.{name}"), *n);
            }
            let mut text = |name: &str, value: &str| {
                message(e, EV_DEBUG, |a| {
                    string(a, ANN_NAME, name);
                    string(a, ANN_STRING, value);
                });
            };
            text("clock", summary.clock);
            if !sentence.is_empty() {
                text("missing", &format!("perfgraph: {sentence}"));
            }
        });
    }

    /// The live print track's sequence, opened (its first packet written at `ts_ns`) on its first event.
    fn markers(&mut self, out: &mut Vec<u8>, ts_ns: u64) -> &mut Sequence {
        let pid = self.pid;
        self.markers
            .get_or_insert_with(|| open_sequence(out, MARKER_SEQUENCE, marker_uuid(pid), ts_ns))
    }
}
