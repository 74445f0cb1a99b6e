//! The checks of a trace window (`perfgraph trace <pid> --seconds N`) in both formats.

use super::*;

/// A Chrome trace of the window: whole (its closing event says complete, nothing missing), the calls in
/// it, and the two running sections as unfinished slices.
pub(crate) fn check_chrome_window(path: &Path) {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = v.as_array().unwrap();
    let end = events.last().unwrap();
    assert_eq!(end["name"], "perfgraph trace end", "{end}");
    assert_eq!(end["args"]["complete"], true, "{end}");
    overflow_is_stated(&end["args"]);
    assert_eq!(end["args"]["dropped_unwritten"], 0, "{end}");
    let unfinished: Vec<(&str, u64)> = events
        .iter()
        .filter(|e| e["args"]["unfinished"] == true)
        .filter_map(|e| Some((e["name"].as_str()?, e["tid"].as_u64()?)))
        .collect();
    assert_eq!(end["args"]["unfinished"], unfinished.len(), "{end}");
    assert!(running_at_the_end(&unfinished), "{unfinished:?}");
    let calls = events.iter().filter(|e| e["name"] == "residual").count();
    assert!(calls > 1000, "{calls} residual calls in 1 s");
    assert!(events.iter().any(|e| e["name"] == "solve"));
    // Every call of the window ended in it: none before its first event's time by more than a call.
    let first_ts = events
        .iter()
        .filter(|e| e["name"] == "residual")
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::MAX, f64::min);
    let end_ts = end["ts"].as_f64().unwrap();
    assert!(end_ts - first_ts >= 900_000.0, "{first_ts}..{end_ts} µs");
}

/// A window's ring losses: none on a machine that lets the background thread drain (the service records
/// some 100,000 calls a second into rings of 8,192 records, a tenth of a second of them), and where the
/// thread was kept off the cores longer than that (two CPU burners and parallel builds on 2 cores), every
/// lost call counted, per thread, and named in the closing event's `missing` line, which is what the
/// trace promises (docs/user-guide.md, `trace`). The test says so visibly rather than fail on load.
pub(crate) fn overflow_is_stated(end: &Value) {
    let dropped = end["dropped_ring_overflow"]
        .as_u64()
        .expect("dropped_ring_overflow");
    if dropped == 0 {
        return;
    }
    // Chrome JSON: an array of {thread, dropped}; Perfetto: an annotation `dropped_ring_overflow.<thread>`
    // each.
    let per_thread: u64 = match end["dropped_ring_overflow_per_thread"].as_array() {
        Some(rows) => rows.iter().map(|t| t["dropped"].as_u64().unwrap()).sum(),
        None => end
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with("dropped_ring_overflow."))
            .map(|(_, v)| v.as_u64().unwrap())
            .sum(),
    };
    assert_eq!(per_thread, dropped, "{end}");
    let missing = end["missing"].as_str().expect("missing");
    assert!(
        missing.contains(&format!("{dropped} lost to ring overflow")),
        "{end}"
    );
    eprintln!(
        "note: the trace window lost {dropped} calls to ring overflow (the background thread was kept \
         off the cores); each is counted and stated"
    );
}

/// The sections running when a window ends, as (name, thread): the service's two that run throughout, and
/// on each of its two threads (both call `residual`) at most one `residual`, if one was running at that
/// instant.
pub(crate) fn running_at_the_end(unfinished: &[(&str, u64)]) -> bool {
    let residuals: Vec<u64> = unfinished
        .iter()
        .filter(|(n, _)| *n == "residual")
        .map(|(_, tid)| *tid)
        .collect();
    let mut threads = residuals.clone();
    threads.sort_unstable();
    threads.dedup();
    unfinished.len() - residuals.len() == 2 && threads.len() == residuals.len()
}

pub(crate) fn check_perfetto_window(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.len() > 1000);
    let Some(v) = common::check_pftrace(path, "the trace window") else {
        return;
    };
    overflow_is_stated(&v["end"]);
    assert_eq!(v["end"]["dropped_unwritten"], 0, "{}", v["end"]);
    // The two sections that run throughout, and at most one `residual` on each of the two threads (the
    // Chrome check above sees the threads; this one the count).
    let unfinished = v["unfinished"].as_u64().unwrap();
    assert!((2..=4).contains(&unfinished), "{unfinished} unfinished");
    assert!(v["names"]["residual"].as_u64().unwrap() > 1000);
}
