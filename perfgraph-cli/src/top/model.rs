//! What `perfgraph top` works on: the last snapshot of the process, the UI's state (pane, sort key, top N,
//! filter), a table of rows, and the figures' formats, shared by the panes' builders (`view`, `figures`).

use perfgraph_core::data::Report;

/// A thread and what it runs now (from the process's `status`).
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadNow {
    /// Its index, as a wait names its holder.
    pub index: u32,
    pub name: String,
    pub alive_ns: u64,
    pub cpu_ns: u64,
    /// What it runs, outermost first: (section, ns since it started).
    pub running: Vec<(String, u64)>,
    /// What it waits for now, if it is blocked in a primitive of `perfgraph_core::sync`.
    pub waiting: Option<WaitNow>,
}

/// A wait under way: on what, held by which thread (by index) when it began, for how long (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitNow {
    pub on: String,
    pub holder: Option<u32>,
    pub ns: u64,
}

/// The last snapshot of the process.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub pid: u32,
    pub program: String,
    pub wall_ns: u64,
    pub rss_bytes: u64,
    pub heap_bytes: Option<i64>,
    pub threads: Vec<ThreadNow>,
    pub report: Report,
}

/// The panes, in the order of their keys `1`..`7`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Running,
    Graph,
    Sections,
    Threads,
    Locks,
    Counters,
    Waits,
}

impl Pane {
    pub const ALL: [Pane; 7] = [
        Pane::Running,
        Pane::Graph,
        Pane::Sections,
        Pane::Threads,
        Pane::Locks,
        Pane::Counters,
        Pane::Waits,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Running => "Running",
            Pane::Graph => "Call graph",
            Pane::Sections => "Heaviest sections",
            Pane::Threads => "Threads",
            Pane::Locks => "Locks",
            Pane::Counters => "Counters",
            Pane::Waits => "Wait chains",
        }
    }

    /// The title in a word, for the tabs of a terminal too narrow for [`Pane::title`].
    pub fn short(self) -> &'static str {
        match self {
            Pane::Graph => "Graph",
            Pane::Sections => "Sections",
            Pane::Waits => "Waits",
            p => p.title(),
        }
    }
}

/// What the call graph and the sections are sorted by (`s` cycles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    Total,
    SelfTime,
    Calls,
    Name,
}

impl Sort {
    pub fn next(self) -> Sort {
        match self {
            Sort::Total => Sort::SelfTime,
            Sort::SelfTime => Sort::Calls,
            Sort::Calls => Sort::Name,
            Sort::Name => Sort::Total,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Sort::Total => "total",
            Sort::SelfTime => "self",
            Sort::Calls => "calls",
            Sort::Name => "name",
        }
    }
}

/// Rows shown with the top-N toggle on.
pub const TOP_N: usize = 10;

/// The UI's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Ui {
    pub pane: Pane,
    pub sort: Sort,
    pub top_n: bool,
    /// The name filter applied (case-insensitive substring), and the one being typed after `/`.
    pub filter: String,
    pub typing: Option<String>,
}

impl Default for Ui {
    fn default() -> Ui {
        Ui {
            pane: Pane::Running,
            sort: Sort::Total,
            top_n: false,
            filter: String::new(),
            typing: None,
        }
    }
}

/// A table: its header and rows of cells; `first` is how far the first cell of each row is indented.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    /// Each column's rank on a narrow terminal: 0 for a name (elided with `…`, never dropped), else a
    /// figure, the lowest dropped first (`fit::columns`).
    pub keep: Vec<u8>,
    /// What the pane says instead of a table when the process recorded nothing of its kind.
    pub none: &'static str,
}

/// Seconds with three decimals.
pub fn secs(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// A duration for a person: `850 ns`, `12.4 µs`, `3.2 ms`, `1.25 s`.
pub fn short(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        _ => format!("{:.2} s", ns as f64 / 1e9),
    }
}

/// Bytes as MB with one decimal.
pub fn mb(bytes: i64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn matches(name: &str, filter: &str) -> bool {
    filter.is_empty() || name.to_lowercase().contains(&filter.to_lowercase())
}
