//! The trace's contents, checked in both formats: Perfetto's own classes read the protobuf back; live
//! print's lines, args and events, locks, futures and the process's identity are in both.

use super::*;

#[test]
fn a_perfetto_trace_reads_back_with_perfettos_own_classes() {
    // Raw packets, and packets deflated in `compressed_packets` bundles.
    for compress in ["off", "on"] {
        perfetto_trace_reads_back(compress);
    }
}

fn perfetto_trace_reads_back(compress: &str) {
    let dir = fresh_dir(&format!("pftrace-{compress}"));
    let path = dir.join("run.pftrace");
    let out = workload_with_live_print(&path, compress);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bytes = std::fs::read(&path).unwrap();
    let (packets, _) = whole_packets(&bytes, false);
    if compress == "off" {
        assert!(packets as u64 > 2 * TOTAL_CALLS);
    } else {
        // Bundles of a few hundred calls each.
        assert!((packets as u64) < TOTAL_CALLS, "{packets} packets");
    }
    pages_hold_whole_packets(&bytes);
    // Nothing else is left in the directory: the temporary file took the name.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    if let Some(t) = decode_with_perfetto(&path, false) {
        if compress == "on" {
            assert!(t["compressed"].as_u64().unwrap() > 0, "{t}");
            // Most calls are in bundles; a drain that found too few packets for one writes them raw, which
            // depends on when drains happen. Every call is there either way (`calls` below).
            assert!(t["inflated_packets"].as_u64().unwrap() > 0, "{t}");
        } else {
            assert_eq!(t["compressed"], 0, "{t}");
        }
        assert_eq!(t["calls"], TOTAL_CALLS, "{t}");
        assert_eq!(t["names"]["residual"], ITERATIONS * RESIDUALS);
        assert_eq!(t["names"]["write_chunk"], CHUNKS);
        // Nesting kept: run > solve > residual on the main thread, write_output > write_chunk on the other.
        assert_eq!(t["threads"]["child_entry"], 3, "{t}");
        assert_eq!(t["threads"]["io-worker"], 2, "{t}");
        assert_eq!(t["sections"]["solve"]["message"], "Solving");
        assert_eq!(t["sections"]["solve"]["category"], "level 0");
        assert_eq!(t["sections"]["residual"]["category"], "level 1");
        assert!(t["memory_samples"].as_u64().unwrap() >= 2, "{t}");
        let markers = t["markers"].as_array().unwrap();
        assert!(
            markers
                .iter()
                .any(|m| m.as_str().unwrap().ends_with(" Solving")),
            "{t}"
        );
        assert_eq!(t["end"]["events"], TOTAL_CALLS);
        assert_eq!(t["end"]["dropped_ring_overflow"], 0);
        assert!(
            t["process"][0]["process"]
                .as_str()
                .unwrap()
                .starts_with("trace_stream")
        );
    }
}

