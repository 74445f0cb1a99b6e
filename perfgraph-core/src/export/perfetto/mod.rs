//! Perfetto's native protobuf trace (`PERFGRAPH_TRACE` ending in `.pftrace` or `.perfetto-trace`),
//! written as a stream of `TracePacket`s while the program runs. ui.perfetto.dev and Perfetto's
//! trace processor open it.
//!
//! What it holds (field numbers from Perfetto's `protos/perfetto/trace/`):
//! - a process track (`TrackDescriptor.process`: pid, program name, and the process's identity as
//!   `process_labels` `rank=…`, `host=…`, `start_unix_ns=…`), one thread track per thread
//!   (`TrackDescriptor.thread`: its name), a counter track for resident memory (bytes), one for the heap (bytes,
//!   with the counting allocator) and a track for the lines live print printed (instant events);
//! - each timed future's life as one slice on a track of its own under the process (named by its section,
//!   the debug annotations `id` and `cancelled`), `tracing` events as instant events on their thread's
//!   track (the debug annotation `span`), and each thread's CPU usage (percent of one core since the
//!   previous sample) on a counter track `CPU %` under its thread; these are written on one sequence with
//!   absolute timestamps (`timestamp_clock_id` BOOTTIME on each packet), as they do not arrive in time
//!   order; so is the run's critical path (`PERFGRAPH_REPORT=critical`), at the end, as slices on a
//!   `critical path` track of the process;
//! - per section call a `TYPE_SLICE_BEGIN` and a `TYPE_SLICE_END` `TrackEvent`, the name interned
//!   (`InternedData.event_names`, the iid is the section's id), the section's level as its interned category
//!   (`level 0` … `level 3`), its live message (when it has one) as the debug annotation `message`, its
//!   CPU figures (when it measured them: the `cpu` option) as the debug annotations `cpu_ns`, `self_cpu_ns`
//!   and the rest;
//! - timestamps delta-encoded: each sequence defines the sequence-scoped incremental clock 64
//!   (`ClockSnapshot.Clock.is_incremental`, tied to BOOTTIME) and makes it the default
//!   (`TracePacketDefaults.timestamp_clock_id`), so a packet's `timestamp` is the nanoseconds since the
//!   sequence's previous packet: one or two bytes for a short call.
//!
//! Calls reach us in the order they *ended*, children first, so one sequence per thread could not be in
//! time order (a parent's begin comes after its children's). Calls at one depth of one thread do not
//! overlap, though, and end in time order: so each (thread, depth) gets a sequence of its own, whose
//! timestamps only grow, with the thread's track as its default track. Trace processor sorts every
//! sequence's events by time before it nests the slices of a track. A call and its child that start on
//! the same nanosecond (a coarse clock) may then nest either way round.
//!
//! The messages are hand-encoded: a dozen messages and a varint, against a protobuf crate plus either a
//! `protoc` at build time or thousands of generated lines checked in; every packet is built in the caller's
//! buffer with no allocation. The file is checked by Perfetto's own Python classes
//! (`tests/perfetto/check_trace.py`), not by this code.
//!
//! Each packet is one `Trace.packet` field, appended whole: a file cut off between two writes holds
//! whole packets only.

mod counters;
mod fields;
mod locks;
mod marks;
pub(crate) mod packets;
mod path;
mod sequence;
mod tracks;
pub(super) mod wire;

use super::trace::{
    Call, Encoder, Identity, Interval, LockFlow, LockSlice, Mark, PathPiece, SectionText, Summary,
    arg_key,
};
use crate::base::registry::SectionId;
use crate::data::args::ArgValue;
use crate::data::figures::CpuFigures;
use fields::*;
use sequence::{ABSOLUTE_SEQUENCE, FIRST_CALL_SEQUENCE, META_SEQUENCE, Sequence, open_sequence};
use tracks::{marker_uuid, memory_uuid, process_uuid, thread_uuid, tid};
use wire::{begin_packet, end_packet, fixed64, message, packet, string, uint};

/// The debug annotation name of a section's live message (interned iid 1 on each sequence).
const MESSAGE_IID: u64 = 1;

