//! End-of-run outputs (reports, trace, folded stacks, JSON) and interval statistics: the glue between the
//! background thread's hooks and the pure renderers in [`report`](crate::report) and
//! [`export`](crate::export).
//!
//! Everything here runs on the background thread. At exit ([`Outputs::finish`], after live print has
//! finished) it prints the last partial interval and the selected reports, writes the files, then prints
//! any file error; a file that cannot be written costs one error line and nothing else.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::files;
use super::interval::{self, Interval, Intervals};
use super::live::screen;
use crate::base::clock::{self, Ticks};
use crate::base::config::{Config, ReportSelection};
use crate::base::{identity, process, registry, sys};
use crate::export::chrome::{self, Event, Mark, MarkKind, TraceBuffer, TraceMeta};
use crate::export::{folded, json};
use crate::local::record::{self, Record};
use crate::local::thread::{self, ThreadState};
use crate::local::{marks, ring, snapshot};

/// State of the at-exit outputs, owned by the background thread.
pub(crate) struct Outputs {
    /// The settings (the report needs to know whether an output needs every record).
    config: Config,
    report: ReportSelection,
    /// `PERFGRAPH_INTERVAL` (ns) and the interval being accumulated.
    interval: Option<(u64, Intervals)>,
    /// `PERFGRAPH_TRACE` and the events gathered for it.
    trace: Option<(PathBuf, TraceBuffer)>,
    folded: Option<PathBuf>,
    json: Option<PathBuf>,
    /// Thread names by index, for the trace and the interval statistics, which name threads that may
    /// have been folded (and left the live list) by the time they are written.
    names: HashMap<u32, String>,
}

/// An output path with its `{pid}`, `{rank}` and `{host}` placeholders filled in for this process.
fn expanded(path: &std::path::Path) -> PathBuf {
    identity::expand(path, sys::process_id(), identity::rank(), identity::host())
}

impl Outputs {
    pub(crate) fn new(config: &Config) -> Outputs {
        Outputs {
            config: config.clone(),
            report: config.report,
            interval: config
                .interval_ns
                .map(|ns| (ns, Intervals::new(clock::now().0))),
            trace: config
                .trace
                .as_deref()
                .map(|path| (expanded(path), TraceBuffer::new(config.trace_limit))),
            folded: config.folded.as_deref().map(expanded),
            json: config.json.as_deref().map(expanded),
            names: HashMap::new(),
        }
    }

