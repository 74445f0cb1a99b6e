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
//!   order;
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
mod locks;
pub(crate) mod packets;
pub(super) mod wire;

use super::trace::{
    Call, Encoder, Identity, LockFlow, LockSlice, Mark, MarkKind, SectionText, Summary, arg_key,
};
use crate::base::registry::SectionId;
use crate::data::args::ArgValue;
use crate::data::figures::CpuFigures;
use wire::{begin_packet, end_packet, fixed64, message, packet, string, uint};

/// `Trace.packet`.
const TRACE_PACKET: u32 = 1;

// TracePacket.
const TIMESTAMP: u32 = 8;
const TIMESTAMP_CLOCK_ID: u32 = 58;
const SEQUENCE_ID: u32 = 10;
const SEQUENCE_FLAGS: u32 = 13;
const TRACK_EVENT: u32 = 11;
const TRACK_DESCRIPTOR: u32 = 60;
const INTERNED_DATA: u32 = 12;
const DEFAULTS: u32 = 59;
const CLOCK_SNAPSHOT: u32 = 6;
/// `SEQ_INCREMENTAL_STATE_CLEARED`.
const STATE_CLEARED: u64 = 1;

// TrackEvent.
const EV_TYPE: u32 = 9;
const EV_NAME_IID: u32 = 10;
const EV_NAME: u32 = 23;
const EV_CATEGORY_IIDS: u32 = 3;
const EV_DEBUG: u32 = 4;
const EV_COUNTER_VALUE: u32 = 30;
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const INSTANT: u64 = 3;
const COUNTER: u64 = 4;

/// The sequence-scoped incremental clock every sequence defines.
const DELTA_CLOCK: u64 = 64;
/// `BuiltinClocks.BOOTTIME`, the clock our nanoseconds are given in.
const BOOTTIME: u64 = 6;

/// The debug annotation name of a section's live message (interned iid 1 on each sequence).
const MESSAGE_IID: u64 = 1;
/// Sequence ids below this are the fixed ones; (thread, depth) sequences are numbered from it.
const FIRST_CALL_SEQUENCE: u32 = 5;
const META_SEQUENCE: u32 = 1;
const MEMORY_SEQUENCE: u32 = 2;
const MARKER_SEQUENCE: u32 = 3;
/// Futures' lives, instant events and CPU counters: absolute timestamps.
const ABSOLUTE_SEQUENCE: u32 = 4;
// TrackEvent.track_uuid.
const EV_TRACK_UUID: u32 = 11;

/// A debug annotation for each arg (`DebugAnnotation`: name 10; bool 2, uint 3, int 4, double 5, string 6),
/// named as the Chrome format names them ([`arg_key`]).
fn debug_args<'a>(e: &mut Vec<u8>, args: impl Iterator<Item = (&'a str, &'a ArgValue)>) {
    for (name, value) in args {
        message(e, EV_DEBUG, |a| {
            string(a, 10, &arg_key(name));
            match value {
                ArgValue::Bool(v) => uint(a, 2, *v as u64),
                ArgValue::Uint(v) => uint(a, 3, *v),
                ArgValue::Int(v) => uint(a, 4, *v as u64),
                ArgValue::Float(v) => fixed64(a, 5, v.to_bits()),
                ArgValue::Text(t) => string(a, 6, t),
            }
        });
    }
}

/// One sequence's incremental state.
#[derive(Debug)]
struct Sequence {
    id: u32,
    /// The timestamp of its last packet (ns), which the next one's delta is from.
    last_ns: u64,
    /// By section id: whether its name (and message) was interned on this sequence.
    interned: Vec<bool>,
    /// Levels whose category was interned (bit `level`).
    categories: u8,
}

impl Sequence {
    /// One TrackEvent (`body` writes its fields) at `ts_ns`, or at the sequence's last timestamp if that is
    /// later (timestamps on a sequence are deltas, which never go back).
    fn event(&mut self, out: &mut Vec<u8>, ts_ns: u64, body: impl FnOnce(&mut Vec<u8>)) {
        let ts = ts_ns.max(self.last_ns);
        packet(out, |p| {
            uint(p, TIMESTAMP, ts - self.last_ns);
            uint(p, SEQUENCE_ID, self.id as u64);
            message(p, TRACK_EVENT, body);
        });
        self.last_ns = ts;
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
    next_sequence: u32,
    /// By section id: its text, once asked for.
    sections: Vec<Option<SectionText>>,
}

fn process_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0000
}