/// A debug annotation for each arg (`DebugAnnotation`: its name, and a bool, uint, int, double or string
/// value), named as the Chrome format names them ([`arg_key`]).
fn debug_args<'a>(e: &mut Vec<u8>, args: impl Iterator<Item = (&'a str, &'a ArgValue)>) {
    for (name, value) in args {
        message(e, EV_DEBUG, |a| {
            string(a, ANN_NAME, &arg_key(name));
            match value {
                ArgValue::Bool(v) => uint(a, ANN_BOOL, *v as u64),
                ArgValue::Uint(v) => uint(a, ANN_UINT, *v),
                ArgValue::Int(v) => uint(a, ANN_INT, *v as u64),
                ArgValue::Float(v) => fixed64(a, ANN_DOUBLE, v.to_bits()),
                ArgValue::Text(t) => string(a, ANN_STRING, t),
            }
        });
    }
}

/// The encoder's state: the sequences and what each has interned.
#[derive(Debug)]
pub(crate) struct Perfetto {
    pid: u32,
    /// By thread index, then depth: the sequence of that thread's calls at that depth.
    calls: Vec<Vec<Option<Sequence>>>,
    memory: Option<Sequence>,
    markers: Option<Sequence>,
    /// The sequence of absolute-time events (marks, CPU counters), once opened.
    absolute: Option<Sequence>,
    /// By thread index: whether its CPU counter track was described.
    cpu_tracks: Vec<bool>,
    /// Whether the `Heap` counter track was described.
    heap_track: bool,
    /// The lock tracks described so far (thread and lock), by uuid.
    lock_tracks: std::collections::HashSet<u64>,
    /// By thread index: whether its interval statistics' tracks were described.
    interval_tracks: Vec<bool>,
    /// The `counter!` tracks described so far, by counter name: their uuids.
    counter_tracks: std::collections::HashMap<String, u64>,
    /// Whether the `critical path` track was described.
    path_track: bool,
    next_sequence: u32,
    /// By section id: its text, once asked for.
    sections: Vec<Option<SectionText>>,
}

impl Perfetto {
    /// The start of the file: the process track, the memory counter track and the live print track.
    pub(crate) fn header(out: &mut Vec<u8>, who: &Identity) -> Perfetto {
        let pid = who.pid;
        packet(out, |p| {
            uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
            message(p, TRACK_DESCRIPTOR, |d| {
                uint(d, TD_UUID, process_uuid(pid));
                message(d, TD_PROCESS, |proc| {
                    uint(proc, PROCESS_PID, pid as u64);
                    string(proc, PROCESS_NAME, &who.program);
                    string(proc, PROCESS_LABELS, &format!("rank={}", who.rank));
                    if !who.host.is_empty() {
                        string(proc, PROCESS_LABELS, &format!("host={}", who.host));
                    }
                    string(
                        proc,
                        PROCESS_LABELS,
                        &format!("start_unix_ns={}", who.start_unix_ns),
                    );
                });
            });
        });
        let (memory, process) = (memory_uuid(pid), process_uuid(pid));
        counters::describe(
            out,
            memory,
            process,
            "Resident memory",
            counters::Unit::Bytes,
        );
        packet(out, |p| {
            uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
            message(p, TRACK_DESCRIPTOR, |d| {
                uint(d, TD_UUID, marker_uuid(pid));
                uint(d, TD_PARENT_UUID, process_uuid(pid));
                string(d, TD_NAME, "Live print");
            });
        });
        Perfetto {
            pid,
            calls: Vec::new(),
            memory: None,
            markers: None,
            absolute: None,
            cpu_tracks: Vec::new(),
            heap_track: false,
            lock_tracks: std::collections::HashSet::new(),
            interval_tracks: Vec::new(),
            counter_tracks: std::collections::HashMap::new(),
            path_track: false,
            next_sequence: FIRST_CALL_SEQUENCE,
            sections: Vec::new(),
        }
    }

    /// A thread's track, before its first call.
    pub(crate) fn thread(&mut self, out: &mut Vec<u8>, index: u32, name: &str) {
        let pid = self.pid;
        packet(out, |p| {
            uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
            message(p, TRACK_DESCRIPTOR, |d| {
                uint(d, TD_UUID, thread_uuid(pid, index));
                uint(d, TD_PARENT_UUID, process_uuid(pid));
                message(d, TD_THREAD, |t| {
                    uint(t, THREAD_PID, pid as u64);
                    uint(t, THREAD_TID, tid(index));
                    string(t, THREAD_NAME, name);
                });
            });
        });
    }

