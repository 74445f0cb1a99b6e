//! `perfgraph report <pid>`: its text tables read back, each figure against the truth, within the
//! tolerance plus the resolution it was printed with.

use std::collections::HashMap;

use crate::common::truth::{Truth, Worst, histogram_ns};
use crate::model::{self, Expected, printed_ns};

/// A table of the report: its header cells and its rows' cells (the first cell keeps its indentation).
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The row whose first cell, trimmed, is `name`.
    pub fn row(&self, name: &str) -> Option<&Vec<String>> {
        self.rows.iter().find(|r| r[0].trim() == name)
    }
}

fn cells(line: &str) -> Vec<String> {
    let inner = line
        .trim_end()
        .strip_prefix('|')
        .unwrap()
        .strip_suffix('|')
        .unwrap();
    inner
        .split('|')
        .map(|c| c.strip_prefix(' ').unwrap_or(c).trim_end().to_owned())
        .collect()
}

/// Every table of the report by its title (`Performance Graph`): a title line `Title:`, a rule, the
/// header, a rule, the rows, a rule.
pub fn tables(text: &str) -> HashMap<String, Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = HashMap::new();
    let mut i = 0;
    while i + 3 < lines.len() {
        let title = lines[i].trim_end();
        let rule = |l: &str| !l.is_empty() && l.bytes().all(|b| b == b'-');
        if let Some(title) = title.strip_suffix(':')
            && rule(lines[i + 1])
            && lines[i + 2].starts_with('|')
            && rule(lines[i + 3])
        {
            let header = cells(lines[i + 2]);
            let mut rows = Vec::new();
            i += 4;
            while i < lines.len() && lines[i].starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.insert(title.to_owned(), Table { header, rows });
        }
        i += 1;
    }
    out
}

/// Seconds printed with 3 decimals: half a millisecond.
const S3: u64 = 500_000;

fn count(cell: &str) -> u64 {
    cell.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {cell:?}"))
}

fn num(cell: &str) -> f64 {
    cell.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell:?}"))
}

/// `cell` in ns, printed in `unit` (1e9 for seconds, 1e6 for ms) with its decimals: (ns, resolution).
fn in_unit(cell: &str, unit: f64) -> (u64, u64) {
    let (ns, res) = printed_ns(cell);
    let scale = unit / 1e9;
    (
        (ns as f64 * scale).round() as u64,
        (res as f64 * scale).ceil() as u64,
    )
}

/// The report's tables, read: each got by its name with the columns it must have.
struct Report<'a> {
    tables: HashMap<String, Table>,
    text: &'a str,
}

impl Report<'_> {
    /// A table, whose columns must be the ones read.
    fn table(&self, name: &str, header: &[&str]) -> &Table {
        let table = self
            .tables
            .get(name)
            .unwrap_or_else(|| panic!("no {name:?} table in:\n{}", self.text));
        let got: Vec<&str> = table.header.iter().map(|h| h.trim()).collect();
        assert_eq!(got, header, "{name}'s columns");
        table
    }
}

/// The report of the held program (before any phase) against the truth.
pub fn check(w: &mut Worst, out: &str, text: &str, truth: &Truth) {
    let report = Report {
        tables: tables(text),
        text,
    };
    let expected = model::expected(truth);
    graph(w, out, &report, truth, &expected);
    heaviest_and_latency(w, out, &report, &expected);
    threads_and_future(w, out, &report, truth);
    allocs_and_cpu(w, out, &report, truth);
    counters_and_locks(w, out, &report, truth);
}

