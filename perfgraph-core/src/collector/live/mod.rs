//! Live print on stderr (MOOSE's PerfGraphLivePrint, for every thread).
//!
//! The decisions are made by the pure [`printer::Printer`]; this module is the thin layer the background
//! thread calls: it turns drained records and open-frame snapshots into the printer's input, hands the
//! printer's text to the [`terminal::screen`], and tells recording threads which section ends should wake
//! it.
//!
//! Every decision is made holding the terminal's lock, right after the program's own output written so far
//! went out ([`capture::before_live`]): what the printer assumes about the screen (is its line still open?)
//! is then what the screen shows when its text is written. So the drained records are kept
//! ([`Live::on_records`]) and acted on at the pass's [`Live::tick`].

pub(crate) mod line;
pub(crate) mod panic;
pub(crate) mod printer;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::base::clock::{self, Scale, Ticks};
use crate::base::config::{Config, LiveMode};
use crate::base::{heap, process, registry, sys};
use crate::collector::terminal::capture;
use crate::collector::terminal::{self, screen};
use crate::local::pending::{self, Pending};
use crate::local::record::{self, Record};
use crate::local::thread::ThreadState;
use printer::{AsyncCall, AsyncEnded, Call, Ended, Message, Printer, Settings};

/// Longest live print lets pass without looking at what runs, as a fraction of the time limit: half of it.
/// A call that starts just after a look is in the next one, before it crosses the limit; from then on the
/// printer knows when it crosses (and when its dots are due) and asks for a pass at that moment, so lines
/// come on time, with a look every half second at the default limit instead of every few milliseconds.
fn snapshot_period_ns(time_limit_ns: u64) -> u64 {
    (time_limit_ns / 2).max(1_000_000)
}

/// How much later than asked a pass may come before live print takes it that the process was stopped (or
/// not run): [`terminal::SHORTEST_STOP`].
const STOPPED_GAP_NS: u64 = terminal::SHORTEST_STOP.as_nanos() as u64;

/// The live printer's state, owned by the background thread.
pub(crate) struct Live {
    printer: Printer,
    time_limit_ns: u64,
    /// [`snapshot_period_ns`] of the time limit.
    snapshot_period_ns: u64,
    mem_limit_kb: u64,
    /// Every drain matters: live-all, or a time limit so short that a section can run past it between two
    /// snapshots (then only its end record tells).
    drain_always: bool,
    /// Text decided but not yet handed to the screen.
    out: String,
    /// `screen::OTHER_OUTPUT_AT` as last seen.
    other_output: u64,
    /// Panics noted by the panic hook, `(thread index, ticks)`, until their thread's next drain.
    panics: Vec<(u32, u64)>,
    /// What the drains delivered since the last decisions, in order.
    drained: Vec<Drained>,
    /// The printer's number for each thread it knows (by thread index): numbers of threads it is done with
    /// are given to new ones, so its state is in proportion to the live threads, not to every thread ever.
    slots: HashMap<u32, usize>,
    /// Numbers free for new threads.
    free: Vec<usize>,
    /// What was printed, `(ticks, text)`, kept for the trace's markers when there is a trace.
    printed: Option<Vec<(u64, String)>>,
    /// The pending live futures and the ended ones, as last taken from [`pending`] (kept for their
    /// capacity).
    pending: Vec<Pending>,
    ended: Vec<Pending>,
    /// When the last [`tick`](Live::tick) asked for the next pass (monotonic ns): a pass far later than that
    /// means the process was stopped (Ctrl-Z, then `fg`) or not run for long, and the terminal may show
    /// other lines since (a shell's): live print goes on as after other output.
    next_due_ns: u64,
    /// The last [`tick`](Live::tick) decided nothing: the program had the floor (a partial line, a thread
    /// inside `suspend`, a destination with no room), so the wake-ups of that pass are not handled yet.
    deferred: bool,
    /// By thread index: the wait for a lock (`perfgraph_core::sync`) last shown to the printer as a call
    /// one level below the thread's innermost section (`Waiting for queue (held by worker-2)`), until the
    /// wait's record ends it.
    waits: HashMap<u32, Call>,
    /// The run's first text is decided (in `out`) but held: the capture has just started on a terminal,
    /// and the first line waits for the row to be known (`Screen::first_line_wait`).
    holding: bool,
}

/// How often a held first line (`Live::holding`) looks whether the program has written, in ns.
const HOLD_LOOK_NS: u64 = 10_000_000;