    /// One section call: its begin and end on the sequence of its thread and depth.
    pub(crate) fn call(
        &mut self,
        out: &mut Vec<u8>,
        call: &Call,
        text: &dyn Fn(SectionId) -> SectionText,
    ) {
        let seq = call_sequence(
            &mut self.calls,
            &mut self.next_sequence,
            self.pid,
            out,
            call,
        );
        let section = call.section;
        let i = section as usize;
        if self.sections.len() <= i {
            self.sections.resize_with(i + 1, || None);
        }
        let info = self.sections[i].get_or_insert_with(|| text(section));
        if seq.interned.len() <= i {
            seq.interned.resize(i + 1, false);
        }
        let new_name = !seq.interned[i];
        seq.interned[i] = true;
        let level = info.level.min(7);
        let new_category = seq.categories & (1 << level) == 0;
        seq.categories |= 1 << level;
        let start = call.start_ns.max(seq.last_ns);
        let end = call.end_ns.max(start);
        if !new_name
            && !new_category
            && info.message.is_none()
            && !call.unfinished
            && call.cpu.is_none()
            && call.args.is_empty()
        {
            // Nearly every call: the two packets written straight, without the general encoder's length
            // patching (the same bytes; the background thread's time per call is what keeps a trace
            // lossless).
            begin_packet(
                out,
                start - seq.last_ns,
                seq.id,
                level as u64 + 1,
                section as u64,
            );
            end_packet(out, end - start, seq.id);
            seq.last_ns = end;
            return;
        }
        packet(out, |p| {
            uint(p, TIMESTAMP, start - seq.last_ns);
            uint(p, SEQUENCE_ID, seq.id as u64);
            if new_name || new_category {
                message(p, INTERNED_DATA, |d| {
                    interned_data(d, info, section, level, new_name, new_category)
                });
            }
            message(p, TRACK_EVENT, |e| begin_event(e, call, info, level));
        });
        packet(out, |p| {
            uint(p, TIMESTAMP, end - start);
            uint(p, SEQUENCE_ID, seq.id as u64);
            message(p, TRACK_EVENT, |e| uint(e, EV_TYPE, SLICE_END));
        });
        seq.last_ns = end;
    }

    /// The sequence of absolute-time events, opened on first use.
    fn absolute(&mut self, out: &mut Vec<u8>, ts_ns: u64) -> u32 {
        let pid = self.pid;
        self.absolute
            .get_or_insert_with(|| open_sequence(out, ABSOLUTE_SEQUENCE, process_uuid(pid), ts_ns))
            .id
    }
}

/// The sequence of `call`'s thread and depth in `calls`, opened (numbered from `next_sequence`) on the
/// first call there.
fn call_sequence<'a>(
    calls: &'a mut Vec<Vec<Option<Sequence>>>,
    next_sequence: &mut u32,
    pid: u32,
    out: &mut Vec<u8>,
    call: &Call,
) -> &'a mut Sequence {
    let (thread, depth) = (call.thread as usize, call.depth as usize);
    if calls.len() <= thread {
        calls.resize_with(thread + 1, Vec::new);
    }
    let depths = &mut calls[thread];
    if depths.len() <= depth {
        depths.resize_with(depth + 1, || None);
    }
    match &mut depths[depth] {
        Some(seq) => seq,
        slot => {
            let id = *next_sequence;
            *next_sequence += 1;
            slot.insert(open_sequence(
                out,
                id,
                thread_uuid(pid, call.thread),
                call.start_ns,
            ))
        }
    }
}

/// A call's `InternedData` on its sequence: its level's category (`new_category`), and its section's name
/// with its live message if it has one (`new_name`).
fn interned_data(
    d: &mut Vec<u8>,
    info: &SectionText,
    section: SectionId,
    level: u8,
    new_name: bool,
    new_category: bool,
) {
    if new_category {
        message(d, INTERNED_CATEGORIES, |c| {
            uint(c, ENTRY_IID, level as u64 + 1);
            string(c, ENTRY_TEXT, &format!("level {level}"));
        });
    }
    if new_name {
        message(d, INTERNED_EVENT_NAMES, |n| {
            uint(n, ENTRY_IID, section as u64);
            string(n, ENTRY_TEXT, &info.name);
        });
        if let Some(text) = &info.message {
            // DebugAnnotationName and the message as an interned string value.
            message(d, INTERNED_ANNOTATION_NAMES, |n| {
                uint(n, ENTRY_IID, MESSAGE_IID);
                string(n, ENTRY_TEXT, "message");
            });
            message(d, INTERNED_STRING_VALUES, |s| {
                uint(s, ENTRY_IID, section as u64);
                string(s, ENTRY_TEXT, text);
            });
        }
    }
}