/// Performance Graph: depth and calls exact, total, average and self time.
fn graph(w: &mut Worst, out: &str, report: &Report, truth: &Truth, expected: &[Expected]) {
    // Performance Graph: a row per call path (each name on one path here).
    let graph = report.table(
        "Performance Graph",
        &[
            "Section", "Calls", "Self(s)", "Avg(s)", "%", "Mem(MB)", "Total(s)", "Avg(s)", "%",
            "Mem(MB)",
        ],
    );
    for e in expected {
        let Some(r) = graph.row(e.name) else {
            w.exact(out, &format!("graph {} present", e.name), false, true);
            continue;
        };
        let depth = (r[0].len() - r[0].trim_start().len()) / 2;
        w.exact(
            out,
            &format!("graph {} depth", e.name),
            depth,
            e.path.split('/').count(),
        );
        w.exact(
            out,
            &format!("graph {} calls", e.name),
            count(&r[1]),
            e.calls,
        );
        if e.name != "truth_future" {
            let (got, res) = printed_ns(&r[6]);
            w.time(
                out,
                &format!("graph {} total", e.name),
                got,
                e.total,
                res.max(S3),
            );
            let (got, res) = printed_ns(&r[7]);
            w.time(
                out,
                &format!("graph {} avg", e.name),
                got,
                e.total.per(e.calls),
                res.max(S3),
            );
            if let Some(s) = e.self_time {
                let (got, res) = printed_ns(&r[2]);
                w.time(out, &format!("graph {} self", e.name), got, s, res.max(S3));
            }
        }
    }
    let ticks = model::ticks(truth)[0].1;
    w.exact(
        out,
        "graph tick calls",
        graph.row("tick").map(|r| count(&r[1])),
        Some(ticks),
    );
}

/// Heaviest Sections and Latency.
fn heaviest_and_latency(w: &mut Worst, out: &str, report: &Report, expected: &[Expected]) {
    // Heaviest Sections (the 10 with the most self time): calls and self time.
    let heaviest = report.table(
        "Heaviest Sections",
        &["Section", "Calls", "Self(s)", "Avg.", "%", "Mem(MB)"],
    );
    for r in &heaviest.rows {
        let name = r[0].trim();
        let Some(e) = expected.iter().find(|e| e.name == name) else {
            continue;
        };
        w.exact(
            out,
            &format!("heaviest {name} calls"),
            count(&r[1]),
            e.calls,
        );
        if let (Some(s), false) = (e.self_time, name == "truth_future") {
            let (got, res) = printed_ns(&r[2]);
            w.time(out, &format!("heaviest {name} self"), got, s, res.max(S3));
        }
    }

    // Latency (ms): min, percentiles and max of each section's calls.
    let latency = report.table(
        "Latency",
        &[
            "Section", "Calls", "Min(ms)", "p50(ms)", "p90(ms)", "p99(ms)", "Max(ms)",
        ],
    );
    for r in &latency.rows {
        let name = r[0].trim();
        let Some(e) = expected.iter().find(|e| e.name == name) else {
            continue;
        };
        w.exact(out, &format!("latency {name} calls"), count(&r[1]), e.calls);
        for (i, what, p) in [
            (2, "min", 0.0),
            (3, "p50", 50.0),
            (4, "p90", 90.0),
            (5, "p99", 99.0),
            (6, "max", 100.0),
        ] {
            let (got, res) = in_unit(&r[i], 1e6);
            let exact = e.percentile(p);
            let res = res + histogram_ns(p, exact);
            w.time(out, &format!("latency {name} {what}"), got, exact, res);
        }
    }
}

