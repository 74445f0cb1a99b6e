//! Protobuf's wire format as the trace writes it: varints, fields, nested messages whose length is patched
//! in after their body, and the two packets nearly every call is (a slice's begin and end), written
//! directly with the same bytes the general encoder gives.

use super::{
    EV_CATEGORY_IIDS, EV_NAME_IID, EV_TYPE, SEQUENCE_ID, SLICE_BEGIN, SLICE_END, TIMESTAMP,
    TRACE_PACKET, TRACK_EVENT,
};

/// Bytes of `v` as a varint.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

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

/// Appends a base-128 varint.
#[inline]
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint field.
#[inline]
pub(super) fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, (field as u64) << 3);
    varint(out, v);
}

/// A 64-bit fixed field (a `double`'s bits).
pub(super) fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, (field as u64) << 3 | 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// A string field.
pub(super) fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    varint(out, (field as u64) << 3 | 2);
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A length-delimited field holding the message `body` writes. The length is written after the body, in
/// the one byte reserved for it when it fits (nearly always), else the body moves to make room.
#[inline]
pub(super) fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    varint(out, (field as u64) << 3 | 2);
    let at = out.len();
    out.push(0);
    body(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        let mut prefix = Vec::with_capacity(10);
        varint(&mut prefix, len as u64);
        out.splice(at..at + 1, prefix);
    }
}

/// One `Trace.packet`.
#[inline]
pub(super) fn packet(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    message(out, TRACE_PACKET, body);
}
