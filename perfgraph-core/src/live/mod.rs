//! Live print on stderr (MOOSE's PerfGraphLivePrint, for every thread).
//!
//! The decisions are made by the pure [`printer::Printer`]; this module is the thin layer the background
//! thread calls: it turns drained records and open-frame snapshots into the printer's input, hands the
//! printer's text to the [`screen`], and tells recording threads which section ends should wake it.

pub(crate) mod printer;
pub(crate) mod screen;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::config::{Config, LiveMode};
use crate::thread::{Record, ThreadState};
use crate::{clock, memory, registry};
use printer::{Call, Ended, Printer, Settings};

/// The live printer's state, owned by the background thread.
pub(crate) struct Live {
    printer: Printer,
    time_limit_ns: u64,
    mem_limit_kb: u64,
    /// Text decided but not yet handed to the screen.
    out: String,
    /// `screen::OTHER_OUTPUT` as last seen.
    other_output: u64,
    /// Per thread: the dropped count as last seen (a change means end records were lost).
    dropped: Vec<u64>,
}

impl Live {
    /// `None` when `PERFGRAPH_LIVE=off`.
    pub(crate) fn new(config: &Config) -> Option<Live> {
        if config.live == LiveMode::Off {
            return None;
        }
        let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            // SAFETY: isatty has no preconditions; fd 2 may be closed, which it reports as "not a tty".
            && unsafe { libc::isatty(2) } == 1;
        Some(Live {
            printer: Printer::new(Settings {
                time_limit: config.time_limit_ns,
                ns_per_tick: 1.0,
                mem_limit_kb: config.mem_limit_bytes / 1024,
                all: config.live == LiveMode::All,
                color,
            }),
            time_limit_ns: config.time_limit_ns,
            mem_limit_kb: config.mem_limit_bytes / 1024,
            out: String::new(),
            other_output: 0,
            dropped: Vec::new(),
        })
    }

    fn rescale(&mut self) {
        let ns_per_tick = clock::ns_per_tick();
        let limit = (self.time_limit_ns as f64 / ns_per_tick) as u64;
        self.printer.set_clock(ns_per_tick, limit);
    }

    fn sync_other_output(&mut self) {
        let seen = screen::OTHER_OUTPUT.load(Ordering::Relaxed);
        if seen != self.other_output {
            self.other_output = seen;
            self.printer.other_output();
        }
    }

    /// Records `thread` completed since the last pass, in completion order.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        self.rescale();
        self.sync_other_output();
        let t = thread.index as usize;
        self.printer.thread(t, &thread.name, thread.is_main);
        let printed_depth = self.printer.printed_depth(t);
        let limit = (self.time_limit_ns as f64 / clock::ns_per_tick()) as u64;
        let all = self.printer.all();
        for r in records {
            // Most records are short sections nobody shows: skip them before any lookup.
            let grown = r.mem_end_kb as i64 - r.mem_start_kb as i64;
            if !all
                && r.depth >= printed_depth
                && r.end.saturating_sub(r.start) <= limit
                && grown <= self.mem_limit_kb as i64
            {
                continue;
            }
            let Some(info) = registry::info(r.section) else {
                continue;
            };
            let ended = Ended {
                call: Call {
                    depth: r.depth,
                    start: r.start,
                    message: info.live,
                    dots: info.dots,
                },
                end: r.end,
                mem_start_kb: r.mem_start_kb,
                mem_end_kb: r.mem_end_kb,
            };
            self.printer.ended(t, ended, &mut self.out);
        }
    }

    /// Decides what to print now. Returns how long (ns) it may sleep before it needs another pass.
    pub(crate) fn tick(&mut self, threads: &[Arc<ThreadState>], now: u64) -> Option<u64> {
        self.rescale();
        self.sync_other_output();
        if self.dropped.len() < threads.len() {
            self.dropped.resize(threads.len(), 0);
        }
        for state in threads {
            let t = state.index as usize;
            self.printer.thread(t, &state.name, state.is_main);
            let calls: Vec<Call> = state
                .open_frames()
                .iter()
                .filter_map(|f| {
                    let info = registry::info(f.section)?;
                    Some(Call {
                        depth: f.depth,
                        start: f.start,
                        message: info.live,
                        dots: info.dots,
                    })
                })
                .collect();
            let dropped = state.dropped.load(Ordering::Relaxed);
            let lost = dropped != self.dropped[t];
            self.dropped[t] = dropped;
            self.printer.running(t, &calls, lost, &mut self.out);
        }
        let next = self.printer.tick(now, &mut self.out);
        self.show();
        let showing = threads
            .iter()
            .any(|t| self.printer.printed_depth(t.index as usize) > 0);
        // Relaxed: read by `suspend` as a hint (see `screen::catch_up`).
        screen::SHOWING.store(showing, Ordering::Relaxed);
        self.set_watch(threads);
        next.map(|due| clock::delta_ns(due.saturating_sub(clock::now())).max(1_000_000))
    }

    /// Hands the decided text to the screen.
    fn show(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let mut screen = screen::lock();
        screen.write(&self.out);
        self.out.clear();
    }

    /// Every thread wakes the background thread when a section it shows ends (or, in live-all, any section).
    fn set_watch(&self, threads: &[Arc<ThreadState>]) {
        for state in threads {
            let watch = if self.printer.all() {
                u32::MAX
            } else {
                self.printer.printed_depth(state.index as usize)
            };
            // Relaxed: a late update only delays one wake-up to the next scheduled pass.
            state.watch.0.store(watch, Ordering::Relaxed);
        }
    }

    /// Process exit: print the final lines of sections still on screen.
    pub(crate) fn finish(&mut self, threads: &[Arc<ThreadState>], now: u64) {
        self.tick(threads, now);
        self.printer
            .finish(now, memory::current_kb(), &mut self.out);
        let mut screen = screen::lock();
        screen.write(&self.out);
        self.out.clear();
        screen.flush(std::time::Duration::from_millis(100));
    }
}
