//! The answer to `status`: who the process is, its memory, and what each live thread runs now (and waits
//! for, when it is blocked in a primitive of `sync`), as one JSON object (`"format": "perfgraph-status"`; `attach::Status` reads it). Cheap: no call tree is read.

use serde_json::{Value, json};

use crate::base::clock::{self, Ticks};
use crate::base::{heap, identity, process, registry, sys};
use crate::local::{locks, threads};

/// The status's `version`: it changes when a field changes meaning or goes away.
pub(crate) const VERSION: u32 = 1;

/// The status now, as JSON text.
pub(crate) fn json() -> Vec<u8> {
    let now = clock::now().0;
    let scale = clock::scale();
    let (live, retired) = threads::view();
    let threads: Vec<Value> = live
        .iter()
        .map(|t| {
            let running: Vec<Value> = t
                .open_frames()
                .iter()
                .map(|f| {
                    json!({
                        "name": registry::info(f.section).map_or("?", |i| i.name),
                        "depth": f.depth,
                        "elapsed_ns": scale.delta_ns(Ticks(now.saturating_sub(f.start))),
                    })
                })
                .collect();
            let mut thread = json!({
                "index": t.index,
                "name": t.name,
                "main": t.is_main,
                "alive_ns": scale.delta_ns(Ticks(now.saturating_sub(t.born_ticks))),
                "cpu_ns": t.read_cpu(),
                "running": running,
            });
            // Blocked in a primitive of `sync`: on what, held by whom (index), for how long.
            if let Some((since, name, holder)) = t.waiting.read() {
                thread["waiting_for"] = json!(locks::name(name).unwrap_or("lock"));
                if let Some(h) = holder.checked_sub(1) {
                    thread["waiting_holder"] = json!(h);
                }
                let ns = scale.delta_ns(Ticks(now.saturating_sub(since)));
                thread["waiting_ns"] = json!(ns);
            }
            thread
        })
        .collect();
    let status = json!({
        "format": "perfgraph-status",
        "version": VERSION,
        "pid": sys::process_id(),
        "program": process::program_name(),
        "host": identity::host(),
        "rank": identity::rank(),
        "start_unix_ns": identity::start_unix_ns(),
        "wall_ns": scale.to_ns(Ticks(now)),
        "rss_bytes": u64::from(process::rss_kb()) * 1024,
        "heap_bytes": heap::counting().then(heap::process_heap),
        "sections": registry::count(),
        "exited_threads": retired.iter().map(|g| g.threads).sum::<u64>(),
        "threads": threads,
    });
    let mut out = serde_json::to_vec(&status).unwrap_or_default();
    out.push(b'\n');
    out
}
