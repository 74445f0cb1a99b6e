//! The async track of the live printer: timed futures of `live` sections still pending, by wall time (first
//! poll to completion or drop), whether or not a thread polls them at the moment.
//!
//! A pending future belongs to no thread between its polls, so its lines never carry a thread's prefix: they
//! start with [`PREFIX`] (`async: `), indented two spaces per pending live future awaiting it (the one it was
//! first polled inside, and so on up), which prints first, for context, as a thread's enclosing sections do.
//! Otherwise the thread rules apply: the message when it has been pending the time limit, a dot per interval
//! (for one future: the latest started of the printed futures with dots that no printed future awaits), the
//! stats (wall time, memory at
//! its end) on its line if that is still the last thing on screen, else a `Finished` line; `Still` and
//! `Currently` as for sections. A future dropped before completing says so: `Finished <message>
//! (cancelled)`. A poll that itself runs past the limit prints on its thread as any section does.

use crate::base::text;
use crate::collector::live::line::{push_head, push_padding};

use super::{OpenLine, Owner, Printer, Shown, opening_word};

/// What starts every line of the async track.
pub const PREFIX: &str = "async: ";

/// A pending future as the printer sees it (`id` identifies it; `parent` is the pending future it was first
/// polled inside, 0 for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncCall {
    /// Unique in the process, never 0.
    pub id: u64,
    /// The awaiting future's id, 0 for none.
    pub parent: u64,
    /// First poll, in clock ticks.
    pub start: u64,
    /// Live message.
    pub message: super::Message,
    /// Whether it shows dots.
    pub dots: bool,
}

/// A future that completed or was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncEnded {
    /// The future.
    pub call: AsyncCall,
    /// Completion or drop, in clock ticks.
    pub end: u64,
    /// Resident memory at its end, KiB.
    pub mem_end_kb: u32,
    /// Dropped before completing.
    pub cancelled: bool,
}

/// A pending future the printer knows.
#[derive(Debug, Clone)]
pub(super) struct OpenFuture {
    pub(super) call: AsyncCall,
    /// Its indent level: one more than the awaiting future's, if that one was pending when this one was
    /// first seen; else 0. Fixed from then on, so its lines stay in one column.
    level: usize,
    pub(super) shown: Shown,
    /// It was pending, not printed yet, when other output came: its first line says `Currently`.
    pub(super) currently: bool,
    /// When its next dot (or `Still` line) is due, ticks.
    next_dot: u64,
}

fn order(c: &AsyncCall) -> (u64, u64) {
    (c.start, c.id)
}

impl Printer {
    /// The pending live futures at the pass's time (any order; none of them ended). A printed future that
    /// left the list without its end reaching [`future_ended`](Printer::future_ended) gets a `Finished` line
    /// saying its end was not recorded (the list keeps the end of every future live print may show, so
    /// this does not happen unless the clock's calibration moved the limit by half).
    pub fn pending(&mut self, pending: &[AsyncCall], out: &mut String) {
        let limit = self.settings.time_limit;
        let mut sorted = pending.to_vec();
        sorted.sort_by_key(order);
        let mut old = std::mem::take(&mut self.futures).into_iter().peekable();
        let mut next: Vec<OpenFuture> = Vec::with_capacity(sorted.len());
        let mut gone = Vec::new();
        for call in sorted {
            while let Some(o) = old.next_if(|o| order(&o.call) < order(&call)) {
                gone.push(o);
            }
            if let Some(o) = old.next_if(|o| o.call.id == call.id) {
                next.push(o);
                continue;
            }
            let level = next
                .iter()
                .rev()
                .find(|f| call.parent != 0 && f.call.id == call.parent)
                .map_or(0, |f| f.level + 1);
            let start = call.start;
            next.push(OpenFuture {
                call,
                level,
                shown: Shown::No,
                currently: self.output_at.is_some_and(|at| start <= at),
                next_dot: start.saturating_add(limit),
            });
        }
        gone.extend(old);
        self.futures = next;
        for f in gone.into_iter().filter(|f| f.shown != Shown::No) {
            let width = self.print_finished_head(None, f.level, &f.call.message, "", out);
            push_padding(out, width);
            out.push_str("[end not recorded]\n");
        }
    }

    /// A future ended (its end was kept for live print: it ran at least half the time limit). Prints its
    /// wall time and memory if it is on screen, or a `Finished` line when it was pending past the limit.
    pub fn future_ended(&mut self, e: AsyncEnded, out: &mut String) {
        let i = self.futures.iter().position(|f| f.call.id == e.call.id);
        let open = i.map(|i| self.futures.remove(i));
        let ending = if e.cancelled { " (cancelled)" } else { "" };
        let before = out.len();
        match open {
            Some(f) if f.shown != Shown::No => match self.line {
                Some(line) if line.owner == Owner::Future(e.call.id) && !e.cancelled => {
                    self.line = None;
                    self.push_stats_of(line.width, e.call.start, e.end, e.mem_end_kb, out);
                }
                _ => {
                    let width =
                        self.print_finished_head(None, f.level, &e.call.message, ending, out);
                    self.push_stats_of(width, e.call.start, e.end, e.mem_end_kb, out);
                }
            },
            f if e.end.saturating_sub(e.call.start) > self.settings.time_limit => {
                // Pending past the limit, ended before a pass printed it: its awaiting futures for
                // context, then `Finished`.
                let parent = self.futures.iter().position(|f| f.call.id == e.call.parent);
                let level = match (f, parent) {
                    (Some(f), _) => f.level,
                    (None, Some(p)) => self.futures[p].level + 1,
                    (None, None) => 0,
                };
                if let Some(p) = parent {
                    self.print_future_start(p, out);
                }
                let width = self.print_finished_head(None, level, &e.call.message, ending, out);
                self.push_stats_of(width, e.call.start, e.end, e.mem_end_kb, out);
            }
            _ => {}
        }
        if out.len() != before {
            self.futures_last_line_at = e.end;
            self.after_future_line();
        }
    }

