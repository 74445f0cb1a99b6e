//! The locks and counters panes of `perfgraph top`: the report's `Locks:` and `Counters:` tables (the
//! figures of the process's dump), as rows. Sorted as the other panes by `s`: locks by time waited (total),
//! held (self), acquisitions (calls) or name; counters by samples (calls), else by name as in the report.

use super::model::{Snapshot, Sort, Table, Ui, matches, secs};

/// Each lock name of `perfgraph_core::sync`: acquisitions, those that waited, time waited and held (sums
/// in seconds, maxima in ms), and the most threads waiting at once.
pub fn locks(s: &Snapshot, ui: &Ui) -> Table {
    let mut locks: Vec<_> = s
        .report
        .run
        .locks
        .iter()
        .filter(|l| matches(&l.name, &ui.filter))
        .collect();
    match ui.sort {
        Sort::Total => locks.sort_by_key(|l| std::cmp::Reverse(l.wait_ns)),
        Sort::SelfTime => locks.sort_by_key(|l| std::cmp::Reverse(l.hold_ns)),
        Sort::Calls => locks.sort_by_key(|l| std::cmp::Reverse(l.acquisitions)),
        Sort::Name => locks.sort_by(|a, b| a.name.cmp(&b.name)),
    }
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let rows = locks
        .iter()
        .map(|l| {
            vec![
                l.name.clone(),
                l.acquisitions.to_string(),
                l.contended.to_string(),
                secs(l.wait_ns),
                ms(l.max_wait_ns),
                secs(l.hold_ns),
                ms(l.max_hold_ns),
                l.max_waiters.to_string(),
            ]
        })
        .collect();
    Table {
        header: vec![
            "Lock",
            "Acquisitions",
            "Contended",
            "Wait(s)",
            "Max wait(ms)",
            "Hold(s)",
            "Max hold(ms)",
            "Max waiters",
        ],
        rows,
        keep: vec![0, 5, 6, 7, 3, 4, 2, 1],
        none: "No lock of perfgraph_core::sync used yet.",
    }
}

/// Each `counter!` by name: its samples and the last, smallest, largest and mean value set.
pub fn counters(s: &Snapshot, ui: &Ui) -> Table {
    let mut counters: Vec<_> = s
        .report
        .run
        .counters
        .iter()
        .filter(|c| matches(&c.name, &ui.filter))
        .collect();
    match ui.sort {
        Sort::Calls => counters.sort_by_key(|c| std::cmp::Reverse(c.samples)),
        _ => counters.sort_by(|a, b| a.name.cmp(&b.name)),
    }
    let rows = counters
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.samples.to_string(),
                value(c.last),
                value(c.min),
                value(c.max),
                value(c.mean()),
            ]
        })
        .collect();
    Table {
        header: vec!["Counter", "Samples", "Last", "Min", "Max", "Mean"],
        rows,
        keep: vec![0, 2, 6, 3, 4, 5],
        none: "No counter! set yet.",
    }
}

/// A counter value as the report's `Counters:` table shows it: an integer as such, else up to 6
/// significant digits, in exponent form when very large or small.
fn value(v: f64) -> String {
    if v.is_nan() || v.is_infinite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let a = v.abs();
    if (1e-4..1e9).contains(&a) {
        let digits = 5usize.saturating_sub(a.log10().floor().max(0.0) as usize);
        let s = format!("{v:.digits$}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        format!("{v:.5e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::view::{Pane, table, tests_support::snapshot};

    #[test]
    fn locks_and_counters_are_the_reports_tables() {
        let mut ui = Ui {
            pane: Pane::Locks,
            ..Ui::default()
        };
        let t = table(&snapshot(), &ui);
        assert_eq!(
            t.rows[0],
            [
                "queue", "12000", "150", "0.043", "3.200", "0.910", "12.400", "3"
            ]
        );
        assert_eq!(t.rows[1][0], "log");
        ui.sort = Sort::Calls;
        ui.pane = Pane::Counters;
        let t = table(&snapshot(), &ui);
        assert_eq!(
            t.rows[0],
            ["residual", "4", "0.0031", "0.0031", "0.5", "0.19578"]
        );
        assert_eq!(t.rows[1], ["queue_depth", "3", "7", "3", "12", "7.33333"]);
        assert_eq!(value(1e-9), "1.00000e-9");
        ui.filter = "nothing".into();
        assert!(table(&snapshot(), &ui).rows.is_empty());
    }
}
