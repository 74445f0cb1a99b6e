//! What perfgraph prints on stderr, against the truth: the live lines, every `PERFGRAPH_REPORT=all` table,
//! the interval lines, and the run's length.

use std::collections::BTreeMap;

use super::text::{self, MILLI, SECOND, Table};
use crate::common::truth::{Bounds, Durations, PathTruth, Truth, Worst, histogram_ns};

/// The program's name: the graph's root row.
pub const PROGRAM: &str = "truth";

/// The live lines: `Sleeping long` (1.5 s) and `Truth run` (the whole `work`), their `[` at column 89
/// (0-based) and
/// their `[%6.2f s]` within the tolerance plus 5 ms (the rounding to 0.01 s).
pub fn live_lines(w: &mut Worst, stderr: &str, truth: &Truth) {
    for (message, section) in [("Sleeping long", "long_sleep"), ("Truth run", "work")] {
        let lines = text::live_lines(stderr, message);
        w.exact(
            "live lines",
            &format!("lines with stats for {message:?}"),
            lines.len(),
            1,
        );
        for line in lines {
            w.exact(
                "live lines",
                &format!("{message:?}: column of '[' (0-based)"),
                line.column,
                89,
            );
            w.exact(
                "live lines",
                &format!("{message:?}: the seconds are %6.2f"),
                line.seconds.len() == 6
                    && line.seconds.trim().parse::<f64>().is_ok()
                    && line.seconds.split('.').nth(1).is_some_and(|d| d.len() == 2),
                true,
            );
            w.time(
                "live lines",
                &format!("{}: seconds", line.text),
                text::ns(&line.seconds, SECOND),
                truth.one(section).duration(),
                text::resolution(&line.seconds, SECOND),
            );
        }
    }
}

/// A graph table (`Performance Graph:`, `Heaviest Branch:`): each row's call path from its indentation,
/// its calls exact and its self and total times (and their averages) against the truth. With `complete`,
/// every path the program ran must have its row.
fn graph(
    w: &mut Worst,
    out: &str,
    table: &Table,
    paths: &BTreeMap<Vec<String>, PathTruth>,
    complete: bool,
) {
    let (calls, self_s, self_avg) = (
        table.col("Calls"),
        table.col("Self(s)"),
        table.col("Avg(s)"),
    );
    let (total, total_avg) = (table.col("Total(s)"), table.col_nth("Avg(s)", 1));
    let mut path = Vec::<String>::new();
    let mut seen = Vec::new();
    for row in &table.rows {
        let depth = row.indent / 2;
        if depth == 0 {
            w.exact(
                out,
                "the root row is the program",
                row.cells[0].as_str(),
                PROGRAM,
            );
            continue;
        }
        path.truncate(depth - 1);
        path.push(row.cells[0].clone());
        let what = path.join(";");
        let Some(t) = paths.get(&path) else {
            w.exact(out, &format!("{what}: a path the program ran"), false, true);
            continue;
        };
        seen.push(path.clone());
        let c = &row.cells;
        let n: u64 = c[calls].parse().unwrap();
        w.exact(out, &format!("{what}: calls"), n, t.calls);
        for (col, avg, truth, kind) in [
            (self_s, self_avg, t.self_time, "self"),
            (total, total_avg, t.total, "total"),
        ] {
            let Some(truth) = truth else { continue };
            let (got, res) = (text::ns(&c[col], SECOND), text::resolution(&c[col], SECOND));
            w.time(out, &format!("{what}: {kind}"), got, truth, res);
            let (got, res) = (text::ns(&c[avg], SECOND), text::resolution(&c[avg], SECOND));
            w.time(
                out,
                &format!("{what}: {kind} per call"),
                got,
                truth.per(t.calls),
                res,
            );
        }
    }
    if complete {
        for p in paths.keys() {
            w.exact(
                out,
                &format!("{}: has a row", p.join(";")),
                seen.contains(p),
                true,
            );
        }
    }
}

/// Per section name, every call path summed: (calls, self time if known, durations if all timed).
fn by_name(paths: &BTreeMap<Vec<String>, PathTruth>) -> BTreeMap<String, PathTruth> {
    let mut names = BTreeMap::<String, PathTruth>::new();
    for (path, p) in paths {
        let n = names
            .entry(path.last().unwrap().clone())
            .or_insert(PathTruth {
                self_time: Some(Bounds::default()),
                durations: Some(Durations::default()),
                ..PathTruth::default()
            });
        n.calls += p.calls;
        n.self_time = n.self_time.zip(p.self_time).map(|(a, b)| a + b);
        n.durations = n
            .durations
            .take()
            .zip(p.durations.as_ref())
            .map(|(mut a, b)| {
                a.extend(b.iter());
                a
            });
    }
    names
}