#[test]
fn live_print_lines_are_instant_events_in_the_chrome_trace() {
    let dir = fresh_dir("markers");
    let path = dir.join("trace.json");
    let out = workload_with_live_print(&path, "auto");
    assert!(out.status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    pages_hold_whole_lines(&text);
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let markers: Vec<&str> = events
        .iter()
        .filter(|e| e["cat"] == "live print")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    // Each line as printed, without colours and padding: the thread's prefix, the message, the figures.
    assert!(markers.contains(&"child_entry: Solving"), "{markers:?}");
    assert!(
        markers
            .iter()
            .any(|m| m.starts_with("child_entry: Finished run [") && m.ends_with(" MB]")),
        "{markers:?}"
    );
}

#[test]
fn args_and_events_are_in_both_formats() {
    let dir = fresh_dir("args");
    let json = dir.join("args.json");
    let out = child("args", &[("PERFGRAPH_TRACE", json.to_str().unwrap())])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let find =
        |name: &str| -> Vec<&Value> { events.iter().filter(|e| e["name"] == name).collect() };
    let refine = find("refine");
    assert_eq!(refine.len(), 3);
    for (tile, e) in refine.iter().enumerate() {
        assert_eq!(e["args"]["tile"], tile);
        assert_eq!(e["args"]["mesh"], "mesh-A");
    }
    assert_eq!(
        find("load")[2]["args"],
        serde_json::json!({"level": 1, "bytes": 2000, "path": "/data/m.exo", "arg.level": -1})
    );
    let checkpoints = find("checkpoint written");
    assert_eq!(checkpoints.len(), 3);
    assert_eq!(checkpoints[1]["ph"], "i");
    assert_eq!(
        checkpoints[1]["args"],
        serde_json::json!({"tile": 1, "ok": false, "ratio": 0.25})
    );
    assert_eq!(find("done")[0]["args"], serde_json::json!({}));
    let residual: Vec<&Value> = find("residual");
    assert_eq!(residual.len(), 3);
    assert_eq!(residual[1]["ph"], "C");
    assert_eq!(residual[1]["args"]["residual"], 0.5);
    // The contended lock: a wait naming the holder, two holds, the hand-over.
    let wait = find("wait: results");
    assert_eq!(wait.len(), 1);
    assert_eq!(wait[0]["args"]["holder"], "child_entry");
    assert_eq!(find("hold: results").len(), 2);
    assert_eq!(
        find("results")
            .iter()
            .map(|e| e["ph"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["s", "f"]
    );
    let download = find("download");
    let life = download.iter().find(|e| e["ph"] == "b").unwrap();
    assert_eq!(life["args"]["url"], "https://example.org/x");

    let pftrace = dir.join("args.pftrace");
    let out = child(
        "args",
        &[
            ("PERFGRAPH_TRACE", pftrace.to_str().unwrap()),
            ("PERFGRAPH_INTERVAL", "0.05"),
        ],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = decode_with_perfetto(&pftrace, false) {
        assert_eq!(d["sections"]["refine"]["tile"], 2);
        assert_eq!(d["sections"]["refine"]["mesh"], "mesh-A");
        assert_eq!(d["sections"]["load"]["bytes"], 2000);
        assert_eq!(d["sections"]["load"]["arg.level"], -1);
        assert_eq!(d["sections"]["load"]["path"], "/data/m.exo");
        assert_eq!(
            d["events"],
            serde_json::json!([
                ["checkpoint written", {"tile": 0, "ok": true, "ratio": 0.25}],
                ["checkpoint written", {"tile": 1, "ok": false, "ratio": 0.25}],
                ["checkpoint written", {"tile": 2, "ok": true, "ratio": 0.25}],
                ["done", {}]
            ])
        );
        assert_eq!(
            d["counters"]["residual"],
            serde_json::json!([1.0, 0.5, 1.0 / 3.0])
        );
        assert!(
            d["locks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l[0] == "contender" && l[1] == "wait: results" && l[2] == "child_entry"),
            "{d}"
        );
        assert_eq!(
            d["flows"],
            serde_json::json!([[
                "child_entry",
                "contender",
                "release: results",
                "acquire: results"
            ]])
        );
        // The interval statistics (at least the last interval, closed at exit) on the thread's tracks.
        let intervals = &d["intervals"]["child_entry"];
        let share = intervals["In sections %"]
            .as_array()
            .expect("the share track");
        assert!(
            share
                .iter()
                .all(|p| (0.0..=100.0).contains(&p.as_f64().unwrap())),
            "{intervals}"
        );
        assert_eq!(
            share.len(),
            intervals["Sections/s"].as_array().unwrap().len(),
            "{intervals}"
        );
        assert_eq!(
            d["future_args"],
            serde_json::json!([["download", {"url": "https://example.org/x"}]])
        );
    }
}

#[test]
fn events_with_the_longest_args_keep_the_limit_and_the_page_rule() {
    let dir = fresh_dir("fat");
    let json = dir.join("fat.json");
    let out = child(
        "fat_args",
        &[
            ("PERFGRAPH_TRACE", json.to_str().unwrap()),
            ("PERFGRAPH_TRACE_LIMIT", "16384"),
        ],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).unwrap();
    pages_hold_whole_lines(&text);
    let closing = text
        .rfind("perfgraph trace end")
        .expect("the closing event");
    let before = text[..closing].rfind("\n{").unwrap();
    let kept = text[..before].trim_end_matches([',', '\n', ' ']).len();
    assert!(kept <= 16384, "{kept} bytes before the closing event");
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let fat: Vec<&Value> = events.iter().filter(|e| e["name"] == "fat").collect();
    assert!(
        !fat.is_empty() && fat.len() < 200,
        "{} of 200 written",
        fat.len()
    );
    let b = fat[0]["args"]["b"].as_str().unwrap();
    assert!(
        b.len() <= 192 && b.ends_with('…') && !b.contains('\u{1}'),
        "{b:?}"
    );
}

#[test]
fn lock_waits_holds_and_hand_overs_are_in_both_formats_and_the_report() {
    let dir = fresh_dir("locks");
    let json = dir.join("locks.json");
    let out = child(
        "locks",
        &[
            ("PERFGRAPH_TRACE", json.to_str().unwrap()),
            ("PERFGRAPH_REPORT", "locks"),
        ],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The report: exact counts.
    let row = |name: &str| -> Vec<String> {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("| {name} ")))
            .unwrap_or_else(|| panic!("no {name} row in\n{stderr}"));
        line.split('|').map(|c| c.trim().to_owned()).collect()
    };
    // Lock | Acquisitions | Contended | Wait(s) | Max wait(ms) | Hold(s) | Max hold(ms) | Max waiters
    let handover = row("handover");
    assert_eq!(
        (&handover[2][..], &handover[3][..], &handover[8][..]),
        ("5", "3", "3"),
        "{stderr}"
    );
    let chain = row("chain");
    assert_eq!(
        (&chain[2][..], &chain[3][..], &chain[8][..]),
        ("3", "2", "1"),
        "{stderr}"
    );

    // Chrome: the waits with their holders, a hold per acquisition, a flow per hand-over.
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let thread_of = |tid: &Value| -> String {
        events
            .iter()
            .find(|e| e["name"] == "thread_name" && &e["tid"] == tid)
            .map_or("?".into(), |e| {
                e["args"]["name"].as_str().unwrap().to_owned()
            })
    };
    let mut waits: Vec<(String, String, String)> = events
        .iter()
        .filter(|e| {
            e["cat"] == "lock"
                && e["ph"] == "X"
                && e["name"].as_str().unwrap().starts_with("wait: ")
        })
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                thread_of(&e["tid"]),
                e["args"]["holder"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    waits.sort();
    // Every wait (by name), its thread and the holder it names: the same in both formats.
    let w = |l: &str, t: &str, h: &str| (format!("wait: {l}"), t.to_owned(), h.to_owned());
    let expected_waits = [
        w("chain", "b", "a"),
        w("chain", "c", "b"),
        w("handover", "w1", "child_entry"),
        w("handover", "w2", "child_entry"),
        w("handover", "w3", "child_entry"),
    ];
    assert_eq!(waits, expected_waits);
    let holds = events
        .iter()
        .filter(|e| {
            e["cat"] == "lock"
                && e["ph"] == "X"
                && e["name"].as_str().unwrap().starts_with("hold: ")
        })
        .count();
    assert_eq!(holds, 8);
    let starts = events
        .iter()
        .filter(|e| e["cat"] == "lock" && e["ph"] == "s")
        .count();
    let ends = events
        .iter()
        .filter(|e| e["cat"] == "lock" && e["ph"] == "f")
        .count();
    assert_eq!((starts, ends), (5, 5));

    // Perfetto, decoded by Perfetto's own classes.
    let pftrace = dir.join("locks.pftrace");
    let out = child("locks", &[("PERFGRAPH_TRACE", pftrace.to_str().unwrap())])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(d) = decode_with_perfetto(&pftrace, false) {
        let mut waits: Vec<(String, String, String)> = d["locks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l[1].as_str().unwrap().starts_with("wait: "))
            .map(|l| {
                let s = |i: usize| l[i].as_str().unwrap_or("").to_owned();
                (s(1), s(0), s(2))
            })
            .collect();
        waits.sort();
        assert_eq!(waits, expected_waits, "{d}");
        let mut chain_flows: Vec<(String, String)> = d["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f[2] == "release: chain")
            .map(|f| {
                (
                    f[0].as_str().unwrap().to_owned(),
                    f[1].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        chain_flows.sort();
        assert_eq!(
            chain_flows,
            [
                ("a".to_owned(), "b".to_owned()),
                ("b".to_owned(), "c".to_owned())
            ],
            "{d}"
        );
        assert_eq!(d["flows"].as_array().unwrap().len(), 5, "{d}");
    }
}

#[test]
fn futures_events_and_identity_are_in_both_formats() {
    let dir = fresh_dir("async");
    let env = |path: &Path| {
        let out = child(
            "async",
            &[
                ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                ("PMI_RANK", "5"),
            ],
        )
        .output()
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // Chrome JSON; its name's placeholders are filled in.
    env(&dir.join("run.{rank}.json"));
    let text = std::fs::read_to_string(dir.join("run.5.json")).unwrap();
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    let process = events.iter().find(|e| e["name"] == "process_name").unwrap();
    assert_eq!(process["args"]["tool"], "perfgraph");
    assert_eq!(process["args"]["rank"], 5);
    assert!(process["args"]["start_unix_ns"].as_u64().unwrap() > 1_600_000_000_000_000_000);
    assert!(process["args"]["host"].is_string());
    let phase = |ph: &str, name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["ph"] == ph && e["name"] == name)
            .collect()
    };
    let (b, e) = (phase("b", "fetch"), phase("e", "fetch"));
    assert_eq!((b.len(), e.len()), (2, 2), "{text}");
    for (b, e) in b.iter().zip(&e) {
        assert_eq!(b["cat"], "async");
        assert_eq!(b["id"], e["id"]);
        assert!(b["ts"].as_f64() <= e["ts"].as_f64());
        assert_eq!(e["args"]["cancelled"], false);
    }
    assert_ne!(b[0]["id"], b[1]["id"]);
    let never = phase("e", "never done");
    assert_eq!(never.len(), 1, "{text}");
    assert_eq!(never[0]["args"]["cancelled"], true);
    let miss = phase("i", "cache miss");
    assert_eq!(miss.len(), 1, "{text}");
    assert_eq!(miss[0]["args"]["span"], "lookup");
    // Measured CPU time in the slices' args: `busy` (its `leaf` calls measure none, so self = inclusive)
    // and each poll of `fetch`.
    let busy = phase("X", "busy");
    assert_eq!(busy.len(), 1, "{text}");
    assert!(busy[0]["args"]["cpu_ns"].as_u64().unwrap() > 0, "{text}");
    assert_eq!(busy[0]["args"]["self_cpu_ns"], busy[0]["args"]["cpu_ns"]);
    let polls = phase("X", "fetch");
    assert!(
        !polls.is_empty() && polls.iter().all(|p| p["args"]["cpu_ns"].is_u64()),
        "{text}"
    );
    assert!(
        phase("X", "leaf")
            .iter()
            .all(|l| l["args"]["cpu_ns"].is_null())
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["name"].as_str().unwrap().starts_with("CPU child_entry")),
        "no CPU counter: {text}"
    );
    // Perfetto protobuf.
    let path = dir.join("run.pftrace");
    env(&path);
    if let Some(t) = decode_with_perfetto(&path, false) {
        let futures = t["futures"].as_array().unwrap();
        let named = |name: &str| futures.iter().filter(|f| f[0] == name).count();
        assert_eq!((named("fetch"), named("never done")), (2, 1), "{t}");
        assert!(t["sections"]["busy"]["cpu_ns"].as_u64().unwrap() > 0, "{t}");
        assert!(t["sections"]["busy"]["self_cpu_ns"].is_u64(), "{t}");
        assert!(t["sections"]["fetch"]["cpu_ns"].is_u64(), "{t}");
        assert!(
            futures.iter().any(|f| f[0] == "never done" && f[2] == true),
            "{t}"
        );
        assert!(
            futures.iter().any(|f| f[0] == "fetch" && f[2] == false),
            "{t}"
        );
        assert_eq!(
            t["instants"],
            serde_json::json!([["cache miss", "lookup"]]),
            "{t}"
        );
        let labels = &t["process"][0]["labels"];
        assert_eq!(labels[0], "rank=5", "{t}");
        assert!(
            labels
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l.as_str().unwrap().starts_with("start_unix_ns=")),
            "{t}"
        );
        assert!(t["cpu"]["child_entry"].as_u64().unwrap() >= 1, "{t}");
    }
}