/// A call's `TYPE_SLICE_BEGIN` event: its category and name (interned), its live message, CPU figures,
/// whether it was unfinished and its args as debug annotations.
fn begin_event(e: &mut Vec<u8>, call: &Call, info: &SectionText, level: u8) {
    let section = call.section;
    uint(e, EV_CATEGORY_IIDS, level as u64 + 1);
    uint(e, EV_TYPE, SLICE_BEGIN);
    uint(e, EV_NAME_IID, section as u64);
    if info.message.is_some() {
        message(e, EV_DEBUG, |a| {
            uint(a, ANN_NAME_IID, MESSAGE_IID);
            uint(a, ANN_STRING_IID, section as u64);
        });
    }
    for (name, value) in call.cpu.iter().flat_map(CpuFigures::written) {
        message(e, EV_DEBUG, |a| {
            string(a, ANN_NAME, name);
            uint(a, ANN_UINT, value);
        });
    }
    if call.unfinished {
        message(e, EV_DEBUG, |a| {
            string(a, ANN_NAME, "unfinished");
            uint(a, ANN_BOOL, 1);
        });
    }
    debug_args(e, info.args.iter().copied().zip(call.args));
}

impl Encoder for Perfetto {
    fn thread(&mut self, out: &mut Vec<u8>, index: u32, name: &str) {
        Perfetto::thread(self, out, index, name);
    }
    fn call(&mut self, out: &mut Vec<u8>, call: &Call, text: &dyn Fn(SectionId) -> SectionText) {
        Perfetto::call(self, out, call, text);
    }
    fn memory(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        Perfetto::memory(self, out, ts_ns, bytes);
    }
    fn heap(&mut self, out: &mut Vec<u8>, ts_ns: u64, bytes: u64) {
        Perfetto::heap(self, out, ts_ns, bytes);
    }
    fn mark(&mut self, out: &mut Vec<u8>, mark: &Mark, name: &str) {
        Perfetto::mark(self, out, mark, name);
    }
    fn counter(&mut self, out: &mut Vec<u8>, ts_ns: u64, name: &str, value: f64) {
        Perfetto::counter(self, out, ts_ns, name, value);
    }
    fn lock_slice(&mut self, out: &mut Vec<u8>, slice: &LockSlice) {
        Perfetto::lock_slice(self, out, slice);
    }
    fn lock_flow(&mut self, out: &mut Vec<u8>, flow: &LockFlow) {
        Perfetto::lock_flow(self, out, flow);
    }
    fn interval(&mut self, out: &mut Vec<u8>, interval: &Interval, _name: &str) {
        // Its tracks name the thread by their parent, the thread's track.
        Perfetto::interval(self, out, interval);
    }
    fn cpu(&mut self, out: &mut Vec<u8>, ts_ns: u64, thread: u32, _name: &str, percent: u64) {
        // Its counter track names the thread by its track, not by name.
        Perfetto::cpu(self, out, ts_ns, thread, percent);
    }
    fn path_piece(&mut self, out: &mut Vec<u8>, piece: &PathPiece) {
        Perfetto::path_piece(self, out, piece);
    }
    fn marker(&mut self, out: &mut Vec<u8>, ts_ns: u64, text: &str) {
        Perfetto::marker(self, out, ts_ns, text);
    }
    fn footer(&mut self, out: &mut Vec<u8>, summary: &Summary) {
        Perfetto::footer(self, out, summary);
    }
    fn padding(&self) -> (usize, fn(&mut Vec<u8>, usize)) {
        (packets::MIN_PAD, packets::pad)
    }
    fn packs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_direct_packets_are_the_encoders_bytes() {
        for (delta, seq, category, name) in
            [(0, 4, 1, 1), (300, 200, 4, 70_000), (u64::MAX, 9, 2, 5)]
        {
            let mut general = Vec::new();
            super::packet(&mut general, |p| {
                super::uint(p, super::TIMESTAMP, delta);
                super::uint(p, super::SEQUENCE_ID, seq as u64);
                super::message(p, super::TRACK_EVENT, |e| {
                    super::uint(e, super::EV_CATEGORY_IIDS, category);
                    super::uint(e, super::EV_TYPE, super::SLICE_BEGIN);
                    super::uint(e, super::EV_NAME_IID, name);
                });
            });
            super::packet(&mut general, |p| {
                super::uint(p, super::TIMESTAMP, delta);
                super::uint(p, super::SEQUENCE_ID, seq as u64);
                super::message(p, super::TRACK_EVENT, |e| {
                    super::uint(e, super::EV_TYPE, super::SLICE_END)
                });
            });
            let mut direct = Vec::new();
            super::begin_packet(&mut direct, delta, seq, category, name);
            super::end_packet(&mut direct, delta, seq);
            assert_eq!(direct, general);
        }
    }
}
