//! Golden Chrome trace from a deterministic recording: records in ticks of 1 ns, as the background thread
//! would drain them.

use super::chrome::{Event, TraceBuffer, TraceMeta, write};

/// A completed call `(start, end, section)`, as drained in this order.
type Call = (u64, u64, u32);

/// Adds `thread`'s calls, as the background thread does with the records it drains.
fn on_records(b: &mut TraceBuffer, thread: u32, calls: &[Call]) {
    for &(start, end, section) in calls {
        b.push(Event {
            start,
            end,
            section,
            thread,
        });
    }
}

fn name(section: u32) -> String {
    match section {
        1 => "solve",
        2 => "residual",
        3 => "write \"checkpoint\"", // quotes must come out escaped
        _ => "?",
    }
    .to_owned()
}

fn render(
    buffer: &mut TraceBuffer,
    unfinished: Vec<Event>,
    ring_dropped: Vec<(String, u64)>,
) -> String {
    let to_ns = |t: u64| t;
    let meta = TraceMeta {
        pid: 4242,
        rank: 3,
        host: "node7",
        start_unix_ns: 1_700_000_000_000_000_000,
        program: "demo",
        clock: "tsc",
        threads: vec![(0, "main".to_owned()), (1, "checkpointer".to_owned())],
        ring_dropped,
        unfinished,
        end: 9_000_000,
        to_ns: &to_ns,
    };
    let mut out = Vec::new();
    write(&mut out, buffer, &meta, &name).unwrap();
    String::from_utf8(out).unwrap()
}

/// Main: solve [1 ms, 5 ms] with two residuals inside, drained children first; worker: one checkpoint.
fn recording(limit: usize) -> TraceBuffer {
    let mut b = TraceBuffer::new(limit);
    b.on_memory(0, 50_000_000);
    on_records(
        &mut b,
        0,
        &[
            (1_000_000, 2_000_000, 2),
            (2_000_000, 4_500_500, 2),
            (1_000_000, 5_000_000, 1),
        ],
    );
    b.on_memory(3_000_000, 50_000_000); // unchanged: not kept
    b.on_memory(4_000_000, 210_500_000);
    on_records(&mut b, 1, &[(2_500_000, 7_250_125, 3)]);
    b
}

#[test]
fn chrome_trace_golden() {
    let mut b = recording(100);
    let unfinished = vec![Event {
        start: 8_000_000,
        end: 9_000_000,
        section: 1,
        thread: 0,
    }];
    let text = render(&mut b, unfinished, Vec::new());
    insta::assert_snapshot!("chrome_trace", text);
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let events = v["traceEvents"].as_array().unwrap();
    let complete = events.iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(complete, 5);
    assert_eq!(v["otherData"]["events"], 5);
    // Written twice, the same file: the buffer is left as it was.
    assert_eq!(
        render(
            &mut b,
            vec![Event {
                start: 8_000_000,
                end: 9_000_000,
                section: 1,
                thread: 0
            }],
            Vec::new()
        ),
        text
    );
}

#[test]
fn a_parent_comes_before_its_child_even_when_their_times_are_equal() {
    let mut b = TraceBuffer::new(10);
    // A coarse clock: child and parent have the same start and end; the child ended (was stored) first.
    on_records(&mut b, 0, &[(5_000, 9_000, 2), (5_000, 9_000, 1)]);
    let text = render(&mut b, Vec::new(), Vec::new());
    let solve = text.find("\"name\":\"solve\"").unwrap();
    let residual = text.find("\"name\":\"residual\"").unwrap();
    assert!(solve < residual, "{text}");
}

#[test]
fn past_the_limit_calls_are_counted_and_stated() {
    let mut b = recording(1);
    assert_eq!((b.events.len(), b.samples.len()), (1, 1));
    assert_eq!((b.over_limit, b.samples_over_limit), (3, 1));
    let text = render(&mut b, Vec::new(), vec![("checkpointer".to_owned(), 7)]);
    insta::assert_snapshot!("chrome_trace_cut", text);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["otherData"]["dropped_past_trace_limit"], 3);
    assert_eq!(v["otherData"]["dropped_ring_overflow"], 7);
    let note = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["ph"] == "i")
        .expect("an instant event says what is missing");
    assert_eq!(
        note["name"],
        "perfgraph: 10 section calls are not in this trace (7 lost to ring overflow, 3 past PERFGRAPH_TRACE_LIMIT=1)"
    );
}