/// Every table of `PERFGRAPH_REPORT=all`, against the truth.
pub fn tables(w: &mut Worst, stderr: &str, truth: &Truth) {
    let paths = truth.paths_on(None);
    let names = by_name(&paths);
    let get = |heading: &str| {
        text::table(stderr, heading)
            .unwrap_or_else(|| panic!("no {heading} table on stderr:\n{stderr}"))
    };

    let g = get("Performance Graph:");
    graph(w, "report: graph", &g, &paths, true);
    run_length(
        w,
        "run length: report",
        &g.rows[0].cells[g.col("Total(s)")],
        truth,
    );
    graph(w, "report: branch", &get("Heaviest Branch:"), &paths, false);

    let out = "report: sections";
    let s = get("Heaviest Sections:");
    for row in s.rows.iter().filter(|r| r.cells[0] != PROGRAM) {
        let name = &row.cells[0];
        let Some(t) = names.get(name) else {
            w.exact(
                out,
                &format!("{name}: a section the program ran"),
                false,
                true,
            );
            continue;
        };
        w.exact(
            out,
            &format!("{name}: calls"),
            row.cells[s.col("Calls")].parse::<u64>().unwrap(),
            t.calls,
        );
        if let Some(self_time) = t.self_time {
            for (col, truth, what) in [
                ("Self(s)", self_time, "self"),
                ("Avg.", self_time.per(t.calls), "self per call"),
            ] {
                let cell = &row.cells[s.col(col)];
                w.time(
                    out,
                    &format!("{name}: {what}"),
                    text::ns(cell, SECOND),
                    truth,
                    text::resolution(cell, SECOND),
                );
            }
        }
    }

    latency(w, &get("Latency:"), &names);
    threads(w, &get("Threads:"), truth);
    locks(w, &get("Locks:"), truth);
    counters(w, &get("Counters:"), truth);
    async_table(w, &get("Async Sections:"), truth);
    alloc(w, &get("Allocations:"), truth, &names);

    let out = "report: cpu";
    let c = get("CPU:");
    let spin = truth.one("cpu_spin").duration();
    let cpu = cpu_truth(truth);
    let row = c.row("cpu_spin").expect("a cpu_spin row");
    w.exact(
        out,
        "cpu_spin: calls",
        row.cells[c.col("Calls")].as_str(),
        "1",
    );
    for (col, truth) in [
        ("Total(s)", spin),
        ("CPU(s)", cpu),
        ("Waiting(s)", spin - cpu),
    ] {
        let cell = &row.cells[c.col(col)];
        w.time(
            out,
            &format!("cpu_spin: {col}"),
            text::ns(cell, SECOND),
            truth,
            text::resolution(cell, SECOND),
        );
    }
}

/// cpu_spin's CPU time as the program read its thread's CPU clock: inside the section and around it.
pub fn cpu_truth(truth: &Truth) -> Bounds {
    let cpu = &truth.raw["cpu"][0];
    Bounds {
        low: cpu["cpu_ns"].as_u64().unwrap(),
        high: cpu["outer_cpu_ns"].as_u64().unwrap(),
    }
}

/// The run's length: the root's total (`got`, printed) against the program's own wall time (from its
/// zero or from `work`'s inner start: [`Truth::run_length`]), and no more than the run timed from
/// outside.
pub fn run_length(w: &mut Worst, out: &str, got: &str, truth: &Truth) {
    let got_ns = text::ns(got, SECOND);
    let res = text::resolution(got, SECOND);
    w.time(
        out,
        "the program's total (the run's wall time)",
        got_ns,
        truth.run_length(),
        res,
    );
    w.exact(
        out,
        &format!(
            "the program's total {got} s at most the run timed from outside ({} ns)",
            truth.outside_ns
        ),
        got_ns <= truth.outside_ns + res,
        true,
    );
}

