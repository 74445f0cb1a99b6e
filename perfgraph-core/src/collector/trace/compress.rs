//! A Perfetto trace's packets on their way to the file: deflated into `compressed_packets` bundles
//! (`TracePacket` field 50, a zlib stream of whole packets, which trace processor inflates and reads in
//! its place) while the background thread has time for it, raw otherwise; either way placed by the page
//! rule (`export::pages`), so a bundle, like a packet, never crosses a page boundary.
//!
//! `PERFGRAPH_TRACE_COMPRESS=auto` (the default) deflates for at most [`BUDGET_NS`] of the background
//! thread's time in each second, and not at all for the rest of a second in which a drain found a ring a
//! quarter full ([`Packer::behind`]: the background thread is behind); the rest goes raw. At a low or
//! moderate rate every packet is deflated (a few bytes per call instead of 25), while at the highest
//! rates, where the background thread's time is what keeps the trace lossless, most go raw. `on` always
//! deflates, `off` never.
//!
//! A bundle is made to fill what is left of a page: its input, whole packets, is sized from the ratio the
//! last bundles reached, deflated at level 1 into at most the room left; when it does not fit, the ratio
//! expected drops and a smaller bundle is tried. A page with too little room left for a bundle is padded.

use flate2::{Compress, Compression, FlushCompress, Status};

use crate::base::clock;
use crate::base::config::TraceCompress;
use crate::export::pages;
use crate::export::perfetto::packets;

/// Most of the background thread's time deflation may take in each second, with `auto`.
pub const BUDGET_NS: u64 = 150_000_000;

/// The budget's period.
const WINDOW_NS: u64 = 1_000_000_000;

/// A bundle starts only where at least this much of a page is left; with less, the rest of the page is
/// padded and the bundle takes the next page.
const MIN_ROOM: usize = 192;

/// Less input than this goes raw: a bundle would not save its framing.
const MIN_INPUT: usize = 512;

/// Raw bytes held back before they are packed (a few pages' worth of bundles at a time).
pub(crate) const PACK_BYTES: usize = 64 * 1024;

/// The compressor and what it has learnt.
pub(crate) struct Packer {
    mode: TraceCompress,
    deflate: Compress,
    /// Where a bundle is deflated: at most a page.
    scratch: Box<[u8]>,
    /// Raw bytes per deflated byte the next bundle is expected to reach, times 16 (at least 16).
    ratio16: usize,
    /// Start of the budget's current period (monotonic ns) and the time deflation took in it.
    window_ns: u64,
    spent_ns: u64,
    /// Totals for the trace's end: raw bytes deflated, and the time it took (ns).
    pub(crate) deflated_bytes: u64,
    pub(crate) deflate_ns: u64,
}

impl Packer {
    pub(crate) fn new(mode: TraceCompress) -> Packer {
        Packer {
            mode,
            deflate: Compress::new(Compression::new(1), true),
            scratch: vec![0; pages::PAGE as usize].into_boxed_slice(),
            ratio16: 6 * 16,
            window_ns: clock::monotonic_ns(),
            spent_ns: 0,
            deflated_bytes: 0,
            deflate_ns: 0,
        }
    }

    /// The background thread is behind (a drain found a ring a quarter full or more): with `auto`, no
    /// more deflation for the rest of the budget's period.
    pub(crate) fn behind(&mut self) {
        self.spent_ns = self.spent_ns.max(BUDGET_NS);
    }

    /// Whether the next bundle may be deflated.
    fn may_deflate(&mut self) -> bool {
        match self.mode {
            TraceCompress::Off => false,
            TraceCompress::On => true,
            TraceCompress::Auto => {
                let now = clock::monotonic_ns();
                if now.saturating_sub(self.window_ns) >= WINDOW_NS {
                    self.window_ns = now;
                    self.spent_ns = 0;
                }
                self.spent_ns < BUDGET_NS
            }
        }
    }

    /// Moves the whole packets of `raw` to the end of `out`, whose first byte goes to file offset `base`:
    /// in bundles, or raw when deflation is off, over its budget or would not gain. With `all` every
    /// packet goes; without it, packets too few for a full bundle stay in `raw` for the next call.
    pub(crate) fn pack(&mut self, raw: &mut Vec<u8>, out: &mut Vec<u8>, base: u64, all: bool) {
        let mut at = 0;
        while at < raw.len() {
            if !self.may_deflate() {
                place_raw(&raw[at..], out, base);
                at = raw.len();
                break;
            }
            let room = pages::room(base + out.len() as u64);
            let page = if room < MIN_ROOM {
                pages::PAGE as usize
            } else {
                room
            };
            // Room for the framing, and a gap after the bundle that padding can fill.
            let cap = page - packets::MIN_PAD - packets::compressed_overhead(page);
            let want = cap * self.ratio16 / 16 * 15 / 16;
            if !all && raw.len() - at < want {
                break;
            }
            let end = whole_packets_within(raw, at, want);
            // Too little to gain, or one packet longer than a bundle can hold (it might never fit).
            if end - at < MIN_INPUT || end - at > want {
                place_raw(&raw[at..end], out, base);
                at = end;
                continue;
            }
            if page != room {
                packets::pad(out, room);
            }
            match self.deflate(&raw[at..end], cap) {
                Some(n) => {
                    packets::compressed(out, &self.scratch[..n]);
                    self.ratio16 = ((self.ratio16 * 3 + 16 * (end - at) / n.max(1)) / 4).max(16);
                    self.deflated_bytes += (end - at) as u64;
                    at = end;
                }
                // Expected too much: a smaller bundle next (at a ratio of 1 it always fits).
                None => self.ratio16 = (self.ratio16 * 3 / 4).max(16),
            }
        }
        raw.drain(..at);
    }

