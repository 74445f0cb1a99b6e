//! Resident memory per recording thread.

use std::fmt::Write as _;

use super::fmt;
use crate::measure::rss::Rss;

/// Writes the memory table: KiB added by the threads, and per recording thread over the idle baseline.
pub fn write(doc: &mut String, rss: &Rss) {
    let n = rss.threads;
    let per = |x: Option<f64>| x.zip(rss.idle).map(|(x, i)| (x - i) / n as f64);
    let _ = writeln!(
        doc,
        "## Resident memory per recording thread\n\n\
         {n} threads started together in a fresh process, measured (`/proc/self/statm`) while all are alive,\n\
         minus the same {n} threads recording nothing; median of {processes} processes. A thread's recording state is\n\
         kept after it exits (its data goes into the reports).\n\n\
         | Threads that | KiB added for {n} threads | KiB per recording thread |\n|---|---:|---:|\n\
         | record nothing (baseline) | {} | — |\n\
         | record one section | {} | {} |\n\
         | record 16,384 sections (the event ring wrapped twice) | {} | {} |\n",
        fmt::kib(rss.idle),
        fmt::kib(rss.one),
        fmt::ns(per(rss.one)),
        fmt::kib(rss.full),
        fmt::ns(per(rss.full)),
        processes = rss.processes,
    );
}

#[cfg(test)]
mod tests {
    use super::{Rss, write};

    #[test]
    fn per_thread_figures_subtract_the_baseline() {
        let rss = Rss {
            threads: 32,
            processes: 5,
            idle: Some(392.0),
            one: Some(844.0),
            full: None,
        };
        let mut doc = String::new();
        write(&mut doc, &rss);
        assert!(
            doc.contains("| record nothing (baseline) | 392 | — |\n"),
            "{doc}"
        );
        // (844 − 392) / 32 = 14.125.
        assert!(
            doc.contains("| record one section | 844 | 14.1 |\n"),
            "{doc}"
        );
        assert!(
            doc.contains("| record 16,384 sections (the event ring wrapped twice) | — | — |\n"),
            "{doc}"
        );
        assert!(doc.contains("median of 5 processes"), "{doc}");
    }
}
