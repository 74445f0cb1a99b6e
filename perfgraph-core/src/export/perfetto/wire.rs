//! The trace's own protobuf: the two packets nearly every call is (a slice's begin and end), written
//! directly with the same bytes the general encoder ([`protobuf`](crate::export::protobuf)) gives, and a
//! `Trace.packet`.

use super::fields::{
    EV_CATEGORY_IIDS, EV_NAME_IID, EV_TYPE, SEQUENCE_ID, SLICE_BEGIN, SLICE_END, TIMESTAMP,
    TRACE_PACKET, TRACK_EVENT,
};
pub(crate) use crate::export::protobuf::{fixed64, message, string, uint, varint, varint_len};

/// A `TYPE_SLICE_BEGIN` packet with only a delta, a sequence id, a category iid and a name iid: the bytes
/// [`packet`] writes for it, written directly.
#[inline]
pub(super) fn begin_packet(out: &mut Vec<u8>, delta: u64, seq: u32, category: u64, name: u64) {
    // TrackEvent: category (1 + n), type (2), name (1 + n).
    let event = 1 + varint_len(category) + 2 + 1 + varint_len(name);
    debug_assert!(event < 0x80);
    event_head(out, delta, seq, event);
    out.push((EV_CATEGORY_IIDS << 3) as u8);
    varint(out, category);
    out.extend_from_slice(&[
        (EV_TYPE << 3) as u8,
        SLICE_BEGIN as u8,
        (EV_NAME_IID << 3) as u8,
    ]);
    varint(out, name);
}

/// A `TYPE_SLICE_END` packet: a delta and a sequence id, written directly.
#[inline]
pub(super) fn end_packet(out: &mut Vec<u8>, delta: u64, seq: u32) {
    event_head(out, delta, seq, 2);
    out.extend_from_slice(&[(EV_TYPE << 3) as u8, SLICE_END as u8]);
}

/// The start of [`begin_packet`]'s and [`end_packet`]'s bytes: the packet's tag and length, its timestamp
/// delta and sequence id, then the track event's tag and length (`event` bytes follow, under 128).
#[inline(always)]
fn event_head(out: &mut Vec<u8>, delta: u64, seq: u32, event: usize) {
    let body = 1 + varint_len(delta) + 1 + varint_len(seq as u64) + 2 + event;
    debug_assert!(body < 0x80);
    out.extend_from_slice(&[
        (TRACE_PACKET << 3 | 2) as u8,
        body as u8,
        (TIMESTAMP << 3) as u8,
    ]);
    varint(out, delta);
    out.push((SEQUENCE_ID << 3) as u8);
    varint(out, seq as u64);
    out.extend_from_slice(&[(TRACK_EVENT << 3 | 2) as u8, event as u8]);
}

/// One `Trace.packet`.
#[inline]
pub(super) fn packet(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    message(out, TRACE_PACKET, body);
}