/// `Latency:`: calls exact; min and max against the shortest and longest call; the percentiles against
/// the nearest-rank ones within the histogram's 1.6% (of the outer bound, the most perfgraph may have
/// measured), plus the tolerance.
fn latency(w: &mut Worst, t: &Table, names: &BTreeMap<String, PathTruth>) {
    let out = "report: latency";
    for row in &t.rows {
        let name = &row.cells[0];
        let Some(truth) = names.get(name) else {
            w.exact(
                out,
                &format!("{name}: a section the program ran"),
                false,
                true,
            );
            continue;
        };
        w.exact(
            out,
            &format!("{name}: calls"),
            row.cells[t.col("Calls")].parse::<u64>().unwrap(),
            truth.calls,
        );
        let Some(d) = &truth.durations else { continue };
        for (col, p) in [
            ("Min(ms)", 0.0),
            ("p50(ms)", 50.0),
            ("p90(ms)", 90.0),
            ("p99(ms)", 99.0),
            ("Max(ms)", 100.0),
        ] {
            let cell = &row.cells[t.col(col)];
            let exact = d.percentile(p);
            w.time(
                out,
                &format!("{name}: {col}"),
                text::ns(cell, MILLI),
                exact,
                text::resolution(cell, MILLI) + histogram_ns(p, exact),
            );
        }
    }
}

/// `Threads:`: per thread, its time alive (its first section to its exit: for `main`, the end of the
/// program's run), its time in top-level sections, and its calls, exact.
fn threads(w: &mut Worst, t: &Table, truth: &Truth) {
    let out = "report: threads";
    for (name, alive, busy, calls) in thread_truths(truth) {
        let Some(row) = t.row(&name) else {
            w.exact(out, &format!("{name}: has a row"), false, true);
            continue;
        };
        let cell = &row.cells[t.col("Alive(s)")];
        w.between(
            out,
            &format!("{name}: Alive(s)"),
            text::ns(cell, SECOND),
            alive,
            text::resolution(cell, SECOND),
        );
        let cell = &row.cells[t.col("In sections(s)")];
        w.time(
            out,
            &format!("{name}: In sections(s)"),
            text::ns(cell, SECOND),
            busy,
            text::resolution(cell, SECOND),
        );
        w.exact(
            out,
            &format!("{name}: calls"),
            row.cells[t.col("Calls")].parse::<u64>().unwrap(),
            calls,
        );
    }
}

/// Per thread: (name, alive ns as bounds, time in top-level sections, calls at all depths). A thread is
/// alive from its first section's start (between its outer and inner start) to its exit: for `main`, the
/// end of the program's run; for another, some time between its last call's end and the program's join
/// of it, which is all the program can know.
pub fn thread_truths(truth: &Truth) -> Vec<(String, (u64, u64), Bounds, u64)> {
    truth
        .threads()
        .into_iter()
        .map(|(name, calls)| {
            let paths = truth.paths_on(Some(&name));
            let busy = paths
                .iter()
                .filter(|(p, _)| p.len() == 1)
                .map(|(_, t)| t.total.unwrap())
                .sum();
            let first = Bounds {
                low: calls.iter().map(|c| c.start().low).min().unwrap(),
                high: calls.iter().map(|c| c.start().high).min().unwrap(),
            };
            let last = calls.iter().map(|c| c.end_ns).max().unwrap();
            let (low, high) = if name == "main" {
                (truth.wall_ns(), truth.wall_ns())
            } else {
                (last, truth.joined_ns(&name).unwrap_or(last))
            };
            // A future is one call (at its first poll), as the truth counts it.
            let n = paths.values().map(|p| p.calls).sum::<u64>();
            (name, (low - first.high, high - first.low), busy, n)
        })
        .collect()
}

/// `Locks:`: 6 acquisitions; the waits and holds summed and their maxima, against the program's own.
fn locks(w: &mut Worst, t: &Table, truth: &Truth) {
    let out = "report: locks";
    let acq = truth.lock_acquisitions();
    let row = t.row("truth_lock").expect("a truth_lock row");
    w.exact(
        out,
        "acquisitions",
        row.cells[t.col("Acquisitions")].parse::<usize>().unwrap(),
        acq.len(),
    );
    let (waits, holds): (Vec<u64>, Vec<u64>) = acq.iter().map(|(_, w, h)| (*w, *h)).unzip();
    for (col, unit, truth) in [
        ("Wait(s)", SECOND, waits.iter().sum::<u64>()),
        ("Max wait(ms)", MILLI, *waits.iter().max().unwrap()),
        ("Hold(s)", SECOND, holds.iter().sum::<u64>()),
        ("Max hold(ms)", MILLI, *holds.iter().max().unwrap()),
    ] {
        let cell = &row.cells[t.col(col)];
        w.time(
            out,
            col,
            text::ns(cell, unit),
            Bounds::single(truth),
            text::resolution(cell, unit),
        );
    }
    // One thread waited (a wait far longer than an uncontended one), and no more threads than there are
    // can wait at once: two, when the one handed the lock has not run yet (a busy machine) and the other
    // asks again.
    let threads = acq
        .iter()
        .map(|(t, _, _)| t)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let waiters: usize = row.cells[t.col("Max waiters")].parse().unwrap();
    let waited = waits.iter().any(|w| *w > 1_000_000);
    w.exact(
        out,
        &format!("max waiters {waiters}: at least 1, at most the {threads} threads"),
        (!waited || waiters >= 1) && waiters <= threads,
        true,
    );
}

