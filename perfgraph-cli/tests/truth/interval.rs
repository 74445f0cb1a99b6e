//! The interval lines (`PERFGRAPH_INTERVAL`) on stderr, against the truth.

use super::text::{self, MILLI};
use crate::common::truth::{Truth, Worst};

/// The interval lines (`PERFGRAPH_INTERVAL`, down to `depth`): per thread and call path, the time inside
/// summed over the intervals against its total (each line rounds to 1 ms, so the resolution is half a ms
/// per line), and the calls summed, exact (a timed future's polls: its lines count them); every path down
/// to `depth` has lines.
pub fn intervals(w: &mut Worst, stderr: &str, truth: &Truth, depth: usize) {
    let out = "interval";
    let lines = text::interval_lines(stderr);
    for thread in truth.threads().keys() {
        for (path, t) in truth
            .paths_on(Some(thread))
            .into_iter()
            .filter(|(p, _)| p.len() <= depth)
        {
            let what = format!("{thread} {}", path.join(";"));
            let mine: Vec<_> = lines
                .iter()
                .filter(|l| &l.thread == thread && l.path == path)
                .collect();
            w.exact(out, &format!("{what}: has lines"), !mine.is_empty(), true);
            let calls: u64 = mine.iter().map(|l| l.calls).sum();
            // A timed future's lines count its polls, what ran on the thread (output-formats.md).
            let future = &truth.raw["future"];
            if path.last().map(String::as_str) == future["name"].as_str() {
                let polls = future["polls"].as_u64().unwrap() * t.calls;
                w.exact(out, &format!("{what}: polls"), calls, polls);
            } else {
                w.exact(out, &format!("{what}: calls"), calls, t.calls);
            }
            if let Some(total) = t.total {
                let inside: u64 = mine.iter().map(|l| text::ns(&l.inside_ms, MILLI)).sum();
                let res = mine.len() as u64 * 500_000;
                w.time(
                    out,
                    &format!("{what}: time inside, summed over {} intervals", mine.len()),
                    inside,
                    total,
                    res,
                );
            }
        }
    }
    for l in &lines {
        let known = truth.paths_on(Some(&l.thread)).contains_key(&l.path);
        w.exact(
            out,
            &format!("{} {}: a path the program ran", l.thread, l.path.join(";")),
            known,
            true,
        );
    }
}
