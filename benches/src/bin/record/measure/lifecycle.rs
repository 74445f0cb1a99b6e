//! Real programs' lifecycles at full size: 100,000 churned threads (with and without recording, and under
//! `ulimit -v 4000000`) and 200 forks while other threads record. These are the tests of
//! `perfgraph-core/tests/thread_churn.rs` and `tests/fork.rs`, run by `benches/run.sh` at full size
//! (`THREAD_CHURN_N=100000`, three times; `FORK_COUNT=200`), whose output it saves; this reads their
//! figure lines from that file:
//!
//! - `churn: threads N on_kib K on_s S off_kib K off_s S`
//! - `churn limited: threads N limit_kib L on_kib K on_s S`
//! - `churn traced: threads N limit_kib L vm_peak_kib P off_vm_peak_kib O on_s S`
//! - `forks N hangs H errors E mean_us M max_us X`

use std::path::Path;

use perfgraph_benches::stats::median;

/// One churn run: recording (default settings, `PERFGRAPH_JSON` written and its counts checked by the test)
/// and the same program at `PERFGRAPH_VERBOSITY=off`.
#[derive(Debug, Clone, PartialEq)]
pub struct Churn {
    /// Threads started, 8 at a time, 5 sections each.
    pub threads: u64,
    /// Peak resident set of the recording run (`wait4`'s `ru_maxrss`), KiB.
    pub on_kib: f64,
    /// Its wall time, s.
    pub on_s: f64,
    /// Peak resident set at `PERFGRAPH_VERBOSITY=off`, KiB.
    pub off_kib: f64,
    /// Its wall time, s.
    pub off_s: f64,
}

/// The churn under an address-space limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Limited {
    /// Threads started.
    pub threads: u64,
    /// The limit (`RLIMIT_AS`), KiB.
    pub limit_kib: u64,
    /// Peak resident set, KiB.
    pub on_kib: f64,
    /// Wall time, s.
    pub on_s: f64,
}

/// The churn with a trace (10 MiB rings) under an address-space limit: its peak address space.
#[derive(Debug, Clone, PartialEq)]
pub struct Traced {
    /// Threads started.
    pub threads: u64,
    /// The limit (`RLIMIT_AS`), KiB.
    pub limit_kib: u64,
    /// Peak address space (`VmPeak`) of the traced run, KiB.
    pub vm_peak_kib: u64,
    /// The same of the run at `PERFGRAPH_VERBOSITY=off`, KiB.
    pub off_vm_peak_kib: u64,
    /// Wall time of the traced run, s.
    pub on_s: f64,
}

/// The fork test's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Forks {
    /// Children forked.
    pub forks: u64,
    /// Children that did not exit within the test's hang bound.
    pub hangs: u64,
    /// Children that failed a check (or printed a perfgraph line).
    pub errors: u64,
    /// Mean time from fork to the child's exit, µs.
    pub mean_us: u64,
    /// Longest, µs.
    pub max_us: u64,
}

/// What the file held; each part `None` (and `runs` 0) when it is missing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lifecycle {
    /// The churn run with the median recording wall time.
    pub churn: Option<Churn>,
    /// Churn runs read.
    pub runs: usize,
    /// The limited run (the last one read).
    pub limited: Option<Limited>,
    /// The traced run under a limit (the last one read).
    pub traced: Option<Traced>,
    /// The fork summary (the last one read).
    pub forks: Option<Forks>,
}

impl Lifecycle {
    /// Reads the saved test output at `path`; an absent or unreadable file gives nothing measured.
    pub fn read(path: Option<&Path>) -> Lifecycle {
        let text = path
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default();
        Lifecycle::parse(&text)
    }

