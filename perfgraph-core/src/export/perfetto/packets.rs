//! The Perfetto file's framing around the packets [`perfetto`](super) encodes: walking a run of
//! `Trace.packet` fields, the padding packet of the page rule ([`pages`](super::super::pages)), and the packet that
//! carries a run of packets deflated (`TracePacket.compressed_packets`).
//!
//! Padding is a packet holding only an empty-content `synchronization_marker` (`TracePacket` field 36,
//! bytes): a field Perfetto's own service writes into every trace file and its readers skip. Its length is
//! never zero (trace processor refuses a zero-length packet that straddles two of its read chunks).

use super::wire::{varint, varint_len};

/// `Trace.packet`'s tag: field 1, length-delimited.
const PACKET_TAG: u8 = 0x0a;
/// `TracePacket.synchronization_marker` (36, length-delimited) as a varint tag.
const MARKER_TAG: [u8; 2] = [0xa2, 0x02];
/// `TracePacket.compressed_packets` (50, length-delimited) as a varint tag.
const COMPRESSED_TAG: [u8; 2] = [0x92, 0x03];

/// The smallest padding: tag, length 3, the marker's tag, its length 0.
pub(crate) const MIN_PAD: usize = 5;

/// Exactly `n` (>= [`MIN_PAD`]) bytes of padding packets.
pub(crate) fn pad(out: &mut Vec<u8>, mut n: usize) {
    debug_assert!(n >= MIN_PAD);
    // One packet takes 5..=129 bytes (one-byte lengths); longer gaps take several.
    while n > 129 {
        one_pad(out, 100);
        n -= 100;
    }
    one_pad(out, n);
}

/// One padding packet of `n` bytes, 5..=129.
fn one_pad(out: &mut Vec<u8>, n: usize) {
    let body = n - 2;
    out.extend_from_slice(&[PACKET_TAG, body as u8, MARKER_TAG[0], MARKER_TAG[1]]);
    out.push((body - 3) as u8);
    out.resize(out.len() + body - 3, 0);
}

/// Bytes of the packet framing [`compressed`] adds to `deflated` bytes.
pub(crate) fn compressed_overhead(deflated: usize) -> usize {
    let body = 2 + varint_len(deflated as u64) + deflated;
    1 + varint_len(body as u64) + 2 + varint_len(deflated as u64)
}

/// A packet whose `compressed_packets` field holds `deflated` (a zlib stream of whole `Trace.packet`
/// fields).
pub(crate) fn compressed(out: &mut Vec<u8>, deflated: &[u8]) {
    let body = 2 + varint_len(deflated.len() as u64) + deflated.len();
    out.push(PACKET_TAG);
    varint(out, body as u64);
    out.extend_from_slice(&COMPRESSED_TAG);
    varint(out, deflated.len() as u64);
    out.extend_from_slice(deflated);
}

/// The length of the whole `Trace.packet` field at the start of `bytes` (which holds whole fields only).
#[inline]
pub(crate) fn first_len(bytes: &[u8]) -> usize {
    debug_assert_eq!(bytes[0], PACKET_TAG);
    let (mut len, mut shift, mut at) = (0usize, 0, 1);
    loop {
        let b = bytes[at];
        at += 1;
        len |= ((b & 0x7f) as usize) << shift;
        shift += 7;
        if b < 0x80 {
            return at + len;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn padding_takes_exactly_the_bytes_asked_for_in_whole_packets() {
        for n in super::MIN_PAD..=4200 {
            let mut out = Vec::new();
            super::pad(&mut out, n);
            assert_eq!(out.len(), n);
            let mut at = 0;
            while at < out.len() {
                at += super::first_len(&out[at..]);
            }
            assert_eq!(at, n);
        }
    }

    #[test]
    fn the_compressed_packets_framing() {
        for len in [0, 1, 100, 127, 128, 4000, 20_000] {
            let deflated = vec![7u8; len];
            let mut out = Vec::new();
            super::compressed(&mut out, &deflated);
            assert_eq!(out.len(), len + super::compressed_overhead(len));
            assert_eq!(super::first_len(&out), out.len());
        }
    }
}