    /// Prints the futures' messages due at `now` (with their unprinted awaiting futures), dots, `Still` lines.
    pub(super) fn tick_futures(&mut self, now: u64, out: &mut String) {
        let limit = self.settings.time_limit;
        for i in 0..self.futures.len() {
            let f = &self.futures[i];
            if f.shown == Shown::No && f.call.start.saturating_add(limit) <= now {
                self.print_future_start(i, out);
                self.futures_last_line_at = now;
                let f = &mut self.futures[i];
                f.next_dot = f.call.start.saturating_add(2 * limit).max(now + 1);
            }
        }
        if let Some(i) = self.dotted() {
            let f = &self.futures[i];
            if f.next_dot > now {
                return;
            }
            let intervals = (now - f.next_dot) / limit.max(1) + 1;
            if self
                .line
                .is_some_and(|l| l.owner == Owner::Future(f.call.id))
            {
                out.push('.');
                if let Some(line) = &mut self.line {
                    line.width += 1;
                }
            } else if f.next_dot > self.futures_last_line_at {
                self.futures[i].shown = Shown::Interrupted;
                self.print_future_line(i, out);
                self.futures_last_line_at = now;
            }
            self.futures[i].next_dot += intervals * limit.max(1);
        }
    }

    /// The one future that gets dots: the latest started of the printed futures with dots that no printed
    /// future awaits. (One track, one dotted line: futures pending side by side would otherwise interrupt
    /// each other with a `Still` line at every interval; the others show their time when they end.)
    fn dotted(&self) -> Option<usize> {
        (0..self.futures.len()).rev().find(|&i| {
            let f = &self.futures[i];
            f.shown != Shown::No
                && f.call.dots
                && !self.futures[i + 1..]
                    .iter()
                    .any(|c| c.call.parent == f.call.id && c.shown != Shown::No)
        })
    }

    /// When the next thing of the async track is due.
    pub(super) fn futures_due(&self) -> Option<u64> {
        let limit = self.settings.time_limit;
        let unprinted = self
            .futures
            .iter()
            .filter(|f| f.shown == Shown::No)
            .map(|f| f.call.start.saturating_add(limit));
        let dot = self.dotted().map(|i| self.futures[i].next_dot);
        unprinted.chain(dot).min()
    }

    /// Process exit: the final lines of the futures on screen (awaited ones first), timed up to `now`.
    pub(super) fn finish_futures(&mut self, now: u64, mem_kb: u32, out: &mut String) {
        while let Some(f) = self.futures.pop() {
            if f.shown == Shown::No {
                continue;
            }
            let end = now.max(f.call.start);
            match self.line {
                Some(line) if line.owner == Owner::Future(f.call.id) => {
                    self.line = None;
                    self.push_stats_of(line.width, f.call.start, end, mem_kb, out);
                }
                _ => {
                    let width = self.print_finished_head(None, f.level, &f.call.message, "", out);
                    self.push_stats_of(width, f.call.start, end, mem_kb, out);
                }
            }
        }
    }

    /// Prints future `i` and the futures awaiting it, outermost first, those not printed yet (the last line
    /// is left open).
    fn print_future_start(&mut self, i: usize, out: &mut String) {
        let mut chain = vec![i];
        let mut parent = self.futures[i].call.parent;
        // The awaiting futures come before it in the sorted list.
        while let Some(p) = self.futures[..chain[chain.len() - 1]]
            .iter()
            .rposition(|f| parent != 0 && f.call.id == parent)
        {
            chain.push(p);
            parent = self.futures[p].call.parent;
        }
        for &a in chain.iter().rev() {
            if self.futures[a].shown == Shown::No {
                self.print_future_line(a, out);
            }
        }
    }

    /// Prints future `i`'s line, leaving it open: `async: ` + indent + `[Still |Currently ]message`.
    fn print_future_line(&mut self, i: usize, out: &mut String) {
        self.end_line(out);
        let f = &mut self.futures[i];
        let word = opening_word(&mut f.shown, &mut f.currently);
        let (call, level) = (f.call.clone(), f.level);
        let start = out.len();
        push_head(out, PREFIX, level, word, &call.message);
        for (j, f) in self.futures.iter_mut().enumerate() {
            if j != i && f.shown == Shown::Yes {
                f.shown = Shown::Interrupted;
            }
        }
        self.line = Some(OpenLine {
            owner: Owner::Future(call.id),
            width: text::width(&out[start..]),
        });
    }

    /// After a line of the async track: the futures on screen say `Still` next time.
    fn after_future_line(&mut self) {
        for f in &mut self.futures {
            if f.shown == Shown::Yes {
                f.shown = Shown::Interrupted;
            }
        }
    }
}
