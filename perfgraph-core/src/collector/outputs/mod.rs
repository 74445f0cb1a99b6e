//! End-of-run outputs (reports, trace, folded stacks, JSON) and interval statistics: the glue between the
//! background thread's hooks and the pure renderers in [`report`](mod@crate::report) and
//! [`export`](crate::export).
//!
//! Everything here runs on the background thread. At exit ([`Outputs::finish`], after live print has
//! finished) it prints the last partial interval and the selected reports, writes the files, then prints
//! any file error; a file that cannot be written costs one error line and nothing else.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::files;
use super::net::prometheus::Prometheus;
use super::output::{Output, Sample};
use super::interval::{self, Interval, Intervals};
use super::live::screen;
use super::net::listen::Peer;
use super::trace::Trace;
use crate::base::clock::{self, Ticks};
use crate::base::config::{Config, ReportSelection, TraceFormat};
use crate::base::{identity, process, registry, sys};
use crate::export::trace::{Identity, Losses};
use crate::export::{folded, json};
use crate::local::record::Record;
use crate::local::thread::ThreadState;
use crate::local::threads;
use crate::local::{marks, ring, snapshot};

/// An output path with its `{pid}`, `{rank}` and `{host}` placeholders filled in for this process.
fn expanded(path: &std::path::Path) -> PathBuf {
    identity::expand(path, sys::process_id(), identity::rank(), identity::host())
}

/// Who writes the trace: the process's identity, which the trace's header carries.
fn identity() -> Identity {
    Identity {
        pid: sys::process_id(),
        rank: identity::rank(),
        host: identity::host().to_owned(),
        start_unix_ns: identity::start_unix_ns(),
        program: process::program_name().to_owned(),
    }
}

/// A trace window (`perfgraph trace`).
struct Window {
    trace: Trace,
    /// Ticks at which it ends.
    end: u64,
    /// The records each thread had lost to ring overflow when it opened: only those lost since are the
    /// window's.
    dropped_before: Vec<(String, u64)>,
    /// A second descriptor of the client's connection, looked at every pass: a client that has gone (killed,
    /// or stopped by a failed write of its own) ends the window then, not at its end time, which may be a
    /// day away. `None` if it could not be had (out of descriptors): the window then runs its time.
    client: Option<Peer>,
}

/// State of the at-exit outputs, owned by the background thread.
pub(crate) struct Outputs {
    /// The settings (the report needs to know whether an output needs every record).
    config: Config,
    report: ReportSelection,
    /// `PERFGRAPH_INTERVAL` (ns) and the interval being accumulated.
    interval: Option<(u64, Intervals)>,
    /// `PERFGRAPH_TRACE`, streamed as the program runs.
    trace: Option<Trace>,
    /// A trace window a `perfgraph trace` client asked for, the ticks at which it ends, and the records
    /// each thread had lost to ring overflow when it opened (only those lost since are the window's).
    window: Option<Window>,
    folded: Option<PathBuf>,
    json: Option<PathBuf>,
    /// Thread names by index, for the trace and the interval statistics, which name threads that may
    /// have been folded (and left the live list) by the time they are written.
    names: HashMap<u32, String>,
}

impl Outputs {
    pub(crate) fn new(config: &Config) -> Outputs {
        Outputs {
            config: config.clone(),
            report: config.report,
            interval: config
                .interval_ns
                // From the run's start, as the report's times: the first interval holds the calls that
                // ended before the background thread made this.
                .map(|ns| {
                    (
                        ns,
                        Intervals::new(clock::scale().base().0, config.interval_depth),
                    )
                }),
            trace: config.trace.as_deref().map(|path| {
                Trace::open(
                    &expanded(path),
                    config.trace_limit,
                    config.trace_compress,
                    &identity(),
                )
            }),
            window: None,
            folded: config.folded.as_deref().map(expanded),
            json: config.json.as_deref().map(expanded),
            names: HashMap::new(),
        }
    }

    /// Records `thread` completed since the last pass, in completion order.
    /// The trace ends at `ticks` (the exit's last drain comes next): records that end later are not
    /// written, and its closing event is at that time.
    pub(crate) fn end_trace_at(&mut self, ticks: u64) {
        if let Some(trace) = &mut self.trace {
            trace.end_at(ticks);
        }
        if let Some(w) = &mut self.window {
            w.trace.end_at(ticks.min(w.end));
        }
    }

