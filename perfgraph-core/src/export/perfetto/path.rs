//! The run's critical path (`PERFGRAPH_REPORT=critical`): a `critical path` track of the process, each
//! piece a slice named for what the thread on the path did, the thread in its debug annotations.

use super::Perfetto;
use super::fields::*;
use super::sequence::{META_SEQUENCE, absolute_event};
use super::tracks::{path_uuid, process_uuid};
use super::wire::{message, packet, string, uint};
use crate::export::trace::PathPiece;

impl Perfetto {
    /// A piece of the path, on its track (described before the first).
    pub(crate) fn path_piece(&mut self, out: &mut Vec<u8>, piece: &PathPiece) {
        let pid = self.pid;
        let track = path_uuid(pid);
        if !self.path_track {
            self.path_track = true;
            packet(out, |p| {
                uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                message(p, TRACK_DESCRIPTOR, |d| {
                    uint(d, TD_UUID, track);
                    uint(d, TD_PARENT_UUID, process_uuid(pid));
                    string(d, TD_NAME, "critical path");
                });
            });
        }
        let seq = self.absolute(out, piece.start_ns);
        absolute_event(out, seq, piece.start_ns, |e| {
            uint(e, EV_TYPE, SLICE_BEGIN);
            uint(e, EV_TRACK_UUID, track);
            string(e, EV_NAME, &piece.title);
            message(e, EV_DEBUG, |a| {
                string(a, ANN_NAME, "thread");
                string(a, ANN_STRING, &piece.thread);
            });
        });
        absolute_event(out, seq, piece.end_ns.max(piece.start_ns), |e| {
            uint(e, EV_TYPE, SLICE_END);
            uint(e, EV_TRACK_UUID, track);
        });
    }
}
