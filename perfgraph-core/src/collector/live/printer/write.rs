//! The live printer's lines: how each decision of `printer/mod.rs` is written (a call's message line, its
//! `Still`/`Currently` word, the stats after it, `Finished` lines), for the threads' calls; the async track
//! writes its own in `futures.rs` with the same pieces. What to print and when stays in `printer/mod.rs`.

use crate::base::clock::Ticks;
use crate::base::text;
use crate::collector::live::line::{
    finished_head, push_head, push_indent, push_padding, push_stats_text,
};

use super::futures::PREFIX;
use super::{Ended, Open, OpenLine, Owner, Printer, Shown, key_of, opening_word};

impl Printer {
    /// `PERFGRAPH_LIVE=all`: an `event!` of `thread`, `text` on a line of its own, indented under the
    /// thread's innermost call on screen. The calls on screen say `Still` when they print again.
    pub fn event(&mut self, t: usize, text: &str, out: &mut String) {
        self.end_line(out);
        let level = self.printed_depth(t) as usize;
        push_head(out, &self.threads[t].prefix, level, "", text);
        out.push('\n');
        for open in &mut self.threads[t].stack {
            if open.shown == Shown::Yes {
                open.shown = Shown::Interrupted;
            }
        }
    }

    /// Ends the open line, if any, with its newline.
    pub(super) fn end_line(&mut self, out: &mut String) {
        if self.line.take().is_some() {
            out.push('\n');
        }
    }

    /// Prints the not-yet-printed ancestors of `thread`'s call at `d`, then the call itself (line left open).
    pub(super) fn print_start(&mut self, t: usize, d: usize, out: &mut String) {
        for a in 0..d {
            if self.threads[t].stack[a].shown == Shown::No {
                self.print_line(t, a, out);
            }
        }
        self.print_line(t, d, out);
    }

    /// Prints the line of `thread`'s open call at `d`, leaving it open: `[Still |Currently ]message`.
    pub(super) fn print_line(&mut self, t: usize, d: usize, out: &mut String) {
        self.end_line(out);
        // Every ancestor of a printed call is printed, so its printed level is its depth.
        let level = d;
        let open = &mut self.threads[t].stack[d];
        let word = opening_word(&mut open.shown, &mut open.currently);
        let call = open.call.clone();
        let start = out.len();
        push_head(out, &self.threads[t].prefix, level, word, &call.message);
        // Every ancestor on this thread is on screen; lines after this one interrupt them.
        for a in &mut self.threads[t].stack[..d] {
            a.shown = Shown::Interrupted;
        }
        self.line = Some(OpenLine {
            owner: Owner::Call(t, key_of(&call)),
            width: text::width(&out[start..]),
        });
    }

    /// `" (panicked)"` for a call its thread's panic ended (open when the thread panicked), else `""`.
    fn ending(&self, t: usize, e: &Ended) -> &'static str {
        match self.threads[t].panicked_at {
            Some(at) if e.call.start <= at && at <= e.end => " (panicked)",
            _ => "",
        }
    }

    /// A printed call ended: stats on its own line if that line is still the last thing on screen, else a
    /// `Finished` line (always one for a call a panic ended, which says so).
    pub(super) fn print_end(&mut self, t: usize, open: &Open, e: &Ended, out: &mut String) {
        let key = key_of(&open.call);
        let ending = self.ending(t, e);
        match self.line {
            Some(line) if line.owner == Owner::Call(t, key) && ending.is_empty() => {
                self.line = None;
                self.push_stats(line.width, e, out);
            }
            _ => {
                let depth = open.call.depth as usize;
                let width =
                    self.print_finished_head(Some(t), depth, &open.call.message, ending, out);
                self.push_stats(width, e, out);
            }
        }
        self.after_own_line(t);
    }

    /// A printed call that had not ended at exit and is no section (a lock's wait that never got its lock):
    /// never `Finished`, but `Still <message><ending>` on a line of its own, timed up to the exit.
    pub(super) fn print_not_ended(
        &mut self,
        t: usize,
        open: &Open,
        e: &Ended,
        ending: &str,
        out: &mut String,
    ) {
        self.end_line(out);
        let start = out.len();
        let level = open.call.depth as usize;
        push_head(
            out,
            &self.threads[t].prefix,
            level,
            "Still ",
            &open.call.message,
        );
        out.push_str(ending);
        let width = text::width(&out[start..]);
        self.push_stats(width, e, out);
        self.after_own_line(t);
    }

    /// A call that was never on screen but must print at its end: its ancestors for context, then `Finished`.
    pub(super) fn print_unseen_end(&mut self, t: usize, e: Ended, out: &mut String) {
        let d = (e.call.depth as usize).min(self.threads[t].stack.len());
        for a in 0..d {
            if self.threads[t].stack[a].shown == Shown::No {
                self.print_line(t, a, out);
            }
        }
        if self.settings.all && e.end.saturating_sub(e.call.start) <= self.settings.time_limit {
            // live-all: a short call that started and ended between two passes; message and stats, one line.
            self.end_line(out);
            let start = out.len();
            out.push_str(&self.threads[t].prefix);
            push_indent(out, d);
            out.push_str(&text::escape(&e.call.message));
            let width = text::width(&out[start..]);
            self.push_stats(width, &e, out);
        } else {
            let ending = self.ending(t, &e);
            let width = self.print_finished_head(Some(t), d, &e.call.message, ending, out);
            self.push_stats(width, &e, out);
        }
        self.after_own_line(t);
    }

    /// A printed call whose end record was lost to ring overflow: say so instead of inventing figures.
    pub(super) fn print_lost_end(&mut self, t: usize, open: &Open, out: &mut String) {
        let width = self.print_finished_head(
            Some(t),
            open.call.depth as usize,
            &open.call.message,
            "",
            out,
        );
        push_padding(out, width);
        out.push_str("[end not recorded: events lost]\n");
        self.after_own_line(t);
    }

    /// `prefix + indent + "Finished " + message + ending` on a new line; returns its width. The prefix is
    /// thread `t`'s, or the async track's ([`PREFIX`]) when `t` is `None`.
    pub(super) fn print_finished_head(
        &mut self,
        t: Option<usize>,
        level: usize,
        message: &str,
        ending: &str,
        out: &mut String,
    ) -> usize {
        self.end_line(out);
        let prefix = t.map_or(PREFIX, |t| self.threads[t].prefix.as_str());
        finished_head(out, prefix, level, message, ending)
    }

    /// Once a line of `thread` was printed, its open ancestors print `Still` next time.
    fn after_own_line(&mut self, t: usize) {
        for a in &mut self.threads[t].stack {
            if a.shown == Shown::Yes {
                a.shown = Shown::Interrupted;
            }
        }
    }

    /// Pads from `width` to the stats column, then `[  4.00 s] [   97 MB]` and the newline.
    fn push_stats(&self, width: usize, e: &Ended, out: &mut String) {
        self.push_stats_of(width, e.call.start, e.end, e.mem_end_kb, out);
    }

    /// [`push_stats`](Printer::push_stats) for the time from `start` to `end` (ticks) and `mem_kb` at the end.
    pub(super) fn push_stats_of(
        &self,
        width: usize,
        start: u64,
        end: u64,
        mem_kb: u32,
        out: &mut String,
    ) {
        push_padding(out, width);
        let seconds = self.settings.scale.delta_ns(Ticks(end).since(Ticks(start))) as f64 / 1e9;
        let mb = mem_kb as u64 * 1024 / 1_000_000;
        push_stats_text(out, seconds, mb, self.settings.color);
    }
}