fn thread_uuid(pid: u32, index: u32) -> u64 {
    (pid as u64) << 32 | index as u64
}

fn memory_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0001
}

fn marker_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0002
}

fn heap_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0003
}

/// The track of the `n`th counter (in order of first value): a fixed track of the process, numbered
/// above the other fixed ones.
fn counter_uuid(pid: u32, n: u32) -> u64 {
    (pid as u64) << 32 | (0x8000_0100 + n as u64)
}

/// The interval statistics' two tracks of thread `index` (calls per second, share in sections): thread
/// tracks with bit 61, and 61 and 60, set (as the CPU track has bit 62).
fn interval_uuids(pid: u32, index: u32) -> (u64, u64) {
    let t = thread_uuid(pid, index);
    (t | 1 << 61, t | 1 << 61 | 1 << 60)
}

fn cpu_uuid(pid: u32, index: u32) -> u64 {
    // Thread tracks take the low half's values below 2^31, the fixed tracks 2^31 and up: CPU tracks are
    // thread tracks with bit 62 set.
    thread_uuid(pid, index) | 1 << 62
}

/// The track of the future `id`: a hash of it and the pid (splitmix64), bit 63 set so it meets no other
/// track's uuid.
fn future_uuid(pid: u32, id: u64) -> u64 {
    let mut z = id ^ ((pid as u64) << 32).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1 << 63
}

/// The thread id shown for thread `index` (as in the Chrome trace).
fn tid(index: u32) -> u64 {
    index as u64 + 1
}

