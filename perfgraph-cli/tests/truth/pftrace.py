#!/usr/bin/env python3
"""The truth harness's reader of a perfgraph .pftrace (tests/truth.rs): decodes it with Perfetto's own
message classes (`perfetto_trace_pb2` from the `perfetto` package, with Google's `protobuf` runtime: not
perfgraph's decoder) and prints every slice, instant and counter value with its time, as JSON.

    python3 perfgraph-cli/tests/truth/pftrace.py run.pftrace

It applies what trace processor applies: compressed bundles inflated in place (Python's zlib), padding
packets skipped, the sequence-scoped incremental clock 64 of each sequence's ClockSnapshot, absolute
BOOTTIME timestamps where a packet says so, interned names, categories and debug-annotation names and
strings per sequence, the default track from TracePacketDefaults. Each begin is paired with the next end
on the same sequence and track (a sequence holds one depth of one thread, whose calls never overlap; a
future's track holds its one slice).

Output: {"threads": {uuid: name}, "slices": [[thread, name, start_ns, dur_ns, args]] (sections, on thread
tracks), "locks": [[thread, name, start_ns, dur_ns, args]] (tracks `lock: <name>` under a thread),
"futures": [[name, start_ns, dur_ns, args]], "events": [[thread, name, ts_ns, args]] (instants on thread
tracks), "markers": [[name, ts_ns]] (live print's track), "counters": {name: [value, ...]} (the process's
counter tracks, in file order), "end": {annotations..., "ts_ns"}}.
"""

import io
import json
import sys
import zlib
from collections import defaultdict

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent
DELTA_CLOCK = 64
BOOTTIME = 6
MAX_PACKET = 64 << 20


def varint(read):
    value = 0
    for shift in range(0, 64, 7):
        b = read(1)
        if not b:
            if shift == 0:
                return None
            fail("the trace ends in the middle of a varint")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
    fail("a varint longer than 10 bytes")


def packets(f):
    """Each `Trace.packet` of the stream `f`, parsed, with compressed bundles inflated in place."""
    while True:
        tag = varint(f.read)
        if tag is None:
            return
        if tag != 0x0A:
            fail(f"unknown field in Trace: tag {tag:#x}")
        n = varint(f.read)
        data = f.read(n)
        if len(data) < n:
            fail("the trace ends in the middle of a packet")
        p = pb.TracePacket()
        p.ParseFromString(data)
        fields = [fd.name for fd, _ in p.ListFields()]
        if fields == ["synchronization_marker"]:
            continue
        if p.HasField("compressed_packets"):
            z = zlib.decompressobj()
            inflated = z.decompress(p.compressed_packets, MAX_PACKET)
            yield from packets(io.BytesIO(inflated))
            continue
        yield p


def annotation_value(a, seq):
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return seq["strings"].get(a.string_value_iid)
    if kind is None:
        return a.uint_value
    v = getattr(a, kind)
    if kind == "double_value" and v != v:
        return "NaN"
    return v


def main():
    tracks = {}  # uuid -> description
    seqs = {}
    # (sequence, track) -> [(ts, arrival, begin?, name, args)]
    slice_events = defaultdict(list)
    events, markers = [], []
    counters = defaultdict(list)
    end = None
    order = 0
    with open(sys.argv[1], "rb") as f:
        for p in packets(f):
            if p.HasField("track_descriptor"):
                d = p.track_descriptor
                desc = {"name": d.name}
                if d.HasField("thread"):
                    desc["thread"] = d.thread.thread_name
                if d.HasField("process"):
                    desc["process"] = d.process.process_name
                if d.HasField("counter"):
                    desc["counter"] = True
                if d.HasField("parent_uuid"):
                    desc["parent"] = d.parent_uuid
                tracks[d.uuid] = desc
                continue
            seq_id = p.trusted_packet_sequence_id
            if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
                seq = {"last": None, "names": {}, "strings": {}, "ann_names": {}, "track": None}
                for c in p.clock_snapshot.clocks:
                    if c.clock_id == DELTA_CLOCK:
                        seq["last"] = c.timestamp
                seq["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
                seqs[seq_id] = seq
                if not p.HasField("track_event"):
                    continue
            seq = seqs.get(seq_id)
            if seq is None:
                fail(f"a packet on sequence {seq_id} before its state was set")
            for n in p.interned_data.event_names:
                seq["names"][n.iid] = n.name
            for s in p.interned_data.debug_annotation_string_values:
                seq["strings"][s.iid] = s.str.decode()
            for n in p.interned_data.debug_annotation_names:
                seq["ann_names"][n.iid] = n.name
            if not p.HasField("track_event"):
                continue
            if p.HasField("timestamp_clock_id") and p.timestamp_clock_id == BOOTTIME:
                ts = p.timestamp
            else:
                if seq["last"] is None:
                    fail(f"sequence {seq_id} has no delta clock")
                ts = seq["last"] + p.timestamp
                seq["last"] = ts
            e = p.track_event
            uuid = e.track_uuid if e.HasField("track_uuid") else seq["track"]
            track = tracks.get(uuid)
            if track is None:
                fail(f"an event on the undescribed track {uuid}")
            parent = tracks.get(track.get("parent"), {})
            if e.type == TE.TYPE_COUNTER:
                if "thread" not in parent:
                    counters[track["name"]].append(e.double_counter_value)
                continue
            name = seq["names"].get(e.name_iid) if e.HasField("name_iid") else e.name
            args = {}
            for a in e.debug_annotations:
                key = seq["ann_names"].get(a.name_iid, "message") if a.HasField("name_iid") else a.name
                args[key] = annotation_value(a, seq)
            if e.type == TE.TYPE_INSTANT:
                if name == "perfgraph trace end":
                    end = dict(args, ts_ns=ts)
                elif e.flow_ids or e.terminating_flow_ids:
                    pass
                elif "thread" in track:
                    events.append([track["thread"], name, ts, args])
                else:
                    markers.append([name, ts])
                continue
            if e.type in (TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END):
                begin = e.type == TE.TYPE_SLICE_BEGIN
                slice_events[(seq_id, uuid)].append((ts, order, begin, name, args))
                order += 1
    slices, locks, futures = [], [], []
    for (seq_id, uuid), evs in slice_events.items():
        track = tracks[uuid]
        parent = tracks.get(track.get("parent"), {})
        evs.sort(key=lambda x: x[:2])
        stack = []
        for ts, _, begin, name, args in evs:
            if begin:
                stack.append((ts, name, args))
                continue
            if not stack:
                fail(f"an end without a begin on {track} at {ts}")
            start, name, args = stack.pop()
            if "thread" in track:
                slices.append([track["thread"], name, start, ts - start, args])
            elif track["name"].startswith("lock: ") and "thread" in parent:
                locks.append([parent["thread"], name, start, ts - start, args])
            else:
                futures.append([name, start, ts - start, args])
        if stack:
            fail(f"slices left open on {track}: {stack}")
    threads = {str(u): t["thread"] for u, t in tracks.items() if "thread" in t}
    json.dump({"threads": threads, "slices": slices, "locks": locks, "futures": futures,
               "events": events, "markers": markers, "counters": counters, "end": end}, sys.stdout)


def fail(message):
    print(f"pftrace.py: {message}", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