/// What a drain delivered to live print, kept until the printer decides under the terminal's lock.
enum Drained {
    /// A completed call of a thread that concerns the printer.
    Ended(usize, Ended),
    /// The end of a drain of a thread, and the (depth, start) of the last record it read.
    Done(usize, Option<(u32, u64)>),
    /// An `event!` of a thread (`PERFGRAPH_LIVE=all`), as its line says it.
    Event(usize, String),
}

impl Live {
    /// `None` when `PERFGRAPH_LIVE=off`.
    pub(crate) fn new(config: &Config) -> Option<Live> {
        if config.live == LiveMode::Off {
            return None;
        }
        let color =
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && sys::stderr_is_tty();
        // Passes come at least every snapshot period; a section longer than two of those is in some snapshot,
        // so its crossing is seen without its record.
        let pass_interval = snapshot_period_ns(config.time_limit_ns);
        Some(Live {
            printer: Printer::new(Settings {
                time_limit: config.time_limit_ns,
                scale: Scale::fixed(Ticks(0), 1.0),
                mem_limit_kb: config.mem_limit_bytes / 1024,
                all: config.live == LiveMode::All,
                color,
            }),
            time_limit_ns: config.time_limit_ns,
            snapshot_period_ns: pass_interval,
            mem_limit_kb: config.mem_limit_bytes / 1024,
            drain_always: config.live == LiveMode::All || config.time_limit_ns < 2 * pass_interval,
            out: String::new(),
            other_output: 0,
            panics: Vec::new(),
            drained: Vec::new(),
            slots: HashMap::new(),
            free: Vec::new(),
            printed: config.trace.is_some().then(Vec::new),
            pending: Vec::new(),
            ended: Vec::new(),
            deferred: false,
            waits: HashMap::new(),
            holding: false,
            next_due_ns: u64::MAX,
        })
    }

    /// Whether the last pass decided nothing (the program had the floor): what woke it is not printed yet.
    pub(crate) fn deferred(&self) -> bool {
        self.deferred
    }

