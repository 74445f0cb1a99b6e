//! Protobuf's wire format, as the Perfetto trace ([`perfetto`](super::perfetto)) and the OTLP export
//! ([`otlp`](super::otlp)) write it: varints, fields of each wire type, and nested messages whose length is
//! patched in after their body. Writing the few messages we send by hand keeps the default build free of
//! a protobuf compiler and runtime.

/// Bytes of `v` as a varint.
#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
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

/// A varint field (`uint32`, `uint64`, `int64` of a value >= 0, `bool`, an enum).
#[inline]
pub(crate) fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, (field as u64) << 3);
    varint(out, v);
}

/// A 64-bit fixed field (`fixed64`, `sfixed64`, or a `double`'s bits).
pub(crate) fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, (field as u64) << 3 | 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// A `double` field.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub(crate) fn double(out: &mut Vec<u8>, field: u32, v: f64) {
    fixed64(out, field, v.to_bits());
}

/// A `bytes` field.
pub(crate) fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, (field as u64) << 3 | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A string field.
pub(crate) fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

/// A packed `repeated fixed64` (or `double`, as bits) field.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub(crate) fn packed_fixed64(
    out: &mut Vec<u8>,
    field: u32,
    values: impl ExactSizeIterator<Item = u64>,
) {
    varint(out, (field as u64) << 3 | 2);
    varint(out, values.len() as u64 * 8);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// A length-delimited field holding the message `body` writes. The length is written after the body, in
/// the one byte reserved for it when it fits (nearly always), else the body moves to make room.
#[inline]
pub(crate) fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_have_protobufs_bytes() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u64::MAX), 10);
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        // A body of 200 bytes: its length takes two bytes, moved in after it.
        message(&mut out, 1, |o| o.extend_from_slice(&[7; 200]));
        assert_eq!(&out[..3], [0x0a, 0xc8, 0x01]);
        assert_eq!(out.len(), 203);
    }
}
