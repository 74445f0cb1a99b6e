//! The Criterion tables: the cost of one section for every row (wall time, one thread and two), and the
//! floors and perfgraph again in thread CPU time.

use std::fmt::Write as _;

use perfgraph_benches::ids::{case, group, process};

use super::fmt;
use super::rows::{Kind, ROWS};
use crate::measure::results::Results;

/// Writes the overhead table: every row, one thread and two, wall time.
pub fn table(doc: &mut String, r: &Results) {
    let pg1 = r.added(process::MAIN, group::ONE_THREAD, case::PERFGRAPH_ENABLED);
    let pg2 = r.added(process::MAIN, group::TWO_THREADS, case::PERFGRAPH_ENABLED);
    let _ = writeln!(
        doc,
        "## Cost of one section (enter + exit)\n\n\
         Criterion medians. Each row calls an `#[inline(never)]` leaf holding one section around the same\n\
         empty body, in batches of 1,000 inside an outer scope (or the root span / frame the tool needs).\n\
         *ns/call* includes the call; *added* subtracts the empty call measured in the same process and group\n\
         (per section for the nested row). *× perfgraph* is *added* over perfgraph enabled's *added*.\n\
         *2 threads* runs the same loop on two threads at once (released together by a barrier) and gives\n\
         the mean per-thread time. Set-ups are written next to each leaf in `benches/peers/benches/peers.rs`.\n"
    );
    let _ = writeln!(
        doc,
        "| Section | Set-up | 1 thread ns/call | added ns | × perfgraph | 2 threads ns/call | added ns | × perfgraph | 2 threads / 1 thread |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for row in ROWS {
        let (process, id, label, setup) = (row.process, row.id, row.label(), row.setup);
        let one = r.get(process, group::ONE_THREAD, id);
        let two = r.get(process, group::TWO_THREADS, id);
        if one.is_none() && two.is_none() {
            let _ = writeln!(doc, "| {label} | {setup} | not measured | | | | | | |");
            continue;
        }
        let a1 = r.added(process, group::ONE_THREAD, id);
        let a2 = r.added(process, group::TWO_THREADS, id);
        let floor = id == case::EMPTY_CALL;
        let ratio = |a: Option<f64>, pg: Option<f64>| if floor { None } else { Some(a? / pg?) };
        let _ = writeln!(
            doc,
            "| {label} | {setup} | {} | {} | {} | {} | {} | {} | {} |",
            fmt::ns(one),
            if floor { "—".into() } else { fmt::ns(a1) },
            fmt::ratio(ratio(a1, pg1)),
            fmt::ns(two),
            if floor { "—".into() } else { fmt::ns(a2) },
            fmt::ratio(ratio(a2, pg2)),
            fmt::ratio(two.zip(one).map(|(t, o)| t / o)),
        );
    }
    let _ = writeln!(
        doc,
        "\nProcesses: *main* is `benches/peers` (floors, perfgraph and every peer but one); tracing's subscriber\n\
         is process-global, so `Registry` + tracing-chrome runs in a second process of the same binary\n\
         (`PEERS_TRACING=chrome`); compiled-out perfgraph is `benches/compiled-out`, a crate of its own because\n\
         Cargo unifies features within one build, timed by the same harness on one thread and on two. The\n\
         tracing-chrome and compiled-out rows' *added* use their own process's empty call.\n\
         tracy-client is not measured: it builds C++ and its default features broadcast on the network.\n"
    );
}

