//! Which end-of-run reports to print (`PERFGRAPH_REPORT`): the selection, and its comma list parsed.

/// Which end-of-run reports to print (`PERFGRAPH_REPORT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReportSelection {
    /// `graph`: the call-graph table.
    pub graph: bool,
    /// `branch`: the heaviest branch.
    pub branch: bool,
    /// `sections[=N]`: the N heaviest sections by self time.
    pub sections: Option<usize>,
    /// `threads`: per-thread summary.
    pub threads: bool,
    /// `async`: per async section (timed futures), calls, polls, busy and wall time, cancellations.
    pub asyncs: bool,
    /// `alloc`: per section, its allocations and bytes (self and inclusive) and its peak heap growth; shown
    /// only when the counting allocator (`perfgraph_core::CountingAllocator`) is installed.
    pub alloc: bool,
    /// `cpu`: per section measuring its CPU time (the `cpu` option, `PERFGRAPH_CPU=all`), its CPU and waiting
    /// time; shown only when some section measured it.
    pub cpu: bool,
    /// `latency`: per section, its calls' durations (minimum, p50, p90, p99, maximum); as many sections
    /// as `sections` shows (10 without it).
    pub latency: bool,
    /// `counters`: per `counter!`, its samples, last, minimum, maximum and mean; shown only when some
    /// counter was set.
    pub counters: bool,
    /// `locks`: per lock name (`perfgraph_core::sync`), its acquisitions, waits and holds; shown only when
    /// some lock was used.
    pub locks: bool,
    /// `critical`: the critical path of the run (which sections decided when it ended), with its wait
    /// chains. Not in `all`: it keeps every call and wait of the run in memory until the exit (within
    /// perfgraph's 64 MiB output budget), as a trace does.
    pub critical: bool,
}

impl ReportSelection {
    /// True when nothing is selected.
    pub fn is_empty(&self) -> bool {
        *self == ReportSelection::default()
    }

    /// Every table, as `PERFGRAPH_REPORT=all` selects them (the 10 heaviest sections; `Allocations:` and
    /// `CPU:` only for a run that has their figures), but `critical`, which is named on its own. Start from it, or from `default()` (nothing), and
    /// set the tables with the methods named as the fields:
    ///
    /// ```
    /// use perfgraph_core::config::ReportSelection;
    ///
    /// let some = ReportSelection::default().graph(true).sections(Some(3)).latency(true);
    /// assert!(some.graph && some.latency && !some.threads);
    /// assert_eq!(some.sections, Some(3));
    /// assert!(ReportSelection::all().cpu);
    /// assert!(!ReportSelection::all().critical);
    /// assert!(ReportSelection::all().critical(true).critical);
    /// ```
    pub fn all() -> ReportSelection {
        ReportSelection {
            graph: true,
            branch: true,
            sections: Some(10),
            threads: true,
            asyncs: true,
            alloc: true,
            cpu: true,
            latency: true,
            counters: true,
            locks: true,
            critical: false,
        }
    }

    /// With the `sections` table of the N heaviest sections, or without it (`None`).
    pub fn sections(mut self, n: Option<usize>) -> ReportSelection {
        self.sections = n;
        self
    }
}

/// The tables that are simply on or off: for each, its field, the builder method of the same name
/// (`ReportSelection::default().graph(true)`), and its name in `PERFGRAPH_REPORT`'s list.
macro_rules! switches {
    ($($field:ident = $name:literal;)*) => {
        impl ReportSelection {
            $(
                #[doc = concat!("With or without the `", $name, "` table.")]
                pub fn $field(mut self, on: bool) -> ReportSelection {
                    self.$field = on;
                    self
                }
            )*

            /// The switch of the table named `name` in `PERFGRAPH_REPORT`'s list, if it is one.
            fn switch(&mut self, name: &str) -> Option<&mut bool> {
                match name {
                    $($name => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

switches! {
    graph = "graph";
    branch = "branch";
    threads = "threads";
    asyncs = "async";
    alloc = "alloc";
    cpu = "cpu";
    latency = "latency";
    counters = "counters";
    locks = "locks";
    critical = "critical";
}

/// The reports a comma list selects, and the entries that name none (left out). `None` when the list has
/// entries and none of them is good: the whole value is then refused.
pub(super) fn parse_report(v: &str) -> (Option<ReportSelection>, Vec<String>) {
    let mut r = ReportSelection::default();
    let mut bad = Vec::new();
    let mut good = 0;
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "sections" => r.sections = Some(10),
            // Every table; a `sections=N` and a `critical` given before are kept.
            "all" => {
                r = ReportSelection::all()
                    .sections(r.sections.or(Some(10)))
                    .critical(r.critical)
            }
            "off" | "none" => {}
            _ => {
                let n = item
                    .strip_prefix("sections=")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&n| n >= 1);
                if let Some(on) = r.switch(item) {
                    *on = true;
                } else if n.is_some() {
                    r.sections = n;
                } else {
                    bad.push(item.to_owned());
                    continue;
                }
            }
        }
        good += 1;
    }
    if good == 0 && !bad.is_empty() {
        return (None, bad);
    }
    (Some(r), bad)
}
