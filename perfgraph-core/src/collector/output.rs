//! The seam between the background thread and what it feeds: every output (interval lines, reports,
//! the trace, folded stacks, JSON, a trace window, Prometheus, OTLP, the control socket) is an
//! [`Output`], built from the settings in one place ([`outputs::list`](super::outputs::list)), and the
//! collector calls each one's hooks in that list's order, knowing none by name.
//!
//! Every hook has a default that does nothing, so an output writes only those it needs (fastrace's
//! `Reporter` and puffin's `FrameSink` are the models). Live print is not one: it decides when the rings
//! are drained, keeps an exited thread from being folded while it shows one of its calls, and what it
//! prints is fed to the outputs ([`Output::on_printed`]).

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Duration;

use crate::base::heap;
use crate::local::record::Record;
use crate::local::thread::ThreadState;
use crate::local::threads;

/// Whether an output needs every record the threads make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Every {
    /// No: the call trees are enough (reports, metrics), the rings are drained on the usual schedule.
    No,
    /// Yes: the rings are drained at every pass, the passes paced by how fast they fill (OTLP's spans).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    Paced,
    /// Yes, and nothing may be lost even when a thread starts recording fast after a quiet spell: the
    /// drains never wait longer than a quarter of a ring takes to fill at
    /// [`LOSSLESS_RATE`](super::LOSSLESS_RATE) (the trace, interval lines, a trace window).
    Lossless,
}

/// What an output's look between passes ([`Output::poll`]) asks of the background thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// Nothing to look at between passes: the thread may sleep until its next pass.
    Never,
    /// Look again within this long (zero: a pass now).
    #[cfg_attr(
        not(any(feature = "listen", feature = "prometheus", feature = "otlp")),
        allow(dead_code)
    )]
    Within(Duration),
    /// Drain the rings now, then look again (a trace window's calls start after what the rings hold).
    DrainFirst,
}

/// A resident-memory sample, with what the outputs read beside it, read once for all of them and only
/// if one asks.
pub(crate) struct Sample {
    /// When it was taken (ticks).
    pub ticks: u64,
    /// The resident set (bytes).
    pub bytes: u64,
    heap: OnceCell<Option<i64>>,
    threads: OnceCell<Vec<Arc<ThreadState>>>,
}

impl Sample {
    pub(crate) fn new(ticks: u64, bytes: u64) -> Sample {
        Sample {
            ticks,
            bytes,
            heap: OnceCell::new(),
            threads: OnceCell::new(),
        }
    }

    /// The process's heap, when the counting allocator counts.
    pub(crate) fn heap(&self) -> Option<i64> {
        *self
            .heap
            .get_or_init(|| heap::counting().then(heap::process_heap))
    }

    /// The live threads.
    pub(crate) fn threads(&self) -> &[Arc<ThreadState>] {
        self.threads.get_or_init(threads::all)
    }
}

/// An output the background thread feeds. The hooks come in the order a pass calls them; the last four
/// are the exit's, in that order.
pub(crate) trait Output {
    /// Whether it needs every record now (asked at every pass: a trace window opens and ends).
    fn every_record(&self) -> Every {
        Every::No
    }

    /// A resident-memory sample was taken.
    fn on_memory(&mut self, _sample: &Sample) {}

    /// Before the rings are drained (`now` ticks): what ends now ends before the drain, so a call that
    /// ends meanwhile is in the records that follow.
    fn before_drain(&mut self, _now: u64) {}

    /// Marks (futures' lives, instant events) `thread` pushed since its last drain; before its records.
    fn on_marks(&mut self, _thread: &ThreadState, _marks: &[Record]) {}

    /// Calls `thread` ended since its last drain, in the order they ended (never empty). A text arg an
    /// output takes (`Args::take`) is gone for the outputs after it in the list.
    fn on_records(&mut self, _thread: &ThreadState, _records: &[Record]) {}

    /// `thread`'s ring lost `records` to overflow since its last drain.
    fn on_lost(&mut self, _thread: &ThreadState, _records: u64) {}

    /// `thread` exited, its last records drained, and is about to be folded (`threads::retire`).
    fn on_retiring(&mut self, _thread: &ThreadState) {}

    /// The thread of index `index` was folded: nothing more comes of it.
    fn on_retired(&mut self, _index: u32) {}

    /// After the drain (or the pass that did not drain), `mono` monotonic ns.
    fn after_drain(&mut self, _mono: u64) {}

    /// Live print printed `text` at `ticks`.
    fn on_printed(&mut self, _ticks: u64, _text: &str) {}

    /// The pass's end (`now` ticks): how long (ns) until the output wants the next pass, if it does.
    fn tick(&mut self, _now: u64) -> Option<u64> {
        None
    }

    /// Between passes (`mono` monotonic ns): accept, read, write, never wait.
    fn poll(&mut self, _mono: u64) -> Look {
        Look::Never
    }

    /// The exit begins: stop taking clients (nobody connects to a process that will not answer).
    fn close(&mut self) {}

    /// Records that end after `ticks` are not the output's (the exit's last drain comes next).
    fn end_at(&mut self, _ticks: u64) {}

    /// The exit's first step, after the last drain: what goes on stderr (the reports), before any output
    /// writes a file or a socket, so one that takes no writes cannot take the reports with it.
    fn print_at_exit(&mut self) {}

    /// The exit's last step: write what is left, within the time the exit allows (each step reported with
    /// `process::progress`).
    fn finish(&mut self) {}
}
