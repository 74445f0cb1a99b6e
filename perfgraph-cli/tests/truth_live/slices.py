#!/usr/bin/env python3
"""The slices of a perfgraph .pftrace, decoded with Perfetto's own classes, as JSON.

    python3 slices.py CHECK_TRACE_PY TRACE.pftrace

It reads the trace with perfgraph-core/tests/perfetto/check_trace.py (given as the first argument), which
decodes every packet with `perfetto_trace_pb2` (PyPI's `perfetto`) and applies what trace processor
applies (incremental timestamps, interned names, default tracks, compressed bundles), then pairs each
thread track's begins and ends into slices, as trace processor nests them. It prints
{"slices": [{"thread", "name", "ts_ns", "dur_ns"}, ...], "end": <the closing event's args and time>}.
"""

import importlib.util
import json
import sys


def main():
    spec = importlib.util.spec_from_file_location("check_trace", sys.argv[1])
    ct = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ct)
    state = ct.State(False)
    with open(sys.argv[2], "rb") as f:
        for p in ct.packets(f, False, "Trace"):
            for q in ct.expand(p, state.counts):
                state.packet(q)
    slices = []
    current, stack = None, []
    for index, ts, begin, _, name_id in state.runs.sorted():
        if index != current:
            if stack:
                ct.fail(f"slices left open on {state.desc_of(current)}: {stack}")
            current, stack = index, []
        if begin:
            stack.append((ts, state.name_list[name_id]))
            continue
        if not stack:
            ct.fail(f"an end without a begin on {state.desc_of(index)} at {ts}")
        start, name = stack.pop()
        thread = state.desc_of(index).get("thread")
        slices.append({"thread": thread, "name": name, "ts_ns": start, "dur_ns": ts - start})
    if stack:
        ct.fail(f"slices left open on {state.desc_of(current)}: {stack}")
    if state.end is None:
        ct.fail("no closing event")
    json.dump({"slices": slices, "end": state.end}, sys.stdout)


if __name__ == "__main__":
    main()