impl Perfetto {
    /// The start of the file: the process track, the memory counter track and the live print track.
    pub(crate) fn header(out: &mut Vec<u8>, who: &Identity) -> Perfetto {
        let pid = who.pid;
        packet(out, |p| {
            uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
            message(p, TRACK_DESCRIPTOR, |d| {
                uint(d, 1, process_uuid(pid));
                message(d, 3, |proc| {
                    uint(proc, 1, pid as u64);
                    string(proc, 6, &who.program);
                    // ProcessDescriptor.process_labels.
                    string(proc, 8, &format!("rank={}", who.rank));
                    if !who.host.is_empty() {
                        string(proc, 8, &format!("host={}", who.host));
                    }
                    string(proc, 8, &format!("start_unix_ns={}", who.start_unix_ns));
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
                uint(d, 1, marker_uuid(pid));
                uint(d, 5, process_uuid(pid));
                string(d, 2, "Live print");
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
                uint(d, 1, thread_uuid(pid, index));
                uint(d, 5, process_uuid(pid));
                message(d, 4, |t| {
                    uint(t, 1, pid as u64);
                    uint(t, 2, tid(index));
                    string(t, 5, name);
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
        let pid = self.pid;
        let (thread, depth) = (call.thread as usize, call.depth as usize);
        if self.calls.len() <= thread {
            self.calls.resize_with(thread + 1, Vec::new);
        }
        let depths = &mut self.calls[thread];
        if depths.len() <= depth {
            depths.resize_with(depth + 1, || None);
        }
        let seq = match &mut depths[depth] {
            Some(seq) => seq,
            slot => {
                let id = self.next_sequence;
                self.next_sequence += 1;
                slot.insert(open_sequence(
                    out,
                    id,
                    thread_uuid(pid, call.thread),
                    call.start_ns,
                ))
            }
        };
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
                    if new_category {
                        message(d, 1, |c| {
                            uint(c, 1, level as u64 + 1);
                            string(c, 2, &format!("level {level}"));
                        });
                    }
                    if new_name {
                        message(d, 2, |n| {
                            uint(n, 1, section as u64);
                            string(n, 2, &info.name);
                        });
                        if let Some(text) = &info.message {
                            // DebugAnnotationName and the message as an interned string value.
                            message(d, 3, |n| {
                                uint(n, 1, MESSAGE_IID);
                                string(n, 2, "message");
                            });
                            message(d, 29, |s| {
                                uint(s, 1, section as u64);
                                string(s, 2, text);
                            });
                        }
                    }
                });
            }
            message(p, TRACK_EVENT, |e| {
                uint(e, EV_CATEGORY_IIDS, level as u64 + 1);
                uint(e, EV_TYPE, SLICE_BEGIN);
                uint(e, EV_NAME_IID, section as u64);
                if info.message.is_some() {
                    message(e, EV_DEBUG, |a| {
                        uint(a, 1, MESSAGE_IID);
                        uint(a, 17, section as u64);
                    });
                }
                for (name, value) in call.cpu.iter().flat_map(CpuFigures::written) {
                    message(e, EV_DEBUG, |a| {
                        string(a, 10, name);
                        // DebugAnnotation.uint_value.
                        uint(a, 3, value);
                    });
                }
                if call.unfinished {
                    message(e, EV_DEBUG, |a| {
                        string(a, 10, "unfinished");
                        // DebugAnnotation.bool_value.
                        uint(a, 2, 1);
                    });
                }
                debug_args(e, info.args.iter().copied().zip(call.args));
            });
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

    /// A future's life (a slice on a track of its own, described here) or an instant event on its
    /// thread's track (named before, [`Perfetto::thread`]); `name` is its section's name.
    pub(crate) fn mark(&mut self, out: &mut Vec<u8>, mark: &Mark, name: &str) {
        let pid = self.pid;
        let seq = self.absolute(out, mark.start_ns);
        match &mark.kind {
            MarkKind::Life { id, cancelled } => {
                let track = future_uuid(pid, *id);
                packet(out, |p| {
                    uint(p, SEQUENCE_ID, META_SEQUENCE as u64);
                    message(p, TRACK_DESCRIPTOR, |d| {
                        uint(d, 1, track);
                        uint(d, 5, process_uuid(pid));
                        string(d, 2, name);
                    });
                });
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, SLICE_BEGIN);
                    uint(e, EV_TRACK_UUID, track);
                    string(e, EV_NAME, name);
                    message(e, EV_DEBUG, |a| {
                        string(a, 10, "id");
                        uint(a, 3, *id);
                    });
                    message(e, EV_DEBUG, |a| {
                        string(a, 10, "cancelled");
                        uint(a, 2, *cancelled as u64);
                    });
                    debug_args(e, mark.args.iter().map(|(n, v)| (*n, v)));
                });
                absolute_event(out, seq, mark.end_ns.max(mark.start_ns), |e| {
                    uint(e, EV_TYPE, SLICE_END);
                    uint(e, EV_TRACK_UUID, track);
                });
            }
            MarkKind::Event => {
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, INSTANT);
                    uint(e, EV_TRACK_UUID, thread_uuid(pid, mark.thread));
                    string(e, EV_NAME, name);
                    debug_args(e, mark.args.iter().map(|(n, v)| (*n, v)));
                });
            }
            MarkKind::Instant(text) => {
                absolute_event(out, seq, mark.start_ns, |e| {
                    uint(e, EV_TYPE, INSTANT);
                    uint(e, EV_TRACK_UUID, thread_uuid(pid, mark.thread));
                    string(e, EV_NAME, text);
                    message(e, EV_DEBUG, |a| {
                        string(a, 10, "span");
                        string(a, 6, name);
                    });
                });
            }
        }
    }

    /// Live print printed `text` (one line) at `ts_ns`: an instant event on the live print track.
    pub(crate) fn marker(&mut self, out: &mut Vec<u8>, ts_ns: u64, text: &str) {
        let pid = self.pid;
        let seq = self
            .markers
            .get_or_insert_with(|| open_sequence(out, MARKER_SEQUENCE, marker_uuid(pid), ts_ns));
        seq.event(out, ts_ns, |e| {
            uint(e, EV_TYPE, INSTANT);
            string(e, EV_NAME, text);
        });
    }

