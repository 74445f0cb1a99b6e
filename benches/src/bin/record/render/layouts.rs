//! What limits the disabled cost, with the short processes' figures and a verdict on whether they agreed.

use std::fmt::Write as _;

use perfgraph_benches::stats::median;

use super::fmt;
use crate::measure::layouts::{self, Layouts};

/// Processes whose figures lie within this many nanoseconds of each other are said to agree.
const AGREE_NS: f64 = 0.3;

/// Every process measured, with ASLR and without.
fn all(l: &Layouts) -> Vec<f64> {
    l.aslr.iter().chain(&l.fixed).copied().collect()
}

/// Whether the printed figures (both sets) span more than [`AGREE_NS`].
fn moved(l: &Layouts) -> bool {
    fmt::range(&all(l)).is_some_and(|(lo, hi)| hi - lo > AGREE_NS)
}

/// One sentence on whether the processes agreed, covering both sets, computed from the figures.
fn verdict(l: &Layouts) -> String {
    let Some((lo, hi)) = fmt::range(&all(l)) else {
        return String::new();
    };
    if hi - lo <= AGREE_NS {
        let sets = if l.fixed.is_empty() || l.aslr.is_empty() {
            ""
        } else {
            ", with ASLR and without,"
        };
        return format!(
            "In this run all {} processes{sets} agreed within {AGREE_NS} ns.",
            l.aslr.len() + l.fixed.len()
        );
    }
    let set = |v: &[f64]| match fmt::range(v) {
        None => "were not measured".to_owned(),
        Some((lo, hi)) if hi - lo <= AGREE_NS => format!("agreed within {AGREE_NS} ns"),
        Some((lo, hi)) => format!("moved by {:.2} ns from one process to another", hi - lo),
    };
    let mut s = format!(
        "In this run the figure moved: with ASLR the processes {}; with ASLR off they {}",
        set(&l.aslr),
        set(&l.fixed)
    );
    let each_agreed = [&l.aslr, &l.fixed]
        .iter()
        .all(|v| fmt::range(v).is_some_and(|(lo, hi)| hi - lo <= AGREE_NS));
    if each_agreed {
        let _ = write!(
            s,
            ", but the two sets differ (medians {} and {} ns)",
            fmt::ns2(median(l.aslr.clone(), |&ns| ns)),
            fmt::ns2(median(l.fixed.clone(), |&ns| ns))
        );
    }
    s.push('.');
    s
}

/// Writes what limits the disabled cost, with every short process's figure, sorted.
pub fn write(doc: &mut String, l: &Layouts) {
    let list = |v: &[f64]| {
        if v.is_empty() {
            return "not measured".to_owned();
        }
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let over = l.aslr.iter().filter(|&&x| x > 1.0).count();
    let verdict = verdict(l);
    let verdict = if verdict.is_empty() {
        verdict
    } else {
        verdict + " "
    };
    let cause = if moved(l) {
        "What makes one process slower than another (which accesses collide, and whether the virtual\n\
         layout, the physical pages or the machine's other work decides it) is not pinned down by these runs;\n\
         the instructions run are the same in every process."
    } else {
        "The instructions run are the same in every process."
    };
    let _ = writeln!(
        doc,
        "### What limits the disabled cost\n\n\
         A section off by verbosity costs a load of the threshold and a branch, then a load of the site's\n\
         `skipped` flag and a not-taken branch (so the reports can name the sections the verbosity skipped).\n\
         In the benchmark's empty leaf it\n\
         also gives the leaf a stack frame (a push and a pop around the check, for the call the enabled path\n\
         makes), and the threshold is read through the GOT, as rustc reaches another crate's statics. The same\n\
         binary, started {runs} times (`--bench '{filter}'`,\n\
         {secs} s each), added per process (ns, sorted): {aslr}; {over} of {runs} above 1 ns. With ASLR off\n\
         (`setarch -R`, {fixed_runs} processes, the same virtual layout each time): {fixed}. {verdict}{cause}\n",
        runs = l.aslr.len(),
        filter = layouts::filter(),
        secs = layouts::MEASUREMENT_SECS,
        aslr = list(&l.aslr),
        fixed_runs = l.fixed.len(),
        fixed = list(&l.fixed),
    );
}

#[cfg(test)]
mod tests {
    use super::{Layouts, moved, verdict, write};

    fn layouts(aslr: &[f64], fixed: &[f64]) -> Layouts {
        Layouts {
            aslr: aslr.to_vec(),
            fixed: fixed.to_vec(),
        }
    }

    #[test]
    fn verdict_covers_both_sets() {
        // ASLR processes agree, the ASLR-off ones do not: the verdict must say the figure moved.
        let l = layouts(&[0.20, 0.31, 0.49], &[-0.29, 0.32, 0.87, 0.94]);
        assert!(moved(&l));
        let v = verdict(&l);
        assert!(v.contains("with ASLR the processes agreed"), "{v}");
        assert!(v.contains("with ASLR off they moved by 1.23 ns"), "{v}");
    }

    #[test]
    fn verdict_when_all_agree() {
        let l = layouts(&[0.30, 0.31], &[0.29, 0.33]);
        assert!(!moved(&l));
        assert_eq!(
            verdict(&l),
            "In this run all 4 processes, with ASLR and without, agreed within 0.3 ns."
        );
    }

    #[test]
    fn verdict_when_the_sets_differ() {
        let l = layouts(&[0.30, 0.31], &[0.90, 0.92]);
        assert!(moved(&l));
        let v = verdict(&l);
        assert!(
            v.contains("but the two sets differ (medians 0.31 and 0.92 ns)"),
            "{v}"
        );
    }

    #[test]
    fn verdict_without_figures() {
        assert_eq!(verdict(&layouts(&[], &[])), "");
    }

    #[test]
    fn figures_are_listed_sorted_as_measured() {
        let mut doc = String::new();
        write(&mut doc, &layouts(&[0.337, 1.5, 0.291], &[0.305]));
        assert!(
            doc.contains(
                "started 3 times (`--bench '^one_thread/(floor/empty_call|perfgraph/disabled_by_verbosity)$'`,\n\
                 1 s each), added per process (ns, sorted): 0.29, 0.34, 1.50; 1 of 3 above 1 ns."
            ),
            "{doc}"
        );
        assert!(
            doc.contains("(`setarch -R`, 1 processes, the same virtual layout each time): 0.30. In this run the figure moved: with ASLR the processes moved by 1.21 ns from one process to another; with ASLR off they agreed within 0.3 ns. What makes one process slower"),
            "{doc}"
        );
    }

    #[test]
    fn without_processes_it_says_not_measured() {
        let mut doc = String::new();
        write(&mut doc, &layouts(&[], &[]));
        assert!(
            doc.contains("(ns, sorted): not measured; 0 of 0 above 1 ns."),
            "{doc}"
        );
        assert!(
            doc.ends_with(
                "each time): not measured. The instructions run are the same in every process.\n\n"
            ),
            "{doc}"
        );
    }
}