    /// Opens a trace window of `seconds` for a control-socket client (`perfgraph trace`): from now on
    /// every record is drained and written to it too, with what a trace wants recorded (args, events,
    /// counters, locks), until it ends ([`Outputs::window_due`]). One at a time: a second gets its peer
    /// back with the reason.
    pub(crate) fn open_window(
        &mut self,
        peer: Peer,
        seconds: f64,
        perfetto: bool,
    ) -> Result<(), (Peer, String)> {
        if self.window.is_some() {
            return Err((
                peer,
                "busy: a trace window is being recorded already".to_owned(),
            ));
        }
        let mut peer = peer;
        if crate::base::sys::send(peer.stream(), b"ok\n").is_err() {
            return Ok(());
        }
        let client = peer.watcher().ok();
        let format = if perfetto {
            TraceFormat::Perfetto
        } else {
            TraceFormat::Chrome
        };
        let trace = Trace::window(
            files::Stream::socket(peer),
            format,
            self.config.trace_limit,
            self.config.trace_compress,
            &identity(),
        );
        let end = clock::now().0 + clock::scale().ticks((seconds * 1e9) as u64).0;
        let before = ring_dropped(&threads::all());
        self.window = Some(Window {
            trace,
            end,
            dropped_before: before,
            client,
        });
        self.share_texts();
        marks::set_wanted(true);
        Ok(())
    }

    /// Whether a trace window is open: the rings are then drained at every pass.
    pub(crate) fn window_open(&self) -> bool {
        self.window.is_some()
    }

    /// Before the drain: if the window's time is up (`now` ticks), it ends at its end time, so the drain
    /// that follows brings every call that ended by then; if its client has gone, it ends now, whether or
    /// not anything was being written to it (nobody is left to read it, and the process would pay for the
    /// window and turn every other `perfgraph trace` away until its end time). Returns whether it did
    /// ([`Outputs::end_window`] comes after the drain).
    pub(crate) fn window_due(&mut self, now: u64) -> bool {
        match &mut self.window {
            Some(w) if now >= w.end => {
                w.trace.end_at(w.end);
                true
            }
            Some(w) if w.client.as_ref().is_some_and(Peer::gone) => {
                w.end = now;
                w.trace.end_at(now);
                true
            }
            _ => false,
        }
    }

    /// After the drain that followed [`Outputs::window_due`]: the window's closing event, and its
    /// client with what it has not taken yet.
    pub(crate) fn end_window(&mut self) -> Option<(Peer, Vec<u8>)> {
        let Window {
            trace,
            dropped_before: before,
            ..
        } = self.window.take()?;
        marks::set_wanted(self.trace.is_some());
        self.share_texts();
        let threads = threads::all();
        trace.finish_window(&threads, window_losses(self.losses(&threads), &before))
    }

    /// With two traces (the file's and a window), the window is fed first and copies the text args; the
    /// file's takes them.
    fn share_texts(&mut self) {
        if let Some(w) = &mut self.window {
            w.trace.takes_texts = self.trace.is_none();
        }
    }

