//! Sequences: the fixed ones' ids, a sequence's incremental state (its last timestamp, what it interned),
//! its first packet (state cleared, the delta clock defined, its default track), and the events of the
//! sequence of absolute-time events.

use super::fields::*;
use super::wire::{message, packet, uint};

/// The sequence-scoped incremental clock every sequence defines.
pub(super) const DELTA_CLOCK: u64 = 64;

/// Sequence ids below this are the fixed ones; (thread, depth) sequences are numbered from it.
pub(super) const FIRST_CALL_SEQUENCE: u32 = 5;
pub(super) const META_SEQUENCE: u32 = 1;
pub(super) const MEMORY_SEQUENCE: u32 = 2;
pub(super) const MARKER_SEQUENCE: u32 = 3;
/// Futures' lives, instant events and CPU counters: absolute timestamps.
pub(super) const ABSOLUTE_SEQUENCE: u32 = 4;

/// One sequence's incremental state.
#[derive(Debug)]
pub(super) struct Sequence {
    pub(super) id: u32,
    /// The timestamp of its last packet (ns), which the next one's delta is from.
    pub(super) last_ns: u64,
    /// By section id: whether its name (and message) was interned on this sequence.
    pub(super) interned: Vec<bool>,
    /// Levels whose category was interned (bit `level`).
    pub(super) categories: u8,
}

impl Sequence {
    /// One TrackEvent (`body` writes its fields) at `ts_ns`, or at the sequence's last timestamp if that is
    /// later (timestamps on a sequence are deltas, which never go back).
    pub(super) fn event(&mut self, out: &mut Vec<u8>, ts_ns: u64, body: impl FnOnce(&mut Vec<u8>)) {
        let ts = ts_ns.max(self.last_ns);
        packet(out, |p| {
            uint(p, TIMESTAMP, ts - self.last_ns);
            uint(p, SEQUENCE_ID, self.id as u64);
            message(p, TRACK_EVENT, body);
        });
        self.last_ns = ts;
    }
}

/// One `TrackEvent` (its fields written by `body`) at `ts_ns`, an absolute BOOTTIME timestamp, on the
/// sequence `seq` of absolute-time events (marks, counters): they do not arrive in time order, so they are
/// not delta-encoded.
pub(super) fn absolute_event(
    out: &mut Vec<u8>,
    seq: u32,
    ts_ns: u64,
    body: impl FnOnce(&mut Vec<u8>),
) {
    packet(out, |p| {
        uint(p, TIMESTAMP, ts_ns);
        uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
        uint(p, SEQUENCE_ID, seq as u64);
        message(p, TRACK_EVENT, body);
    });
}

/// The first packet of a sequence: its incremental state cleared, the delta clock defined from `base_ns`,
/// and `track` as the default track of its events.
pub(super) fn open_sequence(out: &mut Vec<u8>, id: u32, track: u64, base_ns: u64) -> Sequence {
    packet(out, |p| {
        uint(p, TIMESTAMP, base_ns);
        uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
        uint(p, SEQUENCE_ID, id as u64);
        uint(p, SEQUENCE_FLAGS, STATE_CLEARED);
        message(p, CLOCK_SNAPSHOT, |s| {
            message(s, SNAPSHOT_CLOCK, |c| {
                uint(c, CLOCK_ID, DELTA_CLOCK);
                uint(c, CLOCK_TIMESTAMP, base_ns);
                uint(c, CLOCK_IS_INCREMENTAL, 1);
            });
            message(s, SNAPSHOT_CLOCK, |c| {
                uint(c, CLOCK_ID, BOOTTIME);
                uint(c, CLOCK_TIMESTAMP, base_ns);
            });
        });
        message(p, DEFAULTS, |d| {
            uint(d, DEFAULTS_TIMESTAMP_CLOCK_ID, DELTA_CLOCK);
            message(d, DEFAULTS_TRACK_EVENT, |t| {
                uint(t, EVENT_DEFAULTS_TRACK_UUID, track)
            });
        });
    });
    Sequence {
        id,
        last_ns: base_ns,
        interned: Vec::new(),
        categories: 0,
    }
}