    /// The figures in `text` (test output with other lines around them).
    pub fn parse(text: &str) -> Lifecycle {
        let mut churns = Vec::new();
        let mut limited = None;
        let mut traced = None;
        let mut forks = None;
        for line in text.lines() {
            // The tests' lines may follow the harness's own `test <name> ... ` on the same line.
            let line = ["churn limited: ", "churn traced: ", "churn: ", "forks "]
                .iter()
                .find_map(|marker| line.find(marker).map(|at| &line[at..]))
                .unwrap_or(line);
            if let Some(rest) = line.strip_prefix("churn limited: ") {
                let f = Fields(rest);
                limited = (|| {
                    Some(Limited {
                        threads: f.int("threads")?,
                        limit_kib: f.int("limit_kib")?,
                        on_kib: f.num("on_kib")?,
                        on_s: f.num("on_s")?,
                    })
                })();
            } else if let Some(rest) = line.strip_prefix("churn traced: ") {
                let f = Fields(rest);
                traced = (|| {
                    Some(Traced {
                        threads: f.int("threads")?,
                        limit_kib: f.int("limit_kib")?,
                        vm_peak_kib: f.int("vm_peak_kib")?,
                        off_vm_peak_kib: f.int("off_vm_peak_kib")?,
                        on_s: f.num("on_s")?,
                    })
                })();
            } else if let Some(rest) = line.strip_prefix("churn: ") {
                let f = Fields(rest);
                churns.extend((|| {
                    Some(Churn {
                        threads: f.int("threads")?,
                        on_kib: f.num("on_kib")?,
                        on_s: f.num("on_s")?,
                        off_kib: f.num("off_kib")?,
                        off_s: f.num("off_s")?,
                    })
                })());
            } else if line.starts_with("forks ") {
                let f = Fields(line);
                forks = (|| {
                    Some(Forks {
                        forks: f.int("forks")?,
                        hangs: f.int("hangs")?,
                        errors: f.int("errors")?,
                        mean_us: f.int("mean_us")?,
                        max_us: f.int("max_us")?,
                    })
                })();
            }
        }
        let runs = churns.len();
        Lifecycle {
            churn: median(churns, |c| c.on_s),
            runs,
            limited,
            traced,
            forks,
        }
    }
}

/// `name value` pairs separated by spaces.
struct Fields<'a>(&'a str);

impl Fields<'_> {
    fn word(&self, name: &str) -> Option<&str> {
        let mut words = self.0.split_whitespace();
        words.by_ref().find(|w| *w == name)?;
        words.next()
    }

    fn num(&self, name: &str) -> Option<f64> {
        self.word(name)?.parse().ok()
    }

    fn int(&self, name: &str) -> Option<u64> {
        self.word(name)?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_figure_lines_among_test_output() {
        let text = "running 4 tests\n\
            churn: threads 100000 on_kib 27280 on_s 4.600 off_kib 3380 off_s 4.000\n\
            churn: threads 100000 on_kib 27000 on_s 4.400 off_kib 3300 off_s 3.900\n\
            churn: threads 100000 on_kib 28000 on_s 5.000 off_kib 3400 off_s 4.100\n\
            churn limited: threads 100000 limit_kib 4000000 on_kib 26000 on_s 4.700\n\
            test result: ok.\n\
            forks 200 hangs 0 errors 0 mean_us 4500 max_us 9000\n";
        let l = Lifecycle::parse(text);
        assert_eq!(l.runs, 3);
        let c = l.churn.unwrap();
        assert_eq!((c.on_s, c.off_s, c.on_kib), (4.6, 4.0, 27280.0));
        assert_eq!(l.limited.unwrap().limit_kib, 4_000_000);
        let f = l.forks.unwrap();
        assert_eq!(
            (f.forks, f.hangs, f.errors, f.mean_us, f.max_us),
            (200, 0, 0, 4500, 9000)
        );
    }

    #[test]
    fn reads_lines_that_follow_the_harness_test_name() {
        let text = "test churn_under_ulimit_v_4000000_finishes ... churn limited: threads 100000 \
            limit_kib 4000000 on_kib 28884 on_s 5.360\n\
            test churned_threads_cost_little_memory_and_time ... churn: threads 100000 on_kib 29148 \
            on_s 4.545 off_kib 3672 off_s 4.358\n";
        let l = Lifecycle::parse(text);
        assert_eq!(l.runs, 1);
        assert_eq!(l.churn.unwrap().off_kib, 3672.0);
        assert_eq!(l.limited.unwrap().on_kib, 28884.0);
    }

    #[test]
    fn a_missing_file_measures_nothing() {
        assert_eq!(Lifecycle::read(None), Lifecycle::default());
        assert_eq!(Lifecycle::parse("churn: threads x"), Lifecycle::default());
    }
}
