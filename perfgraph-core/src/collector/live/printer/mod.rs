//! What live print shows, decided as a pure function of (events, now, settings): no clock, no I/O, no
//! globals, so every rule is tested with a fake clock and golden transcripts (`collector/live/tests.rs`).
//!
//! Input, per pass of the background thread: for each thread whose ring was drained, the sections it
//! completed ([`Printer::ended`], in completion order) and the end of the drain ([`Printer::drained`]); then
//! what each thread is running now ([`Printer::running`]); the live futures that ended
//! ([`Printer::future_ended`]) and those still pending ([`Printer::pending`]), for the async track
//! (`printer/futures.rs`); other output that reached the terminal ([`Printer::other_output`]); then
//! [`Printer::tick`] with the time. Output: text to append to stderr, and
//! the next time something is due. This file decides; `printer/write.rs` writes the threads' lines.
//!
//! How a call's end is known: recording threads push a section's end record *before* they publish the lower
//! depth, so a call missing from a snapshot has its record in the ring already. The next drain of that thread
//! therefore either delivers it or has lost it to overflow: a printed call still unmatched after that drain
//! gets a `Finished ... [end not recorded: events lost]` line, never invented figures and never a wait on
//! luck. Conversely a drain may deliver the record of a call the snapshot taken just after still shows (the
//! depth is published a moment after the push): the snapshot is cut at the last call the drain ended.
//!
//! The line grammar is MOOSE's PerfGraphLivePrint (see `docs/live-print.md`): indent two spaces per printed
//! level, the message without a newline, dots on the same line, `Still`/`Currently`/`Finished` lines, stats
//! `[%6.2f s] [%5d MB]` with `[` at column 89.

use crate::base::clock::Scale;
use crate::base::text;

mod futures;
use futures::OpenFuture;
pub use futures::{AsyncCall, AsyncEnded};
mod write;

/// The settings the decisions depend on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// `PERFGRAPH_TIME_LIMIT` in clock ticks: a section running this long prints; dots come at this interval.
    pub time_limit: u64,
    /// The clock's conversion, for the times printed.
    pub scale: Scale,
    /// `PERFGRAPH_MEM_LIMIT`, KiB: a section whose resident memory grew more than this prints when it ends.
    pub mem_limit_kb: u64,
    /// `PERFGRAPH_LIVE=all`: print every section's start and end.
    pub all: bool,
    /// Colour the stats (stderr is a terminal and `NO_COLOR` is unset).
    pub color: bool,
}

/// A live message: the section's own, or filled in with a call's args.
pub type Message = std::sync::Arc<str>;

/// A section as the printer sees it. `(depth, start)` identifies a call on its thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Nesting depth on its thread, 0 outermost.
    pub depth: u32,
    /// Start, in clock ticks (also the call's identity with `depth`, so never rescaled).
    pub start: u64,
    /// Live message (the section's name when it has none).
    pub message: Message,
    /// Whether it shows dots.
    pub dots: bool,
}

/// A completed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The call.
    pub call: Call,
    /// End, in clock ticks.
    pub end: u64,
    /// Resident memory at start and end, KiB.
    pub mem_start_kb: u32,
    /// Resident memory at the end, KiB.
    pub mem_end_kb: u32,
    /// With the counting allocator installed: whether the call's exact heap growth passed the memory
    /// limit, which the memory rule then follows instead of the resident-memory change. `None` without it.
    pub heap_alert: Option<bool>,
}

/// How a printed call's line began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Not printed yet.
    No,
    /// Printed; nothing since needs a `Still`.
    Yes,
    /// Printed, then other lines or output came after it: its next line starts with `Still`.
    Interrupted,
}

/// A call the printer knows to be running.
#[derive(Debug, Clone)]
struct Open {
    call: Call,
    shown: Shown,
    /// Started before other output that came while it was not printed yet: first line says `Currently`.
    currently: bool,
    /// When its next dot (or `Still` line) is due, ticks.
    next_dot: u64,
}

/// A printed call that left the running snapshot before its end record arrived: the thread's next drain
/// delivers the record or proves it lost.
#[derive(Debug, Clone)]
struct Limbo {
    thread: usize,
    open: Open,
}

