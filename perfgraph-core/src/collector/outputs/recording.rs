//! What is made of the recording itself: interval statistics, the trace streamed to its file, the run kept
//! for its critical path (`PERFGRAPH_REPORT=critical`, `collector::critical`), the resident memory for
//! the HTML page, and at exit the reports, folded stacks, JSON and the page; the glue between the background thread's hooks and the pure
//! renderers in [`report`](mod@crate::report) and [`export`](crate::export). One output, as the interval
//! lines are also the trace's interval events.
//!
//! Everything here runs on the background thread. At exit ([`Recording::print_at_exit`], after live
//! print has finished) it prints the last partial interval and the selected reports; then
//! ([`Recording::finish`]) it writes the files, then prints any file error; a file that cannot be written
//! costs one error line and nothing else.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::base::clock::{self, Ticks};
use crate::base::config::{Config, ReportSelection};
use crate::base::{identity, process, registry, sys};
use crate::collector::critical::Recorder;
use crate::collector::files;
use crate::collector::interval::{self, Interval, Intervals};
use crate::collector::output::{Every, Output, Sample};
use crate::collector::terminal::screen;
use crate::collector::trace::{Trace, about};
use crate::data::{Report, RunInfo, ThreadSnapshot};
use crate::export::trace::PathPiece;
use crate::export::{folded, json};
use crate::local::record::Record;
use crate::local::thread::ThreadState;
use crate::local::{snapshot, threads};
use crate::report::critical::{self, json::not_worked_out};
use crate::report::html::{Page, Series};

/// The resident memory sampled for the HTML page's plot, bounded: past [`Memory::MAX`] samples, every
/// other one is let go and only every other one taken from then on.
#[derive(Default)]
struct Memory {
    points: Vec<(u64, u64)>,
    /// Samples taken: one in `stride` is kept.
    seen: u64,
    stride: u64,
}

impl Memory {
    const MAX: usize = 8_192;

    fn push(&mut self, ticks: u64, bytes: u64) {
        let stride = self.stride.max(1);
        self.seen += 1;
        if !(self.seen - 1).is_multiple_of(stride) {
            return;
        }
        if self.points.len() >= Memory::MAX {
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride = stride * 2;
        }
        self.points.push((ticks, bytes));
    }

    /// The samples as a series in MB (10^6 bytes, as the tables and the trace), at ns from the run's
    /// start.
    fn series(&self) -> Series {
        let scale = clock::scale();
        let mut s = Series::new("Resident memory", "MB");
        for &(ticks, bytes) in &self.points {
            s.push(scale.to_ns(Ticks(ticks)), bytes as f64 / 1e6);
        }
        s
    }
}

/// An output path with its `{pid}`, `{rank}` and `{host}` placeholders filled in for this process.
fn expanded(path: &std::path::Path) -> PathBuf {
    identity::expand(path, sys::process_id(), identity::rank(), identity::host())
}

/// What the reports and files at exit are made of, taken at [`Recording::print_at_exit`] for
/// [`Recording::finish`].
#[derive(Default)]
struct AtExit {
    report: Option<Report>,
    /// The snapshots, for the JSON alone (no report needed).
    json_only: Option<(RunInfo, Vec<ThreadSnapshot>)>,
    /// The critical path (`PERFGRAPH_REPORT=critical`): its pieces for the trace, its member of the JSON.
    critical: Option<(Vec<PathPiece>, serde_json::Value)>,
    /// Its table, for the HTML page.
    critical_text: Option<String>,
}

/// State of the recording's outputs, owned by the background thread.
pub(crate) struct Recording {
    /// The settings (the report needs to know whether an output needs every record).
    config: Config,
    report: ReportSelection,
    /// `PERFGRAPH_INTERVAL` (ns) and the interval being accumulated.
    interval: Option<(u64, Intervals)>,
    /// `PERFGRAPH_TRACE`, streamed as the program runs.
    trace: Option<Trace>,
    folded: Option<PathBuf>,
    json: Option<PathBuf>,
    /// `PERFGRAPH_HTML`, and the resident memory sampled for its plot.
    html: Option<(PathBuf, Memory)>,
    /// `PERFGRAPH_REPORT=critical`: the run kept as a timeline for its critical path at exit.
    critical: Option<Recorder>,
    /// Thread names by index, for the trace and the interval statistics, which name threads that may
    /// have been folded (and left the live list) by the time they are written.
    names: HashMap<u32, String>,
    at_exit: AtExit,
}

