//! `perfgraph trace <pid> --seconds 2`, a window around one phase of the held program, in both formats
//! (the Perfetto one decoded by Perfetto's own Python classes when they are installed): the phase's 5
//! sleeps, each duration and each start (from the first) within the tolerance of the truth (between the
//! bounds its inner and outer intervals give), and its 1,000 ticks exactly.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::Reaped;
use crate::common::truth::{Call, Truth, Worst};
use crate::held::{CLI, Held, wait, wait_for_file};

/// One slice of the window.
#[derive(Debug, Clone)]
pub struct Slice {
    pub name: String,
    pub thread: String,
    pub ts_ns: i64,
    pub dur_ns: u64,
}

/// What a window holds: its slices and its closing event's args.
pub struct Window {
    pub slices: Vec<Slice>,
    pub end: Value,
}

/// Records a 2 s window into `name` (in the held program's directory) around one phase: the phase is
/// asked for once the window's file exists (the window is open: the file is made at its first bytes).
pub fn around_phase(held: &mut Held, name: &str) -> PathBuf {
    let path = held.path(name);
    let mut trace = Reaped(
        Command::new(CLI)
            .env("XDG_RUNTIME_DIR", &held.dir)
            .args(["trace", &held.pid_arg(), "--seconds", "2", "-o"])
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for_file(&path, &mut trace);
    held.phase();
    let status = wait(&mut trace, "perfgraph trace");
    assert!(status.success(), "perfgraph trace {name}: {status:?}");
    path
}

/// A Chrome JSON window: its complete slices (`X` events) with their threads' names.
pub fn chrome(path: &Path) -> Window {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let events = v
        .as_array()
        .or_else(|| v["traceEvents"].as_array())
        .unwrap();
    let threads: HashMap<u64, String> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let us = |v: &Value| (v.as_f64().unwrap() * 1000.0).round();
    let slices = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| Slice {
            name: e["name"].as_str().unwrap().to_owned(),
            thread: threads
                .get(&e["tid"].as_u64().unwrap())
                .cloned()
                .unwrap_or_default(),
            ts_ns: us(&e["ts"]) as i64,
            dur_ns: us(&e["dur"]) as u64,
        })
        .collect();
    let end = events
        .iter()
        .rev()
        .find(|e| e["name"] == "perfgraph trace end")
        .map_or(Value::Null, |e| e["args"].clone());
    Window { slices, end }
}

/// A Perfetto window, decoded by Perfetto's classes (`slices.py` over `check_trace.py`); `None`, said
/// loudly, when no Python has them.
pub fn perfetto(path: &Path) -> Option<Window> {
    let Some(python) = crate::common::python_with(
        "PERFETTO_CHECK_PYTHON",
        "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    ) else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "note: truth_live: the Perfetto trace window was NOT checked: no Python with the `perfetto` \
             and `protobuf` packages (set PERFETTO_CHECK_PYTHON; .ci/run does)"
        );
        return None;
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = crate::held::output(
        Command::new(python)
            .arg(here.join("tests/truth_live/slices.py"))
            .arg(here.join("../perfgraph-core/tests/perfetto/check_trace.py"))
            .arg(path),
    );
    assert!(
        out.status.success(),
        "slices.py {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let slices = v["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Slice {
            name: s["name"].as_str().unwrap().to_owned(),
            thread: s["thread"].as_str().unwrap_or("").to_owned(),
            ts_ns: s["ts_ns"].as_i64().unwrap(),
            dur_ns: s["dur_ns"].as_u64().unwrap(),
        })
        .collect();
    Some(Window {
        slices,
        end: v["end"].clone(),
    })
}

/// The last phase's calls in the truth: the phase and its sleeps, in order.
pub fn last_phase(truth: &Truth) -> (Call, Vec<Call>) {
    let phase = (*truth.calls_of("phase").last().unwrap()).clone();
    let mut sleeps: Vec<Call> = truth
        .calls_of("phase_sleep")
        .into_iter()
        .filter(|c| c.start_ns >= phase.start_ns && c.end_ns <= phase.end_ns)
        .cloned()
        .collect();
    sleeps.sort_by_key(|c| c.start_ns);
    (phase, sleeps)
}

/// The window around the last phase against the truth.
pub fn check(w: &mut Worst, out: &str, window: &Window, truth: &Truth) {
    let end = &window.end;
    // (Chrome's closing event says whether the trace is complete; Perfetto's lists what it lacks only.)
    if let Some(complete) = end.get("complete") {
        w.exact(out, "complete", complete.as_bool(), Some(true));
    }
    w.exact(
        out,
        "dropped_ring_overflow",
        end["dropped_ring_overflow"].as_u64(),
        Some(0),
    );
    w.exact(
        out,
        "dropped_unwritten",
        end["dropped_unwritten"].as_u64(),
        Some(0),
    );
    w.exact(out, "unfinished", end["unfinished"].as_u64(), Some(0));
    let named = |name: &str| -> Vec<&Slice> {
        let mut v: Vec<&Slice> = window.slices.iter().filter(|s| s.name == name).collect();
        v.sort_by_key(|s| s.ts_ns);
        v
    };
    let (phase, sleeps) = last_phase(truth);
    let phases = named("phase");
    let slept = named("phase_sleep");
    w.exact(out, "phase slices", phases.len(), 1);
    w.exact(out, "phase_sleep slices", slept.len(), sleeps.len());
    let Some(p) = phases.first() else { return };
    w.exact(out, "phase thread", p.thread.as_str(), "main");
    w.time(out, "phase duration", p.dur_ns, phase.duration(), 0);
    // The phase began after the window opened (asked for once the file existed) and ended in it: the
    // window covers it whole, so its every tick is there.
    w.exact(
        out,
        "tick slices",
        named("tick").len() as u64,
        crate::model::PHASE_TICKS,
    );
    for (i, (s, t)) in slept.iter().zip(&sleeps).enumerate() {
        w.time(
            out,
            &format!("phase_sleep {i} duration"),
            s.dur_ns,
            t.duration(),
            0,
        );
        let from_first = (s.ts_ns - slept[0].ts_ns) as u64;
        w.time(
            out,
            &format!("phase_sleep {i} start from the first"),
            from_first,
            t.start() - sleeps[0].start(),
            0,
        );
        let from_phase = (s.ts_ns - p.ts_ns).max(0) as u64;
        w.time(
            out,
            &format!("phase_sleep {i} start in the phase"),
            from_phase,
            t.start() - phase.start(),
            0,
        );
    }
}