    /// The end of a complete trace: the `perfgraph trace end` instant event on the live print track, its
    /// debug annotations stating what is missing.
    pub(crate) fn footer(&mut self, out: &mut Vec<u8>, summary: &Summary) {
        let pid = self.pid;
        let seq = self.markers.get_or_insert_with(|| {
            open_sequence(out, MARKER_SEQUENCE, marker_uuid(pid), summary.end_ns)
        });
        let losses = &summary.losses;
        let sentence = losses.sentence();
        seq.event(out, summary.end_ns, |e| {
            uint(e, EV_TYPE, INSTANT);
            string(e, EV_NAME, "perfgraph trace end");
            let mut annotate = |name: &str, value: u64| {
                message(e, EV_DEBUG, |a| {
                    string(a, 10, name);
                    uint(a, 3, value);
                });
            };
            annotate("events", summary.calls);
            annotate("unfinished", summary.unfinished);
            annotate("dropped_past_trace_limit", losses.past_limit);
            annotate("dropped_unwritten", losses.unwritten);
            annotate("dropped_ring_overflow", losses.ring_overflow_total());
            annotate("threads_without_ring", losses.unmapped_ring_threads);
            if let Some(limit) = losses.limit {
                annotate("trace_limit_bytes", limit);
            }
            for (name, n) in &losses.ring_overflow {
                annotate(&format!("dropped_ring_overflow.{name}"), *n);
            }
            let mut text = |name: &str, value: &str| {
                message(e, EV_DEBUG, |a| {
                    string(a, 10, name);
                    string(a, 6, value);
                });
            };
            text("clock", summary.clock);
            if !sentence.is_empty() {
                text("missing", &format!("perfgraph: {sentence}"));
            }
        });
    }
}

/// The first packet of a sequence: its incremental state cleared, the delta clock defined from `base_ns`,
/// One `TrackEvent` (its fields written by `body`) at `ts_ns`, an absolute BOOTTIME timestamp, on the
/// sequence `seq` of absolute-time events (marks, counters): they do not arrive in time order, so they are
/// not delta-encoded.
fn absolute_event(out: &mut Vec<u8>, seq: u32, ts_ns: u64, body: impl FnOnce(&mut Vec<u8>)) {
    packet(out, |p| {
        uint(p, TIMESTAMP, ts_ns);
        uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
        uint(p, SEQUENCE_ID, seq as u64);
        message(p, TRACK_EVENT, body);
    });
}

/// and `track` as the default track of its events.
fn open_sequence(out: &mut Vec<u8>, id: u32, track: u64, base_ns: u64) -> Sequence {
    packet(out, |p| {
        uint(p, TIMESTAMP, base_ns);
        uint(p, TIMESTAMP_CLOCK_ID, BOOTTIME);
        uint(p, SEQUENCE_ID, id as u64);
        uint(p, SEQUENCE_FLAGS, STATE_CLEARED);
        message(p, CLOCK_SNAPSHOT, |s| {
            message(s, 1, |c| {
                uint(c, 1, DELTA_CLOCK);
                uint(c, 2, base_ns);
                uint(c, 3, 1);
            });
            message(s, 1, |c| {
                uint(c, 1, BOOTTIME);
                uint(c, 2, base_ns);
            });
        });
        message(p, DEFAULTS, |d| {
            uint(d, TIMESTAMP_CLOCK_ID, DELTA_CLOCK);
            // TrackEventDefaults.track_uuid.
            message(d, 11, |t| uint(t, 11, track));
        });
    });
    Sequence {
        id,
        last_ns: base_ns,
        interned: Vec::new(),
        categories: 0,
    }
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
    fn interval(
        &mut self,
        out: &mut Vec<u8>,
        ts_ns: u64,
        thread: u32,
        _name: &str,
        per_second: f64,
        busy_percent: f64,
    ) {
        // Its tracks name the thread by their parent, the thread's track.
        Perfetto::interval(self, out, ts_ns, thread, per_second, busy_percent);
    }
    fn cpu(&mut self, out: &mut Vec<u8>, ts_ns: u64, thread: u32, _name: &str, percent: u64) {
        // Its counter track names the thread by its track, not by name.
        Perfetto::cpu(self, out, ts_ns, thread, percent);
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