    /// What the traces lack that is not theirs to know: ring overflow, threads without a ring.
    fn losses(&self, threads: &[Arc<ThreadState>]) -> Losses {
        Losses {
            ring_overflow: ring_dropped(threads),
            unmapped_ring_threads: ring::unmapped(),
            ..Losses::default()
        }
    }

    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if self.interval.is_some() && !self.names.contains_key(&thread.index) {
            self.names.insert(thread.index, thread.name.clone());
        }
        if let Some((_, intervals)) = &mut self.interval {
            // Nested lines find their callers among what is still open (see `interval`).
            let open: Vec<(u32, u64)> = match intervals.depth() {
                1 => Vec::new(),
                _ => thread
                    .open_frames()
                    .iter()
                    .map(|f| (f.section, f.start))
                    .collect(),
            };
            intervals.on_records(thread.index, records, &open);
        }
        if let Some(w) = &mut self.window {
            w.trace.on_records(thread, records);
        }
        if let Some(trace) = &mut self.trace {
            trace.on_records(thread, records);
        }
    }

    /// Marks (futures' lives, instant events) `thread` pushed since the last pass.
    pub(crate) fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        if let Some(w) = &mut self.window {
            w.trace.on_marks(thread, marks);
        }
        if let Some(trace) = &mut self.trace {
            trace.on_marks(thread, marks);
        }
    }

    /// A resident-memory sample taken at `ticks`; the trace samples each thread's CPU time with it, and
    /// the process's heap when the counting allocator counts.
    pub(crate) fn on_memory(&mut self, sample: &Sample) {
        let window = self.window.as_mut().map(|w| &mut w.trace);
        // The heap and the threads are read once for both traces (the file's and a window), and only if
        // there is one.
        for trace in self.trace.iter_mut().chain(window) {
            trace.on_memory(sample.ticks, sample.bytes);
            if let Some(heap) = sample.heap() {
                trace.on_heap(sample.ticks, heap);
            }
            trace.on_cpu(sample.ticks, sample.threads());
        }
    }

    /// Thread `state` has exited and is about to be folded: off the live list, its final CPU time still
    /// counts in the interval it exited in.
    pub(crate) fn on_retiring(&mut self, state: &ThreadState) {
        if let Some((_, intervals)) = &mut self.interval {
            intervals.thread_ended(state.index, state.read_cpu());
        }
    }

    /// Live print printed `text` at `ticks`.
    pub(crate) fn on_printed(&mut self, ticks: u64, text: &str) {
        let window = self.window.as_mut().map(|w| &mut w.trace);
        for trace in self.trace.iter_mut().chain(window) {
            trace.on_printed(ticks, text);
        }
    }

    /// Before the background thread drains the rings: if an interval is due, it ends now, with a snapshot of
    /// the top-level sections running; the drain that follows brings every call that ended before it.
    pub(crate) fn before_drain(&mut self, now: u64) {
        if let Some((interval_ns, intervals)) = &mut self.interval
            && !intervals.closing()
            && now >= due(intervals.start(), *interval_ns)
        {
            let threads = threads::all();
            intervals.begin_close(
                now,
                running(&threads, intervals.depth()),
                cpu_times(&threads),
            );
        }
    }

    /// After the drain: prints the interval that `before_drain` ended, if any. Returns how long (ns) the
    /// background thread may sleep before the next interval is due.
    pub(crate) fn tick(&mut self, now: u64) -> Option<u64> {
        let window_wait = self.window.as_mut().and_then(|w| w.trace.tick());
        let trace_wait = match (self.trace.as_mut().and_then(Trace::tick), window_wait) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some((interval_ns, intervals)) = self.interval.as_mut() else {
            return trace_wait;
        };
        if let Some(closed) = intervals.finish_close() {
            let text = format_interval(&closed, &self.names);
            if !text.is_empty() {
                screen::write_block(&text);
            }
            if let Some(trace) = &mut self.trace {
                trace.on_interval(&closed, thread_names(&self.names));
            }
        }
        let due = due(intervals.start(), *interval_ns);
        let wait = clock::scale().delta_ns(Ticks(due.saturating_sub(now))) + 1;
        Some(trace_wait.map_or(wait, |t| t.min(wait)))
    }

    /// Process exit, after live print finished: print the last partial interval and the reports, then
    /// write the files, then print one line per file that could not be written (and the trace's line on
    /// what it lacks). The files are written as they are rendered, so a tree of millions of nodes costs no
    /// copy of itself as text, and the renderers report progress as they go, so a slow but moving exit is
    /// never given up. The reports come first so that a file that takes no writes (a named pipe nobody
    /// reads, a stuck disk), which the exit handler gives up on, cannot take them with it; stderr itself
    /// never holds this up for more than 100 ms.
    pub(crate) fn finish(&mut self) {
        let threads = threads::all();
        let mut block = String::new();
        if let Some((_, intervals)) = &mut self.interval {
            // After the final drain: every call that ended is in.
            let depth = intervals.depth();
            let closed = intervals.close(
                clock::now().0,
                running(&threads, depth),
                cpu_times(&threads),
            );
            block.push_str(&format_interval(&closed, &self.names));
            if let Some(trace) = &mut self.trace {
                trace.on_interval(&closed, thread_names(&self.names));
            }
        }
        let need_report = !self.report.is_empty() || self.folded.is_some();
        let report = need_report.then(|| snapshot::report(&self.config));
        // With nothing else needing a report, the JSON is written from the snapshots themselves, which holds
        // each tree once where a report holds the threads' trees and the merged tree at once; taken now,
        // when the report would be.
        let mut json_only =
            (!need_report && self.json.is_some()).then(|| snapshot::parts(&self.config));
        if let Some(r) = &report {
            block.push_str(&r.render(&self.report));
        }
        if !block.is_empty() {
            screen::write_block(&block);
        }
        process::progress();
        let mut notes = String::new();
        let mut results = Vec::new();
        if let Some(Window {
            trace: window,
            dropped_before: before,
            ..
        }) = self.window.take()
        {
            // The client gets the rest within a second (the stream's `finish`); no line on stderr: the
            // client's trace says what it lacks.
            let _ = window.finish(&threads, window_losses(self.losses(&threads), &before));
        }
        if let Some(trace) = self.trace.take() {
            let losses = self.losses(&threads);
            if let Some(line) = trace.finish(&threads, losses) {
                notes.push_str(&line);
                notes.push('\n');
            }
            process::progress();
        }
        if let (Some(path), Some(r)) = (&self.folded, &report) {
            results.push(files::write_file("PERFGRAPH_FOLDED", path, |w| {
                folded::write(w, &r.tree)
            }));
        }
        if let Some(path) = &self.json {
            results.push(match (&report, json_only.take()) {
                (Some(r), _) => files::write_file("PERFGRAPH_JSON", path, |w| json::write(w, r)),
                (None, Some((run, threads))) => files::write_file("PERFGRAPH_JSON", path, |w| {
                    json::write_snapshots(w, run, threads)
                }),
                (None, None) => Ok(()),
            });
        }
        for line in results.into_iter().filter_map(Result::err) {
            notes.push_str(&line);
            notes.push('\n');
        }
        if !notes.is_empty() {
            screen::write_block(&notes);
        }
    }
}

