//! Locks (`perfgraph_core::sync`): waits and holds on a track per thread and lock under the thread's track,
//! and the hand-over from a release to a waiter's acquisition as a flow between two instants on the
//! threads' own tracks.

use super::Perfetto;
use super::fields::*;
use super::sequence::{META_SEQUENCE, absolute_event};
use super::tracks::thread_uuid;
use super::wire::{fixed64, message, packet, string, uint};
use crate::export::trace::{LockFlow, LockSlice};

/// The track of lock name `lock` on thread `thread`: a hash of the three (splitmix64), bits 63 and 62
/// clear and bit 59 set, so it meets no thread's, future's or fixed track's uuid.
fn lock_uuid(pid: u32, thread: u32, lock: u32) -> u64 {
    let mut z =
        ((pid as u64) << 32 | thread as u64) ^ (lock as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) & !(0b1111 << 60)) | 1 << 59
}

impl Perfetto {
    /// A wait or a hold on the lock's track of the thread (described on first use, named `lock: <name>`,
    /// under the thread's track, named before).
    pub(crate) fn lock_slice(&mut self, out: &mut Vec<u8>, s: &LockSlice) {
        let pid = self.pid;
        let seq = self.absolute(out, s.start_ns);
        let track = lock_uuid(pid, s.thread, s.lock.1);
        if self.lock_tracks.insert(track) {
            packet(out, |p| {
                uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                message(p, TRACK_DESCRIPTOR, |d| {
                    uint(d, TD_UUID, track);
                    uint(d, TD_PARENT_UUID, thread_uuid(pid, s.thread));
                    string(d, TD_NAME, &format!("lock: {}", s.lock.0));
                });
            });
        }
        let title = s.title();
        absolute_event(out, seq, s.start_ns, |e| {
            uint(e, EV_TYPE, SLICE_BEGIN);
            uint(e, EV_TRACK_UUID, track);
            string(e, EV_NAME, &title);
            if let Some(holder) = &s.holder {
                message(e, EV_DEBUG, |a| {
                    string(a, ANN_NAME, "holder");
                    string(a, ANN_STRING, holder);
                });
            }
        });
        absolute_event(out, seq, s.end_ns.max(s.start_ns), |e| {
            uint(e, EV_TYPE, SLICE_END);
            uint(e, EV_TRACK_UUID, track);
        });
    }

    /// A lock handed over: an instant `release: <name>` on the releasing thread's track starting the flow,
    /// and an instant `acquire: <name>` on the waiter's ending it.
    pub(crate) fn lock_flow(&mut self, out: &mut Vec<u8>, f: &LockFlow) {
        let pid = self.pid;
        let seq = self.absolute(out, f.from.1);
        for (end, (thread, ns), word) in [(false, f.from, "release"), (true, f.to, "acquire")] {
            absolute_event(out, seq, ns, |e| {
                uint(e, EV_TYPE, INSTANT);
                uint(e, EV_TRACK_UUID, thread_uuid(pid, thread));
                string(e, EV_NAME, &format!("{word}: {}", f.lock));
                fixed64(
                    e,
                    if end {
                        EV_TERMINATING_FLOW_IDS
                    } else {
                        EV_FLOW_IDS
                    },
                    f.id,
                );
            });
        }
    }
}