    /// `input` deflated into `scratch[..cap]` as one zlib stream; its length, or `None` if it does not fit.
    fn deflate(&mut self, input: &[u8], cap: usize) -> Option<usize> {
        let start = clock::monotonic_ns();
        self.deflate.reset();
        let status = self
            .deflate
            .compress(input, &mut self.scratch[..cap], FlushCompress::Finish);
        let spent = clock::monotonic_ns().saturating_sub(start);
        self.spent_ns += spent;
        self.deflate_ns += spent;
        match status {
            Ok(Status::StreamEnd) => Some(self.deflate.total_out() as usize),
            _ => None,
        }
    }
}

/// The end of the whole packets of `raw` from `at` that take at most `want` bytes (at least one packet).
fn whole_packets_within(raw: &[u8], at: usize, want: usize) -> usize {
    let mut end = at + packets::first_len(&raw[at..]);
    while end < raw.len() {
        let next = end + packets::first_len(&raw[end..]);
        if next - at > want {
            break;
        }
        end = next;
    }
    end
}

/// The whole packets `raw` appended to `out` one by one, each kept inside a page.
fn place_raw(raw: &[u8], out: &mut Vec<u8>, base: u64) {
    let mut at = 0;
    while at < raw.len() {
        let len = packets::first_len(&raw[at..]);
        let start = out.len();
        out.extend_from_slice(&raw[at..at + len]);
        pages::seal(out, base, start, packets::MIN_PAD, packets::pad);
        at += len;
    }
}

#[cfg(test)]
mod tests {
    use super::Packer;
    use crate::base::config::TraceCompress;
    use crate::export::pages;
    use crate::export::perfetto::packets;

    /// A run of small packets like a trace's: tag, length, a few varied bytes.
    fn sample(n: usize) -> Vec<u8> {
        let mut raw = Vec::new();
        for i in 0..n {
            let body = [
                0x40,
                (i % 97) as u8,
                0x50,
                5,
                0x5a,
                2,
                0x48,
                1 + (i % 2) as u8,
            ];
            let len = if i % 2 == 0 { 8 } else { 6 };
            raw.push(0x0a);
            raw.push(len as u8);
            raw.extend_from_slice(&body[..len]);
        }
        raw
    }

    /// The packets of `out` (its bundles inflated), padding left out, and whether any crosses a page.
    fn unpack(out: &[u8], base: u64) -> Vec<u8> {
        let mut packets_out = Vec::new();
        let mut at = 0;
        while at < out.len() {
            let len = packets::first_len(&out[at..]);
            let (first, last) = (base + at as u64, base + (at + len) as u64 - 1);
            assert_eq!(
                first / pages::PAGE,
                last / pages::PAGE,
                "packet at {at} crosses a page"
            );
            let packet = &out[at..at + len];
            // Field 50 (compressed_packets) right after the packet's length.
            let header = 1 + packet[1..].iter().position(|&b| b < 0x80).unwrap() + 1;
            if packet[header..].starts_with(&[0x92, 0x03]) {
                let mut inflate = flate2::Decompress::new(true);
                let mut inflated = Vec::with_capacity(1 << 20);
                let body = &packet[header + 2..];
                let skip = if body[0] >= 0x80 { 2 } else { 1 };
                inflate
                    .decompress_vec(
                        &body[skip..],
                        &mut inflated,
                        flate2::FlushDecompress::Finish,
                    )
                    .unwrap();
                packets_out.extend_from_slice(&inflated);
            } else if packet[header..].starts_with(&[0xa2, 0x02]) {
                // Padding.
            } else {
                packets_out.extend_from_slice(packet);
            }
            at += len;
        }
        packets_out
    }

    #[test]
    fn every_packet_arrives_in_order_in_bundles_that_fill_pages() {
        for mode in [TraceCompress::On, TraceCompress::Off] {
            let mut packer = Packer::new(mode);
            let raw_all = sample(40_000);
            let (mut out, base) = (vec![0x0a, 1, 0], 4000u64);
            let mut raw = raw_all.clone();
            packer.pack(&mut raw, &mut out, base, false);
            assert!(raw.len() < super::PACK_BYTES);
            packer.pack(&mut raw, &mut out, base, true);
            assert!(raw.is_empty());
            let mut expected = vec![0x0a, 1, 0];
            expected.extend_from_slice(&raw_all);
            assert_eq!(unpack(&out, base), expected);
            if mode == TraceCompress::On {
                assert!(
                    out.len() * 3 < raw_all.len(),
                    "{} of {}",
                    out.len(),
                    raw_all.len()
                );
            }
        }
    }
}