#[derive(Debug, Default)]
struct ThreadView {
    /// `"<name>: "` for threads other than the main thread, else empty.
    prefix: String,
    /// The calls running at the last snapshot, outermost first (`stack[d].call.depth == d`).
    stack: Vec<Open>,
    /// When this thread last printed a line (ticks): a `Still` line only comes at a dot due after it.
    last_line_at: u64,
    /// The call whose end record came last in the latest drain, until the next snapshot: that snapshot may
    /// still show it.
    last_ended: Option<(u32, u64)>,
    /// A call that left the snapshot unprinted but may have run past the time limit: its record decides
    /// whether it prints, so the printer wants this thread drained.
    wants_drain: bool,
    /// When the thread panicked (ticks), if it did: calls open then were ended by the unwinding.
    panicked_at: Option<u64>,
    /// A call that is no section and had not ended at exit (a lock's wait that never got its lock), and
    /// the ending its final line says so with ([`Printer::not_ended`]).
    not_ended: Option<((u32, u64), &'static str)>,
}

/// Whose message the open line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A thread's call: (thread, (depth, start)).
    Call(usize, (u32, u64)),
    /// A pending future, by id.
    Future(u64),
}

/// The open line on the screen: whose message it holds and how long it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpenLine {
    owner: Owner,
    /// Terminal columns on the line so far (prefix, indent, words, message, dots), for the stats' padding.
    width: usize,
}

/// The live printer's state.
#[derive(Debug)]
pub struct Printer {
    settings: Settings,
    threads: Vec<ThreadView>,
    limbo: Vec<Limbo>,
    /// The line left open (no newline yet), if any.
    line: Option<OpenLine>,
    /// When other output last reached the terminal (ticks).
    output_at: Option<u64>,
    /// The pending live futures, as of the last [`Printer::pending`], sorted by (start, id): a future comes
    /// after the ones awaiting it.
    futures: Vec<OpenFuture>,
    /// When the async track last printed a line (ticks): a `Still` line only comes at a dot due after it.
    futures_last_line_at: u64,
}

impl Printer {
    /// A printer with nothing on screen.
    pub fn new(settings: Settings) -> Printer {
        Printer {
            settings,
            threads: Vec::new(),
            limbo: Vec::new(),
            line: None,
            output_at: None,
            futures: Vec::new(),
            futures_last_line_at: 0,
        }
    }

    fn view(&mut self, thread: usize, name: &str, is_main: bool) -> &mut ThreadView {
        if self.threads.len() <= thread {
            self.threads.resize_with(thread + 1, ThreadView::default);
        }
        let view = &mut self.threads[thread];
        if !is_main && view.prefix.is_empty() {
            view.prefix = if name == "async" {
                // `async: ` is the pending futures' prefix: a thread of that name must not look like them.
                "thread async: ".to_owned()
            } else {
                format!("{}: ", text::escape(name))
            };
        }
        view
    }

    /// Declares thread `thread` (its name prefixes its lines unless it is the main thread).
    pub fn thread(&mut self, thread: usize, name: &str, is_main: bool) {
        self.view(thread, name, is_main);
    }

    /// A call of `thread` completed. Prints its stats if it is on screen, or a `Finished` line when it ran past
    /// the time limit or grew memory past the memory limit.
    pub fn ended(&mut self, thread: usize, ended: Ended, out: &mut String) {
        self.view(thread, "", true);
        let before = out.len();
        let end = ended.end;
        let key = (ended.call.depth, ended.call.start);
        let d = ended.call.depth as usize;
        let stack = &self.threads[thread].stack;
        let open = if stack.get(d).is_some_and(|o| key_of(&o.call) == key) {
            // Anything deeper ended before it; their records were lost (or are in limbo).
            self.retire_from(thread, d + 1, out);
            self.threads[thread].stack.pop()
        } else if let Some(i) = self
            .limbo
            .iter()
            .position(|l| l.thread == thread && key_of(&l.open.call) == key)
        {
            Some(self.limbo.remove(i).open)
        } else {
            None
        };
        match open {
            Some(open) if open.shown != Shown::No => self.print_end(thread, &open, &ended, out),
            _ => {
                if self.must_print(&ended) {
                    self.print_unseen_end(thread, ended, out);
                }
            }
        }
        if out.len() != before {
            self.threads[thread].last_line_at = end;
        }
    }

