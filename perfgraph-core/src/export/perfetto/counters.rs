//! The counter tracks: the process's resident memory and heap, and each thread's CPU usage.

use super::wire::{message, packet, string, uint};
use super::*;

impl Perfetto {
    /// A resident-memory sample on the counter track.
    pub(crate) fn memory(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        let pid = self.pid;
        let seq = self
            .memory
            .get_or_insert_with(|| open_sequence(out, MEMORY_SEQUENCE, memory_uuid(pid), ts_ns));
        seq.event(out, ts_ns, |e| {
            uint(e, EV_TYPE, COUNTER);
            uint(e, EV_COUNTER_VALUE, bytes);
        });
    }

    /// A thread's CPU usage since the previous sample (percent of one core) on its `CPU %` counter track
    /// (described on first use, under the thread's track, named before).
    pub(crate) fn cpu(&mut self, out: &mut Vec<u8>, ts_ns: u64, thread: u32, percent: u64) {
        let pid = self.pid;
        let seq = self.absolute(out, ts_ns);
        let i = thread as usize;
        if self.cpu_tracks.len() <= i {
            self.cpu_tracks.resize(i + 1, false);
        }
        if !self.cpu_tracks[i] {
            self.cpu_tracks[i] = true;
            packet(out, |p| {
                uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                message(p, TRACK_DESCRIPTOR, |d| {
                    uint(d, 1, cpu_uuid(pid, thread));
                    uint(d, 5, thread_uuid(pid, thread));
                    string(d, 2, "CPU %");
                    // CounterDescriptor.unit_name.
                    message(d, 8, |c| string(c, 6, "%"));
                });
            });
        }
        packet(out, |p| {
            uint(p, TIMESTAMP, ts_ns);
            uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
            uint(p, SEQUENCE_ID, seq as u64);
            message(p, TRACK_EVENT, |e| {
                uint(e, EV_TYPE, COUNTER);
                uint(e, EV_TRACK_UUID, cpu_uuid(pid, thread));
                uint(e, EV_COUNTER_VALUE, percent);
            });
        });
    }

    /// The process's net heap (the counting allocator's) on its `Heap` counter track (described on first
    /// use, under the process's track), on the sequence of absolute-time events.
    pub(crate) fn heap(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        let pid = self.pid;
        let seq = self.absolute(out, ts_ns);
        if !self.heap_track {
            self.heap_track = true;
            packet(out, |p| {
                uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                message(p, TRACK_DESCRIPTOR, |d| {
                    uint(d, 1, heap_uuid(pid));
                    uint(d, 5, process_uuid(pid));
                    string(d, 2, "Heap");
                    // CounterDescriptor.unit = UNIT_SIZE_BYTES.
                    message(d, 8, |c| uint(c, 3, 3));
                });
            });
        }
        packet(out, |p| {
            uint(p, TIMESTAMP, ts_ns);
            uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
            uint(p, SEQUENCE_ID, seq as u64);
            message(p, TRACK_EVENT, |e| {
                uint(e, EV_TYPE, COUNTER);
                uint(e, EV_TRACK_UUID, heap_uuid(pid));
                uint(e, EV_COUNTER_VALUE, bytes);
            });
        });
    }
}