/// A window's losses: the ring overflow since it opened (`before`: each thread's count then).
fn window_losses(mut losses: Losses, before: &[(String, u64)]) -> Losses {
    for (name, count) in &mut losses.ring_overflow {
        if let Some((_, then)) = before.iter().find(|(n, _)| n == name) {
            *count = count.saturating_sub(*then);
        }
    }
    losses.ring_overflow.retain(|(_, n)| *n > 0);
    losses
}

/// When the interval that started at `start` ends (ticks); recomputed each pass, as the tick length is
/// re-calibrated while the run goes on.
fn due(start: u64, interval_ns: u64) -> u64 {
    start + clock::scale().ticks(interval_ns).0
}

/// Sections running now down to `depth` levels: `(thread, call path, start ticks)`.
fn running(threads: &[Arc<ThreadState>], depth: usize) -> interval::Running {
    let mut out = Vec::new();
    for t in threads {
        let mut path = Vec::new();
        for frame in t.open_frames().into_iter().take(depth) {
            path.push(frame.section);
            out.push((t.index, path.clone(), frame.start));
        }
    }
    out
}

/// Each live thread's CPU time now (a system call each), for the interval statistics.
fn cpu_times(threads: &[Arc<ThreadState>]) -> interval::Cpu {
    threads.iter().map(|t| (t.index, t.read_cpu())).collect()
}

fn format_interval(closed: &Interval, names: &HashMap<u32, String>) -> String {
    let name = thread_names(names);
    interval::format(closed, clock::scale(), name, section_name)
}

/// A thread's name by index: as recorded with its calls, else as the live list has it, else `thread-<i>`.
fn thread_names(names: &HashMap<u32, String>) -> impl Fn(u32) -> String + '_ {
    let live = threads::all();
    move |t| {
        names
            .get(&t)
            .cloned()
            .or_else(|| live.iter().find(|s| s.index == t).map(|s| s.name.clone()))
            .unwrap_or_else(|| format!("thread-{t}"))
    }
}

fn section_name(section: u32) -> String {
    registry::info(section).map_or_else(|| format!("section-{section}"), |i| i.name.to_owned())
}

/// Threads that lost records to ring overflow, with how many: `(name, count)`; the live ones in `threads`,
/// then the folded ones by group.
fn ring_dropped(threads: &[Arc<ThreadState>]) -> Vec<(String, u64)> {
    let (_, retired) = threads::view();
    threads
        .iter()
        .map(|t| {
            // Relaxed: written by this (the background) thread only.
            let dropped = t.dropped.load(std::sync::atomic::Ordering::Relaxed);
            (t.name.clone(), dropped)
        })
        .chain(retired.iter().map(|g| (g.shown_name(), g.dropped)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The outputs `config` asks for, in the order the background thread feeds them: the one place an output
/// is added.
pub(crate) fn list(config: &Config) -> Vec<Box<dyn Output>> {
    let mut list: Vec<Box<dyn Output>> = Vec::new();
    if let Some(prometheus) = Prometheus::of(config) {
        list.push(Box::new(prometheus));
    }
    list
}