    fn must_print(&self, e: &Ended) -> bool {
        let grown = e.mem_end_kb as i64 - e.mem_start_kb as i64;
        let over_mem_limit = e
            .heap_alert
            .unwrap_or(grown > self.settings.mem_limit_kb as i64);
        self.settings.all
            || e.end.saturating_sub(e.call.start) > self.settings.time_limit
            || over_mem_limit
    }

    /// The drain of `thread`'s ring that delivered the last [`ended`](Printer::ended) calls is complete;
    /// `last` is the (depth, start) of the last record it read. Printed calls that left an earlier snapshot
    /// and are still unmatched lost their end record to overflow: their lines say so.
    pub fn drained(&mut self, thread: usize, last: Option<(u32, u64)>, out: &mut String) {
        self.view(thread, "", true);
        let mut i = 0;
        while i < self.limbo.len() {
            if self.limbo[i].thread == thread {
                let l = self.limbo.remove(i);
                self.print_lost_end(thread, &l.open, out);
            } else {
                i += 1;
            }
        }
        let view = &mut self.threads[thread];
        view.wants_drain = false;
        if last.is_some() {
            view.last_ended = last;
        }
    }

    /// What `thread` runs at `now`, outermost first (as far as the snapshot could see). Calls no longer there
    /// have ended; their end records are in the ring, for the next drain.
    pub fn running(&mut self, thread: usize, calls: &[Call], now: u64) {
        self.view(thread, "", true);
        let limit = self.settings.time_limit;
        let view = &mut self.threads[thread];
        // The snapshot may still show the call the last drain ended (and, inside it, nothing).
        let calls = match view.last_ended.take() {
            Some(key) => match calls.iter().position(|c| key_of(c) == key) {
                Some(cut) => &calls[..cut],
                None => calls,
            },
            None => calls,
        };
        let common = view
            .stack
            .iter()
            .zip(calls)
            .take_while(|(o, c)| key_of(&o.call) == key_of(c))
            .count();
        for open in view.stack.drain(common..) {
            if open.shown != Shown::No {
                self.limbo.push(Limbo { thread, open });
            } else if now.saturating_sub(open.call.start) > limit || self.settings.all {
                view.wants_drain = true;
            }
        }
        for call in &calls[common..] {
            view.stack.push(Open {
                call: call.clone(),
                shown: Shown::No,
                currently: self.output_at.is_some_and(|at| call.start <= at),
                next_dot: call.start.saturating_add(limit),
            });
        }
    }

    /// Whether a printed call of `thread` ended and its end record is not drained yet.
    fn in_limbo(&self, thread: usize) -> bool {
        self.limbo.iter().any(|l| l.thread == thread)
    }

    /// Whether the printer needs the rings drained at the next pass: a printed call ended without its record
    /// yet, or a call that may have run past the limit ended unprinted.
    pub fn wants_drain(&self) -> bool {
        !self.limbo.is_empty() || self.threads.iter().any(|v| v.wants_drain)
    }

    /// Whether the end record of the call `(depth, start)` on `thread` concerns the printer even when the
    /// call was short and grew no memory: it is a call the printer has on its stack or waits for.
    pub fn expects(&self, thread: usize, depth: u32, start: u64) -> bool {
        let key = (depth, start);
        self.threads.get(thread).is_some_and(|v| {
            v.stack
                .get(depth as usize)
                .is_some_and(|o| key_of(&o.call) == key)
        }) || self
            .limbo
            .iter()
            .any(|l| l.thread == thread && key_of(&l.open.call) == key)
    }