/// Writes the floors and perfgraph again, timed with each thread's CPU time.
pub fn cpu_table(doc: &mut String, r: &Results) {
    let _ = writeln!(
        doc,
        "### One thread and two threads at once, in thread CPU time\n\n\
         The floors and perfgraph again, each thread timing itself with `CLOCK_THREAD_CPUTIME_ID`: time\n\
         other processes hold the core is not counted, while contention between the two recording threads\n\
         (shared cache lines, locks that spin) still is. *added* as above.\n\n\
         | Section | 1 thread ns/call | added ns | 2 threads ns/call | added ns | 2 threads / 1 thread (added) |\n\
         |---|---:|---:|---:|---:|---:|"
    );
    for row in ROWS.iter().filter(|row| {
        row.process == process::MAIN && matches!(row.kind, Kind::Floor | Kind::Perfgraph)
    }) {
        let (process, id, label) = (row.process, row.id, row.label());
        let floor = id == case::EMPTY_CALL;
        let a1 = r.added(process, group::CPU_ONE_THREAD, id);
        let a2 = r.added(process, group::CPU_TWO_THREADS, id);
        let _ = writeln!(
            doc,
            "| {label} | {} | {} | {} | {} | {} |",
            fmt::ns(r.get(process, group::CPU_ONE_THREAD, id)),
            if floor { "—".into() } else { fmt::ns(a1) },
            fmt::ns(r.get(process, group::CPU_TWO_THREADS, id)),
            if floor { "—".into() } else { fmt::ns(a2) },
            // A ratio of two sub-nanosecond figures is noise.
            if floor || a1.is_none_or(|a| a < 1.0) {
                "—".into()
            } else {
                fmt::ratio(a2.zip(a1).map(|(t, o)| t / o))
            },
        );
    }
    let _ = writeln!(doc);
}

#[cfg(test)]
mod tests {
    use super::{Results, cpu_table, table};
    use perfgraph_benches::ids::{case, group, process};

    #[test]
    fn compiled_out_rows_have_two_thread_columns() {
        let mut r = Results::default();
        for (g, empty, pg, out) in [
            (group::ONE_THREAD, 1.6, 26.5, 1.7),
            (group::TWO_THREADS, 1.6, 27.5, 1.8),
        ] {
            r.insert(process::MAIN, g, case::EMPTY_CALL, empty);
            r.insert(process::MAIN, g, case::PERFGRAPH_ENABLED, pg);
            r.insert(process::COMPILED_OUT, g, case::EMPTY_CALL, 1.5);
            r.insert(
                process::COMPILED_OUT,
                g,
                case::PERFGRAPH_COMPILED_OUT_TIMED,
                out,
            );
        }
        let mut doc = String::new();
        table(&mut doc, &r);
        let row = doc
            .lines()
            .find(|l| l.starts_with("| perfgraph, compiled out (`#[timed]`)"))
            .expect("compiled-out row");
        // 1 thread: 1.7 ns, 0.2 added, 0.2/24.9; 2 threads: 1.8 ns, 0.3 added, 0.3/25.9; 1.8/1.7.
        assert!(
            row.ends_with("| 1.7 | 0.2 | 0.01× | 1.8 | 0.3 | 0.01× | 1.06× |"),
            "{row}"
        );
        // A row with neither column measured says so.
        assert!(doc.contains("| coarse-prof 0.2 | `profile!` | not measured | | | | | | |\n"));
    }

    #[test]
    fn cpu_table_has_floors_and_perfgraph_only_and_no_ratio_of_noise() {
        let mut r = Results::default();
        for (g, empty, off, pg) in [
            (group::CPU_ONE_THREAD, 1.2, 1.5, 37.4),
            (group::CPU_TWO_THREADS, 1.2, 1.5, 38.2),
        ] {
            r.insert(process::MAIN, g, case::EMPTY_CALL, empty);
            r.insert(process::MAIN, g, case::PERFGRAPH_DISABLED_BY_VERBOSITY, off);
            r.insert(process::MAIN, g, case::PERFGRAPH_ENABLED, pg);
            r.insert(process::MAIN, g, case::PUFFIN_ON, 72.0);
        }
        let mut doc = String::new();
        cpu_table(&mut doc, &r);
        assert!(doc.contains("| empty `#[inline(never)]` call | 1.2 | — | 1.2 | — | — |\n"));
        // 0.3 ns added: a ratio of two sub-nanosecond figures is not printed.
        assert!(doc.contains("| perfgraph, off by verbosity | 1.5 | 0.3 | 1.5 | 0.3 | — |\n"));
        // 36.2 and 37.0 added: 37.0 / 36.2 = 1.02.
        assert!(doc.contains("| **perfgraph, enabled** | 37.4 | 36.2 | 38.2 | 37.0 | 1.02× |\n"));
        assert!(doc.contains("| pair of `Instant::now()` | — | — | — | — | — |\n"));
        assert!(!doc.contains("puffin"));
        assert!(!doc.contains("compiled out"));
        assert!(doc.ends_with("|\n\n"));
    }
}
