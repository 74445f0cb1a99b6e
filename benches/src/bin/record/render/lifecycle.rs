//! The lifecycle section: thread churn, the address-space limit and fork, at full size, against the targets
//! of the issue that asked for them.

use std::fmt::Write as _;

use super::fmt;
use crate::measure::lifecycle::Lifecycle;

/// Resident growth allowed over the same churn at `PERFGRAPH_VERBOSITY=off`, KiB.
const CHURN_GROWTH_KIB: f64 = 32.0 * 1024.0;
/// Wall time allowed, as a ratio to the same churn at `PERFGRAPH_VERBOSITY=off`.
const CHURN_RATIO: f64 = 1.3;

/// The section's heading, which [`replace`] looks for.
const HEADING: &str = "## Real programs' lifecycles, at full size\n";

/// `doc` with its lifecycle section replaced by one rendered from `l` (appended if it has none).
pub fn replace(doc: &str, l: &Lifecycle) -> String {
    let mut section = String::new();
    write(&mut section, l);
    fmt::replace_section(doc, HEADING, &section)
}

/// The section, or a line saying it was not measured.
pub fn write(doc: &mut String, l: &Lifecycle) {
    doc.push_str(HEADING);
    doc.push('\n');
    if l.churn.is_none() && l.limited.is_none() && l.forks.is_none() {
        doc.push_str(
            "Not measured: `record` was not given the output of the full-size tests (`--lifecycle`).\n",
        );
        return;
    }
    doc.push_str(
        "The tests `perfgraph-core/tests/thread_churn.rs` and `tests/fork.rs`, release build, at full size \
         (`THREAD_CHURN_N=100000 cargo test --release -p perfgraph-core --test thread_churn -- --nocapture \
         --test-threads=1`, three times; `cargo test --release -p perfgraph-core --test fork -- --nocapture`). \
         Each churn child starts 100,000 short threads, 8 at a time, 5 sections each; the recording one \
         writes `PERFGRAPH_JSON`, whose call and thread counts the test checks exactly. Peak resident set \
         from `wait4`'s `ru_maxrss`; wall time from spawn to exit.\n\n",
    );
    if let Some(c) = &l.churn {
        let growth = c.on_kib - c.off_kib;
        let ratio = c.on_s / c.off_s;
        let _ = writeln!(
            doc,
            "| {} churned threads (median of {} runs, by recording time) | recording | \
             `PERFGRAPH_VERBOSITY=off` | growth / ratio | target |\n|---|---:|---:|---:|---|\n\
             | peak resident KiB | {:.0} | {:.0} | +{:.0} KiB | ≤ +{:.0} KiB: {} |\n\
             | wall s | {:.2} | {:.2} | {} | ≤ {CHURN_RATIO}×: {} |\n",
            c.threads,
            l.runs,
            c.on_kib,
            c.off_kib,
            growth,
            CHURN_GROWTH_KIB,
            fmt::check(Some(growth <= CHURN_GROWTH_KIB)),
            c.on_s,
            c.off_s,
            fmt::ratio(Some(ratio)),
            fmt::check(Some(ratio <= CHURN_RATIO)),
        );
    }
    if let Some(m) = &l.limited {
        let _ = writeln!(
            doc,
            "Under an address-space limit of {} KiB (`ulimit -v {}`): {} churned threads finished, recording, \
             in {:.2} s, peak resident {:.0} KiB, counts exact.\n",
            m.limit_kib, m.limit_kib, m.threads, m.on_s, m.on_kib
        );
    }
    if let Some(t) = &l.traced {
        let allowed = 2 * t.off_vm_peak_kib + 200_000;
        let _ = writeln!(
            doc,
            "With a trace (`PERFGRAPH_TRACE`, 10 MiB rings) under `ulimit -v {}`: {} churned threads finished \
             in {:.2} s, counts exact; peak address space (`VmPeak`) {} KiB, {} KiB at \
             `PERFGRAPH_VERBOSITY=off` (target ≤ 2× that + 200 MB = {} KiB: {}).\n",
            t.limit_kib,
            t.threads,
            t.on_s,
            t.vm_peak_kib,
            t.off_vm_peak_kib,
            allowed,
            if t.vm_peak_kib <= allowed {
                "met"
            } else {
                "missed"
            }
        );
    }
    if let Some(f) = &l.forks {
        let _ = writeln!(
            doc,
            "fork: {} children forked while other threads record, call `report()` and `combined()`; {} hung, \
             {} failed a check; from fork to the child's exit {} µs on average, {} µs at most.\n",
            f.forks, f.hangs, f.errors, f.mean_us, f.max_us
        );
    }
}