    /// Something else was written to the terminal at `at` (ticks): the program's own output through
    /// `suspend`, a report. The open line was ended by whoever wrote; printed calls say `Still` when they
    /// print again, calls that were running then but not printed yet say `Currently` (including those the
    /// next snapshot shows for the first time).
    pub fn other_output(&mut self, at: u64) {
        self.line = None;
        self.output_at = Some(self.output_at.map_or(at, |t| t.max(at)));
        for view in &mut self.threads {
            for open in &mut view.stack {
                match open.shown {
                    Shown::No => open.currently |= open.call.start <= at,
                    Shown::Yes | Shown::Interrupted => open.shown = Shown::Interrupted,
                }
            }
        }
        for f in &mut self.futures {
            match f.shown {
                Shown::No => f.currently |= f.call.start <= at,
                Shown::Yes | Shown::Interrupted => f.shown = Shown::Interrupted,
            }
        }
    }

    /// Re-reads the clock's scale (it is calibrated over the run) and the time limit in ticks.
    pub fn set_clock(&mut self, scale: Scale, time_limit: u64) {
        self.settings.scale = scale;
        self.settings.time_limit = time_limit.max(1);
    }

    /// Whether live-all is on (every section prints).
    pub fn all(&self) -> bool {
        self.settings.all
    }

    /// Whether the printer knows of running calls on `thread` (or ended ones it waits for).
    pub fn busy(&self, thread: usize) -> bool {
        self.threads
            .get(thread)
            .is_some_and(|v| !v.stack.is_empty() || v.last_ended.is_some() || v.wants_drain)
            || self.limbo.iter().any(|l| l.thread == thread)
    }

    /// Whether the printer is done with `thread` (an exited one): nothing of it is running, awaited, or on
    /// the open line, so [`forget`](Printer::forget) may drop it.
    pub fn done_with(&self, thread: usize) -> bool {
        !self.busy(thread)
            && self
                .line
                .is_none_or(|l| !matches!(l.owner, Owner::Call(t, _) if t == thread))
    }

    /// Drops what the printer knows of `thread` (one it is [done with](Printer::done_with)); the number
    /// may then be given to another thread.
    pub fn forget(&mut self, thread: usize) {
        if let Some(view) = self.threads.get_mut(thread) {
            *view = ThreadView::default();
        }
    }

    /// One more than the depth of `thread`'s innermost call on screen (0: none): ends of calls above it are
    /// what the printer must see at once.
    pub fn printed_depth(&self, thread: usize) -> u32 {
        self.threads.get(thread).map_or(0, |view| {
            view.stack
                .iter()
                .rposition(|o| o.shown != Shown::No)
                .map_or(0, |d| d as u32 + 1)
        })
    }

    /// Prints what is due at `now`: messages of calls crossing the time limit (with their ancestors), dots,
    /// `Still` lines. Returns when the next thing is due, in ticks (`None`: nothing is pending).
    pub fn tick(&mut self, now: u64, out: &mut String) -> Option<u64> {
        let limit = self.settings.time_limit;
        for t in 0..self.threads.len() {
            // What the thread shows next depends on the call in limbo (its stats end its own line, before any
            // `Still` line of its parent), and the next drain, at most a pass away, delivers it.
            if self.in_limbo(t) {
                continue;
            }
            for d in 0..self.threads[t].stack.len() {
                let open = &self.threads[t].stack[d];
                let due = open.call.start.saturating_add(limit) <= now || self.settings.all;
                if open.shown == Shown::No && due {
                    self.print_start(t, d, out);
                    self.threads[t].last_line_at = now;
                    let open = &mut self.threads[t].stack[d];
                    open.next_dot = open.call.start.saturating_add(2 * limit).max(now + 1);
                }
            }
            // Dots (or a `Still` line) for the innermost printed call of this thread.
            let Some(d) = self.threads[t]
                .stack
                .iter()
                .rposition(|o| o.shown != Shown::No)
            else {
                continue;
            };
            let open = &self.threads[t].stack[d];
            if !open.call.dots || open.next_dot > now {
                continue;
            }
            let is_last = self
                .line
                .is_some_and(|l| l.owner == Owner::Call(t, key_of(&open.call)));
            let intervals = (now - open.next_dot) / limit.max(1) + 1;
            if is_last {
                out.push('.');
                if let Some(line) = &mut self.line {
                    line.width += 1;
                }
            } else if open.next_dot > self.threads[t].last_line_at {
                // Printed again after something else (deeper calls here are all unprinted, by the choice of
                // `d`): a `Still` line at its first dot due after that, then dots continue on it.
                self.threads[t].stack[d].shown = Shown::Interrupted;
                self.print_line(t, d, out);
                self.threads[t].last_line_at = now;
            }
            let open = &mut self.threads[t].stack[d];
            open.next_dot += intervals * limit.max(1);
        }
        self.tick_futures(now, out);
        self.next_due()
    }

