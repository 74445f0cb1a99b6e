//! Golden Chrome trace from a deterministic recording: records in ticks of 1 ns, as the background thread
//! would drain them.

use super::chrome::{Event, TraceBuffer, TraceMeta, write};
use crate::thread::Record;

fn rec(start: u64, end: u64, section: u32, depth: u32) -> Record {
    Record::timed(start, end, section, depth)
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
    b.on_records(
        0,
        &[
            rec(1_000_000, 2_000_000, 2, 1),
            rec(2_000_000, 4_500_500, 2, 1),
            rec(1_000_000, 5_000_000, 1, 0),
        ],
    );
    b.on_memory(3_000_000, 50_000_000); // unchanged: not kept
    b.on_memory(4_000_000, 210_500_000);
    b.on_records(1, &[rec(2_500_000, 7_250_125, 3, 0)]);
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
    b.on_records(0, &[rec(5_000, 9_000, 2, 1), rec(5_000, 9_000, 1, 0)]);
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

#[test]
fn unwritable_path_is_one_line_naming_it_and_the_os_error() {
    let err = super::write_file(
        "PERFGRAPH_JSON",
        std::path::Path::new("/nonexistent-dir/x.json"),
        |w| w.write_all(b"{}"),
    )
    .unwrap_err();
    assert_eq!(
        err,
        "perfgraph: error: cannot write PERFGRAPH_JSON file \"/nonexistent-dir/x.json\": No such file or directory (os error 2)"
    );
}

#[test]
fn a_failed_write_leaves_neither_a_truncated_file_nor_a_temporary_one() {
    let dir = std::env::temp_dir().join(format!("perfgraph-write-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    std::fs::write(&path, "old").unwrap();
    let err = super::write_file("PERFGRAPH_TRACE", &path, |w| {
        w.write_all(b"{\"traceEvents\":[")?;
        Err(std::io::Error::other("cut short"))
    })
    .unwrap_err();
    assert!(err.ends_with(": cut short"), "{err}");
    // The old file is untouched and nothing else is left behind.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    super::write_file("PERFGRAPH_TRACE", &path, |w| w.write_all(b"new")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
