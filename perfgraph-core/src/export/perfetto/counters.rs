//! The counter tracks: the process's resident memory and heap, and each thread's CPU usage.

use super::Perfetto;
use super::fields::*;
use super::sequence::{MEMORY_SEQUENCE, META_SEQUENCE, absolute_event, open_sequence};
use super::tracks::{
    counter_uuid, cpu_uuid, heap_uuid, interval_uuids, memory_uuid, process_uuid, thread_uuid,
};
use super::wire::{fixed64, message, packet, string, uint};
use crate::export::trace::Interval;

/// A counter's unit, as its `CounterDescriptor` gives it.
pub(super) enum Unit {
    /// `unit = UNIT_SIZE_BYTES`.
    Bytes,
    /// `unit_name = "%"`.
    Percent,
    /// No unit: a `counter!`'s own numbers.
    None,
}

/// Describes the counter track `uuid`, named `name`, under the track `parent`.
pub(super) fn describe(out: &mut Vec<u8>, uuid: u64, parent: u64, name: &str, unit: Unit) {
    packet(out, |p| {
        uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
        message(p, TRACK_DESCRIPTOR, |d| {
            uint(d, TD_UUID, uuid);
            uint(d, TD_PARENT_UUID, parent);
            string(d, TD_NAME, name);
            match unit {
                Unit::Bytes => message(d, TD_COUNTER, |c| uint(c, COUNTER_UNIT, UNIT_SIZE_BYTES)),
                Unit::Percent => message(d, TD_COUNTER, |c| string(c, COUNTER_UNIT_NAME, "%")),
                Unit::None => message(d, TD_COUNTER, |_| {}),
            }
        });
    });
}

/// A value of the counter track `uuid` at `ts_ns`, on the sequence of absolute-time events `seq`.
fn absolute_value(out: &mut Vec<u8>, seq: u32, ts_ns: u64, uuid: u64, value: u64) {
    absolute_event(out, seq, ts_ns, |e| {
        uint(e, EV_TYPE, COUNTER);
        uint(e, EV_TRACK_UUID, uuid);
        uint(e, EV_COUNTER_VALUE, value);
    });
}

impl Perfetto {
    /// A resident-memory sample on the counter track (described in the header), on a delta-encoded
    /// sequence of its own.
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
            let (uuid, parent) = (cpu_uuid(pid, thread), thread_uuid(pid, thread));
            describe(out, uuid, parent, "CPU %", Unit::Percent);
        }
        absolute_value(out, seq, ts_ns, cpu_uuid(pid, thread), percent);
    }

    /// A thread's interval statistics on two counter tracks under its track (described on first use):
    /// `Sections/s` and `In sections %`, double values.
    pub(crate) fn interval(&mut self, out: &mut Vec<u8>, interval: &Interval) {
        let Interval {
            ts_ns,
            thread,
            per_second,
            busy_percent,
        } = *interval;
        let pid = self.pid;
        let seq = self.absolute(out, ts_ns);
        let i = thread as usize;
        if self.interval_tracks.len() <= i {
            self.interval_tracks.resize(i + 1, false);
        }
        let (rate, busy) = interval_uuids(pid, thread);
        if !self.interval_tracks[i] {
            self.interval_tracks[i] = true;
            let parent = thread_uuid(pid, thread);
            describe(out, rate, parent, "Sections/s", Unit::None);
            describe(out, busy, parent, "In sections %", Unit::Percent);
        }
        for (uuid, value) in [(rate, per_second), (busy, busy_percent)] {
            absolute_event(out, seq, ts_ns, |e| {
                uint(e, EV_TYPE, COUNTER);
                uint(e, EV_TRACK_UUID, uuid);
                fixed64(e, EV_DOUBLE_COUNTER_VALUE, value.to_bits());
            });
        }
    }

    /// A `counter!` value on the counter's track under the process (described on its first value), as a
    /// double, on the sequence of absolute-time events.
    pub(crate) fn counter(&mut self, out: &mut Vec<u8>, ts_ns: u64, name: &str, value: f64) {
        let pid = self.pid;
        let seq = self.absolute(out, ts_ns);
        let n = self.counter_tracks.len();
        let uuid = match self.counter_tracks.get(name) {
            Some(&uuid) => uuid,
            None => {
                let uuid = counter_uuid(pid, n as u32);
                self.counter_tracks.insert(name.to_owned(), uuid);
                describe(out, uuid, process_uuid(pid), name, Unit::None);
                uuid
            }
        };
        absolute_event(out, seq, ts_ns, |e| {
            uint(e, EV_TYPE, COUNTER);
            uint(e, EV_TRACK_UUID, uuid);
            fixed64(e, EV_DOUBLE_COUNTER_VALUE, value.to_bits());
        });
    }

    /// The process's net heap (the counting allocator's) on its `Heap` counter track (described on first
    /// use, under the process's track), on the sequence of absolute-time events.
    pub(crate) fn heap(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        let pid = self.pid;
        let seq = self.absolute(out, ts_ns);
        if !self.heap_track {
            self.heap_track = true;
            describe(out, heap_uuid(pid), process_uuid(pid), "Heap", Unit::Bytes);
        }
        absolute_value(out, seq, ts_ns, heap_uuid(pid), bytes);
    }
}