    /// When the next thing is due.
    fn next_due(&self) -> Option<u64> {
        let limit = self.settings.time_limit;
        let mut next: Option<u64> = None;
        let mut at = |t: u64| next = Some(next.map_or(t, |n| n.min(t)));
        for (t, view) in self.threads.iter().enumerate() {
            // Waiting for an end record (`tick` skips it): due at the next drain, which `wants_drain` asks for.
            if self.in_limbo(t) {
                continue;
            }
            // Unprinted calls are due when they cross the limit; only the innermost printed call gets dots.
            let innermost = view.stack.iter().rposition(|o| o.shown != Shown::No);
            for (d, open) in view.stack.iter().enumerate() {
                match open.shown {
                    Shown::No => at(open.call.start.saturating_add(limit)),
                    _ if open.call.dots && Some(d) == innermost => at(open.next_dot),
                    _ => {}
                }
            }
        }
        if let Some(due) = self.futures_due() {
            at(due);
        }
        next
    }

    /// At exit, before [`finish`](Printer::finish): `call` of `thread` is no section, and had not ended (a
    /// lock's wait that never got its lock): its final line must not say `Finished`, and says `ending`.
    pub fn not_ended(&mut self, thread: usize, call: &Call, ending: &'static str) {
        self.view(thread, "", true).not_ended = Some((key_of(call), ending));
    }

    /// Process exit: the final lines of calls still on screen (innermost first), timed up to `now` (ticks).
    pub fn finish(&mut self, now: u64, mem_kb: u32, out: &mut String) {
        for t in 0..self.threads.len() {
            while let Some(open) = self.threads[t].stack.pop() {
                if open.shown == Shown::No {
                    continue;
                }
                let end = now.max(open.call.start);
                let ended = Ended {
                    call: open.call.clone(),
                    end,
                    heap_alert: None,
                    mem_start_kb: mem_kb,
                    mem_end_kb: mem_kb,
                };
                match self.threads[t].not_ended {
                    Some((key, ending)) if key == key_of(&open.call) => {
                        self.print_not_ended(t, &open, &ended, ending, out);
                    }
                    _ => self.print_end(t, &open, &ended, out),
                }
            }
        }
        for l in std::mem::take(&mut self.limbo) {
            if l.open.shown != Shown::No {
                self.print_lost_end(l.thread, &l.open, out);
            }
        }
        self.finish_futures(now, mem_kb, out);
        self.end_line(out);
    }

    /// Calls on `thread` from depth `from` down, which ended without their records: out of the stack.
    fn retire_from(&mut self, thread: usize, from: usize, out: &mut String) {
        while self.threads[thread].stack.len() > from {
            let open = self.threads[thread].stack.pop().expect("len > from");
            if open.shown != Shown::No {
                self.print_lost_end(thread, &open, out);
            }
        }
    }

    /// Thread `thread` panicked at `at` (ticks): the calls it had open then end by unwinding, and their
    /// `Finished` lines say `(panicked)`.
    pub fn panicked(&mut self, thread: usize, at: u64) {
        if let Some(view) = self.threads.get_mut(thread) {
            view.panicked_at = Some(at);
        }
    }
}

fn key_of(call: &Call) -> (u32, u64) {
    (call.depth, call.start)
}

/// The word a call's line opens with as it is printed now (`Still ` after an interruption, `Currently `
/// when the program printed since the call began, else none); the call is on screen from then on.
fn opening_word(shown: &mut Shown, currently: &mut bool) -> &'static str {
    let word = match (*shown, *currently) {
        (Shown::Interrupted, _) => "Still ",
        (Shown::No, true) => "Currently ",
        _ => "",
    };
    *shown = Shown::Yes;
    *currently = false;
    word
}
