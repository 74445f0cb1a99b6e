//! The events main's whole-file exporter was tested for, in the streamed form: the process's identity
//! in the header, futures' lives and instant events.

use super::super::trace::{Call, Encoder, Identity, Mark, MarkKind, SectionText, Summary};
use super::{Chrome, CpuFigures};

fn text(_: u32) -> SectionText {
    SectionText {
        name: "write \"checkpoint\"".to_owned(), // quotes must come out escaped
        level: 1,
        message: None,
        args: &[],
    }
}

fn who() -> Identity {
    Identity {
        pid: 4242,
        rank: 3,
        host: "node7".to_owned(),
        start_unix_ns: 1_700_000_000_000_000_000,
        program: "demo".to_owned(),
    }
}

/// A small trace: a call, a future's life (cancelled), an instant event, then the end.
fn trace() -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut c = Chrome::header(&mut out, &who());
    c.thread(&mut out, 0, "main");
    let call = Call {
        thread: 0,
        section: 1,
        depth: 0,
        start_ns: 1_000_000,
        end_ns: 2_500_500,
        unfinished: false,
        cpu: None,
        args: &[],
    };
    c.call(&mut out, &call, &text);
    let measured = Call {
        start_ns: 1_200_000,
        end_ns: 1_300_000,
        depth: 1,
        cpu: Some(CpuFigures {
            cpu_ns: 90_000,
            self_cpu_ns: 60_000,
            ..CpuFigures::default()
        }),
        ..call
    };
    c.call(&mut out, &measured, &text);
    let life = |cancelled| Mark {
        kind: MarkKind::Life {
            id: 0x2a,
            cancelled,
        },
        section: 1,
        thread: 0,
        start_ns: 1_000,
        end_ns: 3_000_001,
        args: Vec::new(),
    };
    c.mark(&mut out, &life(true), "fetch");
    let instant = Mark {
        kind: MarkKind::Instant("cache \"miss\"".to_owned()),
        section: 1,
        thread: 0,
        start_ns: 1_500_000,
        end_ns: 1_500_000,
        args: Vec::new(),
    };
    c.mark(&mut out, &instant, "fetch");
    c.footer(
        &mut out,
        &Summary {
            calls: 1,
            unfinished: 0,
            losses: Default::default(),
            clock: "tsc",
            end_ns: 4_000_000,
        },
    );
    let v: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
    v.as_array().unwrap().clone()
}

#[test]
fn the_process_name_carries_who_wrote_the_trace() {
    let events = trace();
    let p = &events[0];
    assert_eq!(
        (&p["name"], &p["ph"], &p["pid"]),
        (&"process_name".into(), &"M".into(), &4242.into())
    );
    let args = &p["args"];
    assert_eq!(args["name"], "demo");
    assert_eq!(args["tool"], "perfgraph");
    assert_eq!(args["rank"], 3);
    assert_eq!(args["host"], "node7");
    assert_eq!(args["start_unix_ns"], 1_700_000_000_000_000_000u64);
}

#[test]
fn futures_are_async_slices_and_events_instants() {
    let events = trace();
    let b = events.iter().find(|e| e["ph"] == "b").expect("a begin");
    let e = events.iter().find(|e| e["ph"] == "e").expect("an end");
    for x in [b, e] {
        assert_eq!(x["cat"], "async");
        assert_eq!(x["id"], "0x2a");
        assert_eq!(x["name"], "fetch");
        assert_eq!(x["tid"], 1);
    }
    assert_eq!(b["ts"], 1.0);
    assert_eq!(e["ts"], 3000.001);
    assert_eq!(e["args"]["cancelled"], true);
    let i = events
        .iter()
        .find(|e| e["ph"] == "i" && e["s"] == "t")
        .expect("an instant event");
    assert_eq!(i["name"], "cache \"miss\"");
    assert_eq!(i["args"]["span"], "fetch");
    assert_eq!(i["ts"], 1500.0);
    let x = events.iter().find(|e| e["ph"] == "X").unwrap();
    assert_eq!(x["name"], "write \"checkpoint\"");
    assert_eq!(x["dur"], 1500.5);
    assert_eq!(x["args"]["cpu_ns"], serde_json::Value::Null, "not measured");
    assert_eq!(events.last().unwrap()["name"], "perfgraph trace end");
}

#[test]
fn a_call_that_measured_its_cpu_has_it_in_its_args() {
    let events = trace();
    let x = events
        .iter()
        .find(|e| e["ph"] == "X" && e["ts"] == 1200.0)
        .expect("the measured call");
    assert_eq!(x["args"]["level"], 1);
    assert_eq!(x["args"]["cpu_ns"], 90_000);
    assert_eq!(x["args"]["self_cpu_ns"], 60_000);
}

#[test]
fn cpu_usage_is_a_counter_per_thread() {
    let mut out = Vec::new();
    let mut c = Chrome::header(&mut out, &who());
    c.cpu(&mut out, 2_000, 1, "worker", 87);
    let text = String::from_utf8(out).unwrap();
    let last = text.lines().last().unwrap().trim_end_matches(',');
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["name"], "CPU worker (tid 2)");
    assert_eq!(v["ph"], "C");
    assert_eq!(v["args"]["%"], 87);
}

#[test]
fn args_go_into_the_slices_and_events_args_under_names_perfgraph_does_not_use() {
    use crate::data::args::ArgValue;
    fn text(_: u32) -> SectionText {
        SectionText {
            name: "refine".to_owned(),
            level: 2,
            message: Some("Refining level {level}".to_owned()),
            args: &["level", "mesh", "ratio", "ok", "delta"],
        }
    }
    let mut out = Vec::new();
    let mut c = Chrome::header(&mut out, &who());
    let args = [
        ArgValue::Uint(3),
        ArgValue::Text("a \"b\".exo".to_owned()),
        ArgValue::Float(f64::NAN),
        ArgValue::Bool(true),
        ArgValue::Int(-2),
    ];
    let call = Call {
        thread: 0,
        section: 1,
        depth: 0,
        start_ns: 0,
        end_ns: 1_000,
        unfinished: false,
        cpu: None,
        args: &args,
    };
    c.call(&mut out, &call, &text);
    let event = Mark {
        kind: MarkKind::Event,
        section: 1,
        thread: 0,
        start_ns: 500,
        end_ns: 500,
        args: vec![
            ("step", ArgValue::Uint(7)),
            ("file", ArgValue::Text("f".into())),
        ],
    };
    c.mark(&mut out, &event, "checkpoint written");
    let bare = Mark {
        args: Vec::new(),
        ..event
    };
    c.mark(&mut out, &bare, "done");
    let text = String::from_utf8(out).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l.trim_end_matches(',')).unwrap())
        .collect();
    let slice = events.iter().find(|e| e["name"] == "refine").unwrap();
    assert_eq!(
        slice["args"],
        serde_json::json!({"level": 2, "message": "Refining level {level}", "arg.level": 3,
            "mesh": "a \"b\".exo", "ratio": "NaN", "ok": true, "delta": -2})
    );
    let event = events
        .iter()
        .find(|e| e["name"] == "checkpoint written")
        .unwrap();
    assert_eq!(event["ph"], "i");
    assert_eq!(event["args"], serde_json::json!({"step": 7, "file": "f"}));
    let bare = events.iter().find(|e| e["name"] == "done").unwrap();
    assert_eq!(bare["args"], serde_json::json!({}));
}