    /// Records `thread` completed since the last pass, in completion order.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if (self.interval.is_some() || self.trace.is_some())
            && !self.names.contains_key(&thread.index)
        {
            self.names.insert(thread.index, thread.name.clone());
        }
        if let Some((_, intervals)) = &mut self.interval {
            intervals.on_records(thread.index, records);
        }
        if let Some((_, trace)) = &mut self.trace {
            for r in records {
                trace.push(Event {
                    start: r.start,
                    end: r.end,
                    section: r.section,
                    thread: thread.index,
                });
            }
        }
    }

    /// Marks (futures' lives, instant events) `thread` pushed since the last pass.
    pub(crate) fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        let Some((_, trace)) = &mut self.trace else {
            return;
        };
        self.names
            .entry(thread.index)
            .or_insert_with(|| thread.name.clone());
        for r in marks {
            let kind = match r.depth {
                record::LIFE => MarkKind::Life {
                    id: r.mark_id(),
                    cancelled: false,
                },
                record::LIFE_CANCELLED => MarkKind::Life {
                    id: r.mark_id(),
                    cancelled: true,
                },
                _ => MarkKind::Instant(marks::take(r.mark_id()).unwrap_or_default()),
            };
            trace.push_mark(Mark {
                kind,
                start: r.start,
                end: r.end,
                section: r.section,
                thread: thread.index,
            });
        }
    }

    /// A resident-memory sample taken at `ticks`.
    pub(crate) fn on_memory(&mut self, ticks: u64, bytes: u64) {
        if let Some((_, trace)) = &mut self.trace {
            trace.on_memory(ticks, bytes);
        }
    }

    /// Thread `state` has exited and is about to be folded: off the live list, its final CPU time still
    /// counts in the interval it exited in.
    pub(crate) fn on_retiring(&mut self, state: &ThreadState) {
        if let Some((_, intervals)) = &mut self.interval {
            intervals.thread_ended(state.index, state.read_cpu());
        }
    }

    /// Before the background thread drains the rings: if an interval is due, it ends now, with a snapshot of
    /// the top-level sections running; the drain that follows brings every call that ended before it.
    pub(crate) fn before_drain(&mut self, now: u64) {
        if let Some((interval_ns, intervals)) = &mut self.interval
            && !intervals.closing()
            && now >= due(intervals.start(), *interval_ns)
        {
            let threads = thread::all();
            intervals.begin_close(now, running_top_level(&threads), cpu_times(&threads));
        }
    }

    /// After the drain: prints the interval that `before_drain` ended, if any. Returns how long (ns) the
    /// background thread may sleep before the next interval is due.
    pub(crate) fn tick(&mut self, now: u64) -> Option<u64> {
        let (interval_ns, intervals) = self.interval.as_mut()?;
        if let Some(closed) = intervals.finish_close() {
            let text = format_interval(&closed, &self.names);
            if !text.is_empty() {
                screen::write_block(&text);
            }
        }
        let due = due(intervals.start(), *interval_ns);
        Some(clock::scale().delta_ns(Ticks(due.saturating_sub(now))) + 1)
    }

    /// Process exit, after live print finished: print the last partial interval and the reports, then
    /// write the files, then print one line per file that could not be written (and the trace's line on
    /// what it lacks). The files are written as they are rendered, so a tree of millions of nodes costs no
    /// copy of itself as text, and the renderers report progress as they go, so a slow but moving exit is
    /// never given up. The reports come first so that a file that takes no writes (a named pipe nobody
    /// reads, a stuck disk), which the exit handler gives up on, cannot take them with it; stderr itself
    /// never holds this up for more than 100 ms.
    pub(crate) fn finish(&mut self) {
        let threads = thread::all();
        let mut block = String::new();
        if let Some((_, intervals)) = &mut self.interval {
            // After the final drain: every call that ended is in.
            let closed = intervals.close(
                clock::now().0,
                running_top_level(&threads),
                cpu_times(&threads),
            );
            block.push_str(&format_interval(&closed, &self.names));
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
        if let Some((path, buffer)) = &mut self.trace {
            let written = write_trace(path, buffer, &threads, &self.names);
            if written.is_ok() {
                let losses = TraceLosses {
                    ring_overflow: ring_dropped(&threads).iter().map(|(_, n)| n).sum(),
                    past_limit: buffer.over_limit,
                    limit: buffer.limit,
                    unmapped_ring_threads: ring::unmapped(),
                };
                notes.push_str(&trace_note(buffer.events.len(), path, &losses));
            }
            results.push(written);
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

/// When the interval that started at `start` ends (ticks); recomputed each pass, as the tick length is
/// re-calibrated while the run goes on.
fn due(start: u64, interval_ns: u64) -> u64 {
    start + clock::scale().ticks(interval_ns).0
}

/// Top-level sections running now: `(thread, section, start ticks)`.
fn running_top_level(threads: &[Arc<ThreadState>]) -> interval::Running {
    threads
        .iter()
        .filter_map(|t| {
            let frame = t.open_frames().into_iter().next()?;
            Some((t.index, frame.section, frame.start))
        })
        .collect()
}

/// Each live thread's CPU time now (a system call each), for the interval statistics.
fn cpu_times(threads: &[Arc<ThreadState>]) -> interval::Cpu {
    threads.iter().map(|t| (t.index, t.read_cpu())).collect()
}

fn format_interval(closed: &Interval, names: &HashMap<u32, String>) -> String {
    let live = thread::all();
    interval::format(
        closed,
        clock::scale(),
        |t| {
            names
                .get(&t)
                .cloned()
                .or_else(|| live.iter().find(|s| s.index == t).map(|s| s.name.clone()))
                .unwrap_or_else(|| format!("thread-{t}"))
        },
        section_name,
    )
}

fn section_name(section: u32) -> String {
    registry::info(section).map_or_else(|| format!("section-{section}"), |i| i.name.to_owned())
}

fn write_trace(
    path: &std::path::Path,
    buffer: &mut TraceBuffer,
    threads: &[Arc<ThreadState>],
    names: &HashMap<u32, String>,
) -> Result<(), String> {
    let end = clock::now().0;
    let unfinished = threads
        .iter()
        .flat_map(|t| {
            t.open_frames().into_iter().map(move |f| Event {
                start: f.start,
                end,
                section: f.section,
                thread: t.index,
            })
        })
        .collect();
    // One conversion for every event, so they keep their order and nesting.
    let scale = clock::scale();
    let to_ns = move |ticks| scale.to_ns(Ticks(ticks));
    let meta = TraceMeta {
        pid: std::process::id(),
        rank: identity::rank(),
        host: identity::host(),
        start_unix_ns: identity::start_unix_ns(),
        program: process::program_name(),
        clock: clock::source().name(),
        threads: {
            let mut all: Vec<(u32, String)> = names.iter().map(|(&i, n)| (i, n.clone())).collect();
            all.extend(
                threads
                    .iter()
                    .filter(|t| !names.contains_key(&t.index))
                    .map(|t| (t.index, t.name.clone())),
            );
            all.sort_unstable_by_key(|t| t.0);
            all
        },
        ring_dropped: ring_dropped(threads),
        unfinished,
        end,
        to_ns: &to_ns,
    };
    files::write_file("PERFGRAPH_TRACE", path, |w| {
        chrome::write(w, buffer, &meta, &section_name)
    })
}

/// Threads that lost records to ring overflow, with how many: `(name, count)`; the live ones in `threads`,
/// then the folded ones by group.
fn ring_dropped(threads: &[Arc<ThreadState>]) -> Vec<(String, u64)> {
    let (_, retired) = thread::view();
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

/// Section calls that ended but are not in the trace, by why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TraceLosses {
    /// Records lost to ring overflow, all threads (`ThreadState::dropped`).
    ring_overflow: u64,
    /// Calls past `PERFGRAPH_TRACE_LIMIT`, counted but not kept.
    past_limit: u64,
    /// `PERFGRAPH_TRACE_LIMIT`.
    limit: usize,
    /// Threads whose ring could not be mapped, so none of their calls reached the trace (how many calls
    /// that is, the rings cannot say; `local::ring::unmapped`); stated only when not 0.
    unmapped_ring_threads: u64,
}

/// The trace's line on stderr after it is written, when calls are missing from it: how many were written
/// and every loss with its figure (the file states the same). Empty when nothing is missing.
fn trace_note(written: usize, path: &std::path::Path, losses: &TraceLosses) -> String {
    let TraceLosses {
        ring_overflow,
        past_limit,
        limit,
        unmapped_ring_threads,
    } = *losses;
    if ring_overflow == 0 && past_limit == 0 && unmapped_ring_threads == 0 {
        return String::new();
    }
    let unmapped = match unmapped_ring_threads {
        0 => String::new(),
        1 => "; nor is any call of 1 thread whose ring could not be mapped".to_owned(),
        n => format!("; nor is any call of {n} threads whose ring could not be mapped"),
    };
    format!(
        "perfgraph: trace: {written} section calls written to {:?}; {} more are not in it: {ring_overflow} \
         lost to ring overflow, {past_limit} past PERFGRAPH_TRACE_LIMIT={limit}{unmapped} (the file says \
         so too)\n",
        path.display().to_string(),
        ring_overflow + past_limit,
    )
}

#[cfg(test)]
mod tests {
    use super::{TraceLosses, trace_note};

    #[test]
    fn the_trace_line_gives_every_loss_its_figure() {
        let path = std::path::Path::new("t.json");
        let losses = TraceLosses {
            ring_overflow: 0,
            past_limit: 0,
            limit: 100,
            unmapped_ring_threads: 0,
        };
        assert_eq!(
            trace_note(12, path, &losses),
            "",
            "nothing missing, nothing said"
        );
        let overflow = TraceLosses {
            ring_overflow: 7,
            ..losses
        };
        assert_eq!(
            trace_note(12, path, &overflow),
            "perfgraph: trace: 12 section calls written to \"t.json\"; 7 more are not in it: 7 lost to ring \
             overflow, 0 past PERFGRAPH_TRACE_LIMIT=100 (the file says so too)\n"
        );
        let all = TraceLosses {
            ring_overflow: 7,
            past_limit: 952,
            limit: 100,
            unmapped_ring_threads: 2,
        };
        assert_eq!(
            trace_note(100, path, &all),
            "perfgraph: trace: 100 section calls written to \"t.json\"; 959 more are not in it: 7 lost to \
             ring overflow, 952 past PERFGRAPH_TRACE_LIMIT=100; nor is any call of 2 threads whose ring \
             could not be mapped (the file says so too)\n"
        );
    }
}