/// A counter's value as the tables print it: an integer when it is one, else 6 significant digits.
pub fn printed(v: f64) -> f64 {
    format!("{v:.5e}").parse().unwrap()
}

fn counters(w: &mut Worst, t: &Table, truth: &Truth) {
    let out = "report: counters";
    for c in truth.raw["counters"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let Some(row) = t.row(name) else {
            w.exact(out, &format!("{name}: has a row"), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("{name}: samples"),
            row.cells[t.col("Samples")].parse::<u64>().unwrap(),
            c["samples"].as_u64().unwrap(),
        );
        for (col, key) in [
            ("Last", "last"),
            ("Min", "min"),
            ("Max", "max"),
            ("Mean", "mean"),
        ] {
            let got: f64 = row.cells[t.col(col)].parse().unwrap();
            w.exact(
                out,
                &format!("{name}: {col}"),
                got,
                printed(c[key].as_f64().unwrap()),
            );
        }
    }
}

fn async_table(w: &mut Worst, t: &Table, truth: &Truth) {
    let out = "report: async";
    let name = truth.raw["future"]["name"].as_str().unwrap();
    let polls = truth.raw["future"]["polls"].as_u64().unwrap();
    let call = truth.one(name);
    let (life, busy) = (call.duration(), call.busy());
    let row = t.row(name).expect("a row for the future");
    w.exact(out, "calls", row.cells[t.col("Calls")].as_str(), "1");
    w.exact(
        out,
        "polls",
        row.cells[t.col("Polls")].parse::<u64>().unwrap(),
        polls,
    );
    w.exact(
        out,
        "cancelled",
        row.cells[t.col("Cancelled")].as_str(),
        "0",
    );
    // The program timed the future's whole life, and each poll from inside; its busy time lies between
    // its polls so timed and its life (they follow each other at once, each re-polled as soon as it is
    // pending).
    for (col, unit, truth) in [
        ("Busy(s)", SECOND, busy),
        ("Mean poll(ms)", MILLI, busy.per(polls)),
        ("Wall(s)", SECOND, life),
        ("Max wall(s)", SECOND, life),
    ] {
        let cell = &row.cells[t.col(col)];
        w.time(
            out,
            col,
            text::ns(cell, unit),
            truth,
            text::resolution(cell, unit),
        );
    }
}

/// `Allocations:`: `alloc_known`'s 100 allocations of 100,000 bytes in all, exact (its own and with its
/// children); the sections that allocate nothing, 0.
fn alloc(w: &mut Worst, t: &Table, truth: &Truth, names: &BTreeMap<String, PathTruth>) {
    let out = "report: alloc";
    let a = &truth.raw["allocs"];
    let section = a["section"].as_str().unwrap();
    let row = t.row(section).expect("a row for the allocating section");
    let mb = format!("{:.3}", a["bytes"].as_u64().unwrap() as f64 / 1e6);
    let count = a["count"].as_u64().unwrap().to_string();
    for (col, truth) in [
        ("Allocs", &count),
        ("Alloc(MB)", &mb),
        ("Self allocs", &count),
        ("Self alloc(MB)", &mb),
    ] {
        w.exact(
            out,
            &format!("{section}: {col}"),
            row.cells[t.col(col)].as_str(),
            truth.as_str(),
        );
    }
    for none in a["none"].as_array().into_iter().flatten() {
        let name = none.as_str().unwrap();
        if !names.contains_key(name) {
            continue;
        }
        let Some(row) = t.row(name) else {
            w.exact(out, &format!("{name}: has a row"), false, true);
            continue;
        };
        for col in ["Allocs", "Self allocs"] {
            w.exact(
                out,
                &format!("{name} (allocates nothing): {col}"),
                row.cells[t.col(col)].as_str(),
                "0",
            );
        }
    }
}