/// Threads and Async Sections.
fn threads_and_future(w: &mut Worst, out: &str, report: &Report, truth: &Truth) {
    // Threads: calls and time in sections.
    let threads = report.table(
        "Threads",
        &[
            "Thread",
            "Alive(s)",
            "In sections(s)",
            "%",
            "CPU(s)",
            "CPU %",
            "Calls",
        ],
    );
    for thread in ["main", "locker-a", "locker-b"] {
        let Some(r) = threads.row(thread) else {
            w.exact(out, &format!("threads {thread} present"), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("threads {thread} calls"),
            count(&r[6]),
            model::thread_calls(truth, thread),
        );
        let (got, res) = printed_ns(&r[2]);
        w.time(
            out,
            &format!("threads {thread} in sections"),
            got,
            model::thread_busy(truth, thread),
            res,
        );
    }

    // Async Sections: the future's calls, polls and wall time.
    let future = report.table(
        "Async Sections",
        &[
            "Section",
            "Calls",
            "Polls",
            "Busy(s)",
            "Mean poll(ms)",
            "Wall(s)",
            "Max wall(s)",
            "Cancelled",
        ],
    );
    match future.row("truth_future") {
        Some(r) => {
            w.exact(out, "async truth_future calls", count(&r[1]), 1);
            w.exact(
                out,
                "async truth_future polls",
                count(&r[2]),
                truth.raw["future"]["polls"].as_u64().unwrap(),
            );
            let (got, res) = printed_ns(&r[5]);
            w.time(
                out,
                "async truth_future wall",
                got,
                truth.one("truth_future").duration(),
                res,
            );
            w.exact(out, "async truth_future cancelled", count(&r[7]), 0);
        }
        None => w.exact(out, "async truth_future present", false, true),
    }
}

/// Allocations, exact, and CPU.
fn allocs_and_cpu(w: &mut Worst, out: &str, report: &Report, truth: &Truth) {
    // Allocations (MB of 10^6 bytes, 3 decimals): alloc_known's exactly; none where nothing allocates.
    let allocs = report.table(
        "Allocations",
        &[
            "Section",
            "Calls",
            "Allocs",
            "Alloc(MB)",
            "Self allocs",
            "Self alloc(MB)",
            "Peak(MB)",
        ],
    );
    let a = &truth.raw["allocs"];
    let mb = |bytes: u64| format!("{:.3}", bytes as f64 / 1e6);
    match allocs.row("alloc_known") {
        Some(r) => {
            let (n, bytes) = (a["count"].as_u64().unwrap(), a["bytes"].as_u64().unwrap());
            w.exact(out, "allocations alloc_known allocs", count(&r[2]), n);
            w.exact(
                out,
                "allocations alloc_known MB",
                r[3].trim().to_owned(),
                mb(bytes),
            );
            w.exact(out, "allocations alloc_known self allocs", count(&r[4]), n);
            w.exact(
                out,
                "allocations alloc_known self MB",
                r[5].trim().to_owned(),
                mb(bytes),
            );
        }
        None => w.exact(out, "allocations alloc_known present", false, true),
    }
    for name in &model::allocate_nothing(truth) {
        if let Some(r) = allocs.row(name) {
            w.exact(out, &format!("allocations {name} allocs"), count(&r[2]), 0);
        }
    }

    // CPU: cpu_spin's CPU time.
    match report
        .table(
            "CPU",
            &[
                "Section",
                "Calls",
                "Total(s)",
                "CPU(s)",
                "Waiting(s)",
                "CPU %",
            ],
        )
        .row("cpu_spin")
    {
        Some(r) => {
            let (got, res) = printed_ns(&r[3]);
            w.time(out, "cpu cpu_spin cpu", got, model::cpu_spin_ns(truth), res);
            let (got, res) = printed_ns(&r[2]);
            w.time(out, "cpu cpu_spin total", got, truth.total("cpu_spin"), res);
        }
        None => w.exact(out, "cpu cpu_spin present", false, true),
    }
}

/// Counters, exact, and Locks.
fn counters_and_locks(w: &mut Worst, out: &str, report: &Report, truth: &Truth) {
    // Counters: exact.
    let c = &truth.raw["counters"][0];
    match report
        .table(
            "Counters",
            &["Counter", "Samples", "Last", "Min", "Max", "Mean"],
        )
        .row(c["name"].as_str().unwrap())
    {
        Some(r) => {
            for (i, f) in [
                (1, "samples"),
                (2, "last"),
                (3, "min"),
                (4, "max"),
                (5, "mean"),
            ] {
                w.exact(
                    out,
                    &format!("counters {f}"),
                    num(&r[i]),
                    c[f].as_f64().unwrap(),
                );
            }
        }
        None => w.exact(out, "counters present", false, true),
    }

    // Locks: acquisitions exactly, waits and holds (s and ms) within the tolerance.
    let (n, wait, max_wait, hold, max_hold) = model::lock(truth);
    match report
        .table(
            "Locks",
            &[
                "Lock",
                "Acquisitions",
                "Contended",
                "Wait(s)",
                "Max wait(ms)",
                "Hold(s)",
                "Max hold(ms)",
                "Max waiters",
            ],
        )
        .row(truth.raw["locks"]["name"].as_str().unwrap())
    {
        Some(r) => {
            w.exact(out, "locks acquisitions", count(&r[1]), n);
            let (got, res) = printed_ns(&r[3]);
            w.time(out, "locks wait", got, wait, res);
            let (got, res) = in_unit(&r[4], 1e6);
            w.time(out, "locks max wait", got, max_wait, res);
            let (got, res) = printed_ns(&r[5]);
            w.time(out, "locks hold", got, hold, res);
            let (got, res) = in_unit(&r[6], 1e6);
            w.time(out, "locks max hold", got, max_hold, res);
        }
        None => w.exact(out, "locks present", false, true),
    }
}