    /// What was printed since the last call, `(ticks, text)` (only kept when there is a trace).
    pub(crate) fn take_printed(&mut self) -> Vec<(u64, String)> {
        self.printed
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Keeps the text about to be printed for the trace's markers.
    fn note_printed(&mut self) {
        if let Some(printed) = &mut self.printed
            && !self.out.is_empty()
        {
            printed.push((clock::now().0, self.out.clone()));
        }
    }

    /// The printer's number for thread `index`, given now if it has none.
    fn slot(&mut self, index: u32) -> usize {
        let next = self.slots.len();
        let free = &mut self.free;
        *self
            .slots
            .entry(index)
            .or_insert_with(|| free.pop().unwrap_or(next))
    }

    /// Whether live print still has something of thread `index` (an exited one) to show or wait for.
    pub(crate) fn busy(&self, index: u32) -> bool {
        self.slots
            .get(&index)
            .is_some_and(|&t| !self.printer.done_with(t))
    }

    /// Thread `index` was folded: live print forgets it (it was not [`busy`](Live::busy)).
    pub(crate) fn forget(&mut self, index: u32) {
        self.waits.remove(&index);
        if let Some(t) = self.slots.remove(&index) {
            self.printer.forget(t);
            self.free.push(t);
        }
    }

    /// Re-reads the clock's conversion; returns the time limit in ticks.
    fn rescale(&mut self) -> u64 {
        let scale = clock::scale();
        let limit = scale.ticks(self.time_limit_ns).0;
        self.printer.set_clock(scale, limit);
        pending::set_time_limit(limit);
        // Relaxed: a late value only makes one section's end not wait for its line.
        crate::local::thread::LIVE_LIMIT_TICKS.store(limit, Ordering::Relaxed);
        limit
    }

    fn sync_other_output(&mut self) {
        let at = screen::OTHER_OUTPUT_AT.load(Ordering::Relaxed);
        if at != self.other_output {
            self.other_output = at;
            self.printer.other_output(at);
        }
    }

    /// Whether the next pass must drain the rings for live print (otherwise only a wake-up, which a section
    /// live print shows sends when it ends, or another consumer makes it drain).
    pub(crate) fn wants_drain(&self) -> bool {
        self.drain_always || self.printer.wants_drain()
    }

    /// One drain of `thread`'s ring is complete: `records` are what it delivered (maybe none), in
    /// completion order. The ones that concern the printer are kept for the next decisions.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        let limit = self.rescale();
        let t = self.slot(thread.index);
        self.printer.thread(t, &thread.name, thread.is_main);
        self.panics.extend(panic::take());
        while let Some(i) = self.panics.iter().position(|p| p.0 == thread.index) {
            let (_, at) = self.panics.remove(i);
            self.printer.panicked(t, at);
        }
        let all = self.printer.all();
        // With the counting allocator installed, the memory rule follows each call's exact heap growth.
        let heap_rule = heap::installed();
        for r in records {
            // Most records are short sections nobody shows: skip them before any lookup. (Deciding the kept
            // ones only removes calls the printer expects, so what this skips stays skipped.)
            let grown = r.mem_end_kb as i64 - r.mem_start_kb as i64;
            let over_mem_limit = match heap_rule {
                true => r.heap_alert,
                false => grown > self.mem_limit_kb as i64,
            };
            if !all
                && r.end.saturating_sub(r.start) <= limit
                && !over_mem_limit
                && !self.printer.expects(t, r.depth, r.start)
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
                    message: ended_message(thread, &info, r),
                    dots: info.dots,
                },
                end: r.end,
                mem_start_kb: r.mem_start_kb,
                mem_end_kb: r.mem_end_kb,
                heap_alert: heap_rule.then_some(r.heap_alert),
            };
            self.drained.push(Drained::Ended(t, ended));
        }
        let last = records.last().map(|r| (r.depth, r.start));
        self.drained.push(Drained::Done(t, last));
    }

    /// Marks `thread` pushed since the last drain: with `PERFGRAPH_LIVE=all`, a line for each `event!`,
    /// `message (name=value, ...)`.
    pub(crate) fn on_events(&mut self, thread: &ThreadState, marks: &[Record]) {
        for r in marks.iter().filter(|r| r.depth == record::WAIT) {
            // The end of a wait shown as a call: its line ends as a section's does.
            if let Some(call) = self
                .waits
                .get(&thread.index)
                .filter(|c| c.start == r.start)
                .cloned()
            {
                self.waits.remove(&thread.index);
                let t = self.slot(thread.index);
                let mem = process::rss_kb();
                let ended = Ended {
                    call,
                    end: r.end,
                    mem_start_kb: mem,
                    mem_end_kb: mem,
                    heap_alert: None,
                };
                self.drained.push(Drained::Ended(t, ended));
            }
        }
        let all = self.printer.all();
        for r in marks.iter().filter(|r| r.depth == record::EVENT && all) {
            let Some(site) = crate::local::marks::event_site(r.section) else {
                continue;
            };
            let values = r.args.map(|a| a.peek()).unwrap_or_default();
            let mut text = site.name.to_owned();
            if !values.is_empty() {
                let named: Vec<String> = site
                    .args
                    .iter()
                    .zip(&values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                text.push_str(&format!(" ({})", named.join(", ")));
            }
            let t = self.slot(thread.index);
            self.drained.push(Drained::Event(t, text));
        }
    }

    /// The printer decides on what the drains delivered (terminal held, other output synced).
    fn decide_drained(&mut self) {
        for d in std::mem::take(&mut self.drained) {
            match d {
                Drained::Ended(t, ended) => self.printer.ended(t, ended, &mut self.out),
                Drained::Done(t, last) => self.printer.drained(t, last, &mut self.out),
                Drained::Event(t, text) => self.printer.event(t, &text, &mut self.out),
            }
        }
    }

    /// The printer learns which live futures ended (printing their wall time), in the order they ended,
    /// and which are pending. Taken after `now` was read, so every future the list still shows was pending
    /// at `now`.
    fn decide_futures(&mut self) {
        pending::take(&mut self.pending, &mut self.ended);
        self.ended.sort_by_key(|e| (e.end, e.id));
        let call = |p: &Pending| {
            let info = registry::info(p.section)?;
            Some(AsyncCall {
                id: p.id,
                parent: p.parent,
                start: p.start,
                message: p.text.clone().unwrap_or_else(|| info.live.into()),
                dots: info.dots,
            })
        };
        for e in &self.ended {
            if let Some(c) = call(e) {
                let ended = AsyncEnded {
                    call: c,
                    end: e.end,
                    mem_end_kb: e.mem_end_kb,
                    cancelled: e.cancelled,
                };
                self.printer.future_ended(ended, &mut self.out);
            }
        }
        let calls: Vec<AsyncCall> = self.pending.iter().filter_map(call).collect();
        self.printer.pending(&calls, &mut self.out);
    }

    /// Decides what to print now. Returns how long (ns) it may sleep before it needs another pass. While
    /// the program has the floor (a partial line it is writing, a thread inside `suspend`), nothing is
    /// decided: the printer waits, and acts on everything at a later pass.
    pub(crate) fn tick(&mut self, threads: &[Arc<ThreadState>], now: u64) -> Option<u64> {
        self.rescale();
        let mut screen = screen::lock();
        self.deferred = false;
        let started = sys::monotonic_ns();
        let late = started > self.next_due_ns.saturating_add(STOPPED_GAP_NS);
        if let Some(wait) = capture::before_live(&mut screen, late) {
            self.deferred = true;
            return Some(wait.as_nanos() as u64);
        }
        if self.holding {
            // The first line waits a moment for the row to be known (`Screen::first_line_wait`), but
            // not while a thread waits for a closing line to be out before it goes on.
            match screen
                .first_line_wait()
                .filter(|_| !process::line_awaited())
            {
                Some(wait) => {
                    self.deferred = true;
                    return Some((wait.as_nanos() as u64).min(HOLD_LOOK_NS));
                }
                None => self.release_held(&mut screen),
            }
        }
        if late && !capture::sees_stops() {
            // Stopped and continued (the shell's lines are on the terminal), or only not run: live print
            // cannot tell, so it starts its next text on a new line and says `Still`.
            screen.may_have_stopped();
            terminal::other_output();
        }
        // The program's output may have gone out just now: the printer sees it before deciding.
        let now = now.max(clock::now().0);
        self.sync_other_output();
        self.decide_drained();
        // Closing lines (sections that ended) are never held back: the program's next output follows them.
        let closing = !self.out.is_empty();
        let mut calls: Vec<Call> = Vec::new();
        for state in threads {
            // An exited thread runs nothing: once the printer is done with it, it costs nothing per pass.
            if state.exited() && !self.busy(state.index) {
                continue;
            }
            let t = self.slot(state.index);
            self.printer.thread(t, &state.name, state.is_main);
            calls.clear();
            calls.extend(state.open_frames().iter().map_while(|f| {
                let info = registry::info(f.section)?;
                Some(Call {
                    depth: f.depth,
                    start: f.start,
                    message: message(state, &info, f.depth, f.start),
                    dots: info.dots,
                })
            }));
            if let Some((since, lock, holder)) = state.waiting.read() {
                calls.push(self.wait_call(state, threads, since, lock, holder, calls.last()));
            }
            self.printer.running(t, &calls, now);
        }
        self.decide_futures();
        let next = self.printer.tick(now, &mut self.out);
        self.show(&mut screen, !closing);
        // Holding the first line: look again soon for the program's bytes.
        let held = self.holding.then_some(HOLD_LOOK_NS);
        drop(screen);
        self.set_watch(threads);
        let mut wait = next.map_or(self.snapshot_period_ns, |due| {
            clock::scale()
                .delta_ns(Ticks(due).since(clock::now()))
                .max(1_000_000)
        });
        if self.printer.wants_drain() {
            // A section ended without waking us (it was printed just as it ended): its record is in the ring.
            wait = wait.min(1_000_000);
        }
        let wait = wait
            .min(self.snapshot_period_ns)
            .min(held.unwrap_or(u64::MAX));
        // From the pass's start: a stop (Ctrl-Z) that lands within the pass makes the next pass late too.
        self.next_due_ns = started.saturating_add(wait);
        Some(wait)
    }

    /// The call live print shows for `state`'s wait since `since` for lock name `lock` (held by thread
    /// `holder` - 1 then, 0: unknown), one level below `innermost`: the one shown before for this wait.
    fn wait_call(
        &mut self,
        state: &ThreadState,
        threads: &[Arc<ThreadState>],
        since: u64,
        lock: u32,
        holder: u32,
        innermost: Option<&Call>,
    ) -> Call {
        if let Some(c) = self.waits.get(&state.index).filter(|c| c.start == since) {
            return c.clone();
        }
        let name = crate::local::locks::name(lock).unwrap_or("a lock");
        let message = match holder.checked_sub(1) {
            Some(h) => {
                let holder = threads
                    .iter()
                    .find(|t| t.index == h)
                    .map_or_else(|| format!("thread-{h}"), |t| t.name.clone());
                format!("Waiting for {name} (held by {holder})")
            }
            None => format!("Waiting for {name}"),
        };
        let call = Call {
            depth: innermost.map_or(0, |c| c.depth + 1),
            start: since,
            message: message.into(),
            dots: true,
        };
        self.waits.insert(state.index, call.clone());
        call
    }

    /// Hands the decided text to the screen. If the screen had to drop it (stderr full for long), what is on
    /// the terminal is no longer what the printer believes: it starts over as after other output. With
    /// `may_hold` (no closing line in it), the run's first text may be held (`Live::holding`).
    fn show(&mut self, screen: &mut screen::Screen, may_hold: bool) {
        if self.out.is_empty() {
            return;
        }
        // The first line of the run: capture starts now, if it is to start at all.
        if let Some(warning) = capture::before_first_line(screen) {
            screen.write_lines(&format!("{warning}\n"));
        }
        if may_hold
            && !self.holding
            && !process::line_awaited()
            && screen.first_line_wait().is_some()
        {
            // Started on a terminal: a bar the program drew before is known once it redraws itself.
            self.holding = true;
            self.deferred = true;
            return;
        }
        self.note_printed();
        let shown = screen.write_live(&self.out);
        self.out.clear();
        if !shown {
            self.printer.other_output(clock::now().0);
        }
    }

    /// Writes the run's first text, held while the program had the floor after the capture's start. What
    /// the program wrote meanwhile went out before it, so it is not other output after it.
    fn release_held(&mut self, screen: &mut screen::Screen) {
        self.unhold();
        self.show(screen, false);
    }

    /// The held first text goes out with the next: the program's output meanwhile came before it.
    fn unhold(&mut self) {
        self.holding = false;
        self.other_output = screen::OTHER_OUTPUT_AT.load(Ordering::Relaxed);
    }

    /// Every thread wakes the background thread when a section it shows ends (or, in live-all, any section).
    fn set_watch(&self, threads: &[Arc<ThreadState>]) {
        for state in threads.iter().filter(|t| !t.exited()) {
            let watch = if self.printer.all() {
                u32::MAX
            } else {
                self.slots
                    .get(&state.index)
                    .map_or(0, |&t| self.printer.printed_depth(t))
            };
            // Relaxed: a late update only delays one wake-up to the next scheduled pass.
            state.watch.store(watch, Ordering::Relaxed);
        }
    }

    /// Process exit, after the final drain: the final lines of sections still on screen, timed up to `now`.
    pub(crate) fn finish(&mut self, now: u64) {
        self.rescale();
        let mut screen = screen::lock();
        // Everything the program wrote goes out first, a partial line too: nothing will complete it now.
        capture::flush_all(&mut screen, capture::Wait::Stall(screen::EXIT_FLUSH));
        // No waiting now for a SIGCONT still on its way: the screen takes it that the job was continued.
        capture::settle_stop(&mut screen);
        if self.holding {
            self.unhold();
        }
        let now = now.max(clock::now().0);
        self.sync_other_output();
        self.decide_drained();
        self.decide_futures();
        // A wait whose end the drains did not bring never got its lock: its line must not say `Finished`.
        for (index, call) in &self.waits {
            if let Some(&t) = self.slots.get(index) {
                self.printer.not_ended(t, call, " (not acquired)");
            }
        }
        self.printer.finish(now, process::rss_kb(), &mut self.out);
        self.note_printed();
        screen.write_live(&self.out);
        self.out.clear();
        screen.flush(screen::EXIT_FLUSH);
    }
}

/// The live message of `thread`'s ended call `r`: as [`message`], or filled from the args its record
/// brought (`PERFGRAPH_LIVE=all` pushes them) when the call's slot was reused before the drain.
fn ended_message(thread: &ThreadState, info: &registry::SectionInfo, r: &Record) -> Message {
    if !info.args.is_empty()
        && thread.live_texts.get(r.depth, r.start).is_none()
        && let Some(args) = r.args
    {
        let named: Vec<(&str, crate::data::args::ArgValue)> =
            info.args.iter().copied().zip(args.peek()).collect();
        return crate::data::args::fill_message(info.live, &named).into();
    }
    message(thread, info, r.depth, r.start)
}

/// The live message of `thread`'s call at `depth` that started at `start`: filled in with its args when its
/// section's message names them (`local::live_texts`), else the section's own.
fn message(thread: &ThreadState, info: &registry::SectionInfo, depth: u32, start: u64) -> Message {
    if !info.args.is_empty()
        && let Some(text) = thread.live_texts.get(depth, start)
    {
        return text;
    }
    info.live.into()
}