impl Recording {
    pub(crate) fn new(config: &Config) -> Recording {
        Recording {
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
                    &about::identity(),
                )
            }),
            folded: config.folded.as_deref().map(expanded),
            json: config.json.as_deref().map(expanded),
            html: config
                .html
                .as_deref()
                .map(|p| (expanded(p), Memory::default())),
            critical: config.report.critical.then(Recorder::default),
            names: HashMap::new(),
            at_exit: AtExit::default(),
        }
    }
}

impl Output for Recording {
    /// The trace, the interval statistics and the critical path keep every record, and lose none after a
    /// quiet spell.
    fn every_record(&self) -> Every {
        if self.trace.is_some() || self.interval.is_some() || self.critical.is_some() {
            Every::Lossless
        } else {
            Every::No
        }
    }

    /// Records `thread` completed since the last pass, in completion order.
    fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
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
        if let Some(critical) = &mut self.critical {
            critical.on_records(thread, records);
        }
        if let Some(trace) = &mut self.trace {
            trace.on_records(thread, records);
        }
    }

    /// Marks (futures' lives, instant events) `thread` pushed since the last pass.
    fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        if let Some(critical) = &mut self.critical {
            critical.on_marks(thread, marks);
        }
        if let Some(trace) = &mut self.trace {
            trace.on_marks(thread, marks);
        }
    }

    /// A resident-memory sample taken at `ticks`; the trace samples each thread's CPU time with it, and
    /// the process's heap when the counting allocator counts.
    fn on_memory(&mut self, sample: &Sample) {
        if let Some(trace) = &mut self.trace {
            about::on_sample(trace, sample);
        }
        if let Some((_, memory)) = &mut self.html {
            memory.push(sample.ticks, sample.bytes);
        }
    }

    /// Thread `state` has exited and is about to be folded: off the live list, its final CPU time still
    /// counts in the interval it exited in.
    fn on_retiring(&mut self, state: &ThreadState) {
        if let Some((_, intervals)) = &mut self.interval {
            intervals.thread_ended(state.index, state.read_cpu());
        }
    }

    /// Live print printed `text` at `ticks`.
    fn on_printed(&mut self, ticks: u64, text: &str) {
        if let Some(trace) = &mut self.trace {
            trace.on_printed(ticks, text);
        }
    }

    /// Before the background thread drains the rings: if an interval is due, it ends now, with a snapshot of
    /// the top-level sections running; the drain that follows brings every call that ended before it.
    fn before_drain(&mut self, now: u64) {
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
    fn tick(&mut self, now: u64) -> Option<u64> {
        let trace_wait = self.trace.as_mut().and_then(Trace::tick);
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

    /// The trace ends at `ticks` (the exit's last drain comes next): records that end later are not
    /// written, and its closing event is at that time.
    fn end_at(&mut self, ticks: u64) {
        if let Some(critical) = &mut self.critical {
            critical.end_at(ticks);
        }
        if let Some(trace) = &mut self.trace {
            trace.end_at(ticks);
        }
    }

    /// Process exit, after live print finished: print the last partial interval and the reports. They
    /// come before any file ([`Recording::finish`]) so that a file that takes no writes (a named pipe
    /// nobody reads, a stuck disk), which the exit handler gives up on, cannot take them with it; stderr
    /// itself never holds this up for more than 100 ms.
    fn print_at_exit(&mut self) {
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
        let need_report = !self.report.is_empty() || self.folded.is_some() || self.html.is_some();
        let report = need_report.then(|| snapshot::report(&self.config));
        // With nothing else needing a report, the JSON is written from the snapshots themselves, which holds
        // each tree once where a report holds the threads' trees and the merged tree at once; taken now,
        // when the report would be.
        let json_only =
            (!need_report && self.json.is_some()).then(|| snapshot::parts(&self.config));
        let critical = self
            .critical
            .take()
            .map(|c| self.critical_path(c, &threads));
        if let Some(r) = report.as_ref().filter(|_| !self.report.is_empty()) {
            block.push_str(&r.tables(&self.report));
            if let Some((text, _, _)) = &critical {
                block.push_str("\nCritical Path:\n");
                block.push_str(text);
            }
            block.push_str(&r.footer());
        }
        if !block.is_empty() {
            screen::write_block(&block);
        }
        process::progress();
        self.at_exit = AtExit {
            report,
            json_only,
            critical_text: critical
                .as_ref()
                .map(|(text, _, _)| format!("Critical Path:\n{text}")),
            critical: critical.map(|(_, pieces, json)| (pieces, json)),
        };
    }

    /// Then write the files, then print one line per file that could not be written (and the trace's
    /// line on what it lacks). The files are written as they are rendered, so a tree of millions of nodes
    /// costs no copy of itself as text, and the renderers report progress as they go, so a slow but moving
    /// exit is never given up.
    fn finish(&mut self) {
        let threads = threads::all();
        let AtExit {
            report,
            mut json_only,
            critical,
            critical_text,
        } = std::mem::take(&mut self.at_exit);
        let (pieces, critical_json) = critical.unzip();
        let mut notes = String::new();
        let mut results = Vec::new();
        if let Some(mut trace) = self.trace.take() {
            if let Some(pieces) = &pieces {
                trace.on_path(pieces);
            }
            let losses = about::losses(&threads);
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
                (Some(r), _) => files::write_file("PERFGRAPH_JSON", path, |w| {
                    json::write_with(w, r, critical_json.as_ref())
                }),
                (None, Some((run, threads))) => files::write_file("PERFGRAPH_JSON", path, |w| {
                    json::write_snapshots(w, run, threads, critical_json.as_ref())
                }),
                (None, None) => Ok(()),
            });
        }
        if let (Some((path, memory)), Some(r)) = (&self.html, &report) {
            let page = Page {
                critical_path: critical_text,
                series: vec![memory.series()],
                ..Page::default()
            };
            results.push(files::write_file("PERFGRAPH_HTML", path, |w| {
                r.write_html(w, &page)
            }));
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

impl Recording {
    /// The critical path of the run `recorder` kept, on the trace's clock when there is a trace (so the
    /// table and the trace's track agree with `perfgraph report --critical-path` on it), else the
    /// reports': its table (or why there is none), its pieces for the trace and its JSON member.
    fn critical_path(
        &self,
        recorder: Recorder,
        threads: &[Arc<ThreadState>],
    ) -> (String, Vec<PathPiece>, serde_json::Value) {
        let scale = clock::scale();
        let to_ns = |ticks: u64| match &self.trace {
            Some(trace) => trace.to_ns(ticks),
            None => scale.to_ns(Ticks(ticks)),
        };
        let worked_out = recorder.finish(threads, &to_ns).and_then(|timeline| {
            critical::analyse(&timeline, &critical::Options::default()).map(|path| (timeline, path))
        });
        let (timeline, path) = match worked_out {
            Ok(both) => both,
            Err(why) => return (format!("{why}\n"), Vec::new(), not_worked_out(&why)),
        };
        let thread = |i: u32| timeline.threads[i as usize].name.clone();
        let pieces = path
            .pieces
            .iter()
            .map(|p| PathPiece {
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                title: p.kind.title(&timeline.names),
                thread: thread(p.thread),
            })
            .collect();
        let mut text = path.table();
        let losses = about::losses(threads);
        let (lost, ringless) = (losses.ring_overflow_total(), losses.unmapped_ring_threads);
        if lost + ringless > 0 {
            text += &format!(
                "Not on the path: {lost} records lost to ring overflow, and the calls of {ringless} \
                 threads without a ring; the path may miss what they did.\n"
            );
        }
        (text, pieces, path.json(&thread(path.end_thread)))
    }
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
