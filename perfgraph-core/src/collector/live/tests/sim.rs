//! The live printer's simulation for the golden transcripts: a fake clock in microseconds, the
//! background thread's passes at their due times, and the screen they leave.

use super::super::printer::{AsyncCall, AsyncEnded, Call, Ended, Printer, Settings};
use crate::base::clock::{Scale, Ticks};

pub(super) const SECOND: u64 = 1_000_000;
/// KiB for `mb` decimal megabytes (rounded up, so they print back as `mb`).
pub(super) fn kib(mb: u32) -> u32 {
    (mb as u64 * 1_000_000).div_ceil(1024) as u32
}

pub(super) fn settings() -> Settings {
    Settings {
        time_limit: SECOND,
        scale: Scale::fixed(Ticks(0), 1000.0),
        mem_limit_kb: 100 * 1000 * 1000 / 1024,
        all: false,
        color: false,
    }
}

#[derive(Clone, Copy)]
pub(super) enum Step {
    Start {
        thread: usize,
        message: &'static str,
        dots: bool,
        mem_mb: u32,
    },
    End {
        thread: usize,
        mem_mb: u32,
    },
    /// The innermost call of `thread` ends, but its record reaches the printer only at the next drain after
    /// the snapshot that no longer shows it (the background thread was busy when it ended).
    EndLate {
        thread: usize,
    },
    /// The innermost call of `thread` ends and its record is lost (ring overflow).
    EndLost {
        thread: usize,
    },
    Output(&'static str),
    /// `thread` panics: the hook prints the message (as other output) and notes the panic; the calls it
    /// has open then end as the unwinding drops their guards.
    Panic {
        thread: usize,
        message: &'static str,
    },
    /// A timed future of a `live` section is first polled (`parent`: the pending live future it was first
    /// polled inside, 0 for none): it joins the pending list.
    Spawn {
        id: u64,
        parent: u64,
        message: &'static str,
        dots: bool,
    },
    /// The future `id` completes (or, `cancelled`, is dropped): it leaves the pending list; its end is kept
    /// for the next pass when it ran at least half the limit, as `local::pending` does.
    Complete {
        id: u64,
        cancelled: bool,
    },
}

/// The background thread's memory interval: a pass comes at least this often when the printer wants a drain.
const PASS_INTERVAL: u64 = 20_000;

pub(super) struct Sim {
    printer: Printer,
    /// Per thread: open calls (call, mem at start).
    open: Vec<Vec<(Call, u32)>>,
    events: Vec<(u64, Step)>,
    screen: String,
    log: Vec<String>,
    /// Per thread: records not delivered yet (delivered at the next pass's drain), and the last record
    /// delivered in the current batch.
    late: Vec<Vec<Ended>>,
    late_ready: Vec<Vec<Ended>>,
    last: Vec<Option<(u32, u64)>>,
    /// The pending list, and the ends it keeps for the next pass.
    futures: Vec<AsyncCall>,
    futures_ended: Vec<AsyncEnded>,
}

impl Sim {
    pub(super) fn new(settings: Settings, names: &[(&'static str, bool)]) -> Sim {
        let mut printer = Printer::new(settings);
        for (i, (name, main)) in names.iter().enumerate() {
            printer.thread(i, name, *main);
        }
        Sim {
            printer,
            open: vec![Vec::new(); names.len()],
            events: Vec::new(),
            screen: String::new(),
            log: Vec::new(),
            late: vec![Vec::new(); names.len()],
            late_ready: vec![Vec::new(); names.len()],
            last: vec![None; names.len()],
            futures: Vec::new(),
            futures_ended: Vec::new(),
        }
    }

    pub(super) fn spawn(
        &mut self,
        t: u64,
        id: u64,
        parent: u64,
        message: &'static str,
        dots: bool,
    ) -> &mut Sim {
        self.at(
            t,
            Step::Spawn {
                id,
                parent,
                message,
                dots,
            },
        )
    }

    pub(super) fn complete(&mut self, t: u64, id: u64) -> &mut Sim {
        self.at(
            t,
            Step::Complete {
                id,
                cancelled: false,
            },
        )
    }

    pub(super) fn at(&mut self, t: u64, step: Step) -> &mut Sim {
        self.events.push((t, step));
        self
    }

    pub(super) fn start(
        &mut self,
        t: u64,
        thread: usize,
        message: &'static str,
        dots: bool,
    ) -> &mut Sim {
        self.at(
            t,
            Step::Start {
                thread,
                message,
                dots,
                mem_mb: 97,
            },
        )
    }

    pub(super) fn end(&mut self, t: u64, thread: usize) -> &mut Sim {
        self.at(t, Step::End { thread, mem_mb: 97 })
    }

    /// What `suspend` does for other output: emit the pass's pending text, end the open line, write
    /// `text`, tell the printer.
    fn suspend_and_write(&mut self, now: u64, out: &mut String, text: &str) {
        self.emit(now, out);
        out.clear();
        if self.printer_line_open() {
            self.emit(now, "\n");
        }
        self.emit(now, text);
        self.printer.other_output(now);
    }

    pub(super) fn emit(&mut self, now: u64, text: &str) {
        if !text.is_empty() {
            self.screen.push_str(text);
            self.log.push(format!("+{now:>9} {text:?}"));
        }
    }

    /// One pass of the background thread at `now`: the ended calls were delivered as they happened (late
    /// ones now), the drain completes; then the snapshot of what runs, then the tick.
    pub(super) fn pass(&mut self, now: u64) -> Option<u64> {
        let mut out = String::new();
        for t in 0..self.open.len() {
            for ended in std::mem::take(&mut self.late_ready[t]) {
                self.deliver(t, ended, &mut out);
            }
            self.printer.drained(t, self.last[t].take(), &mut out);
        }
        for t in 0..self.open.len() {
            let calls: Vec<Call> = self.open[t].iter().map(|(c, _)| c.clone()).collect();
            self.printer.running(t, &calls, now);
            self.late_ready[t] = std::mem::take(&mut self.late[t]);
        }
        for ended in std::mem::take(&mut self.futures_ended) {
            self.printer.future_ended(ended, &mut out);
        }
        self.printer.pending(&self.futures, &mut out);
        let next = self.printer.tick(now, &mut out);
        self.emit(now, &out);
        if self.printer.wants_drain() {
            let soon = now + PASS_INTERVAL;
            return Some(next.map_or(soon, |n| n.min(soon)));
        }
        next
    }

    pub(super) fn run(&mut self, until: u64) -> String {
        self.run_to(until, true)
    }

    /// Runs the script up to `until`; at the end, `finish` as at process exit.
    pub(super) fn run_to(&mut self, until: u64, finish: bool) -> String {
        self.events.sort_by_key(|(t, _)| *t);
        let events = std::mem::take(&mut self.events);
        let mut i = 0;
        let mut now = 0;
        let mut due: Option<u64> = None;
        loop {
            let next_event = events.get(i).map(|(t, _)| *t);
            let next = match (next_event, due) {
                (Some(e), Some(d)) => e.min(d),
                (Some(e), None) => e,
                (None, Some(d)) => d,
                (None, None) => break,
            };
            if next > until {
                break;
            }
            assert!(
                next > now || next_event == Some(now),
                "deadline {next} does not move past {now}"
            );
            now = next;
            let mut out = String::new();
            while i < events.len() && events[i].0 == now {
                self.apply(now, events[i].1, &mut out);
                i += 1;
            }
            self.emit(now, &out);
            due = self.pass(now);
        }
        if finish {
            let mut out = String::new();
            self.printer.finish(until, kib(97), &mut out);
            self.emit(until, &out);
        }
        format!(
            "{}\n---- written at (µs)\n{}",
            self.screen,
            self.log.join("\n")
        )
    }

    /// Applies one scripted `step` at `now`, writing what the printer prints to `out`.
    fn apply(&mut self, now: u64, step: Step, out: &mut String) {
        match step {
            Step::Start {
                thread,
                message,
                dots,
                mem_mb,
            } => {
                let depth = self.open[thread].len() as u32;
                let call = Call {
                    depth,
                    start: now,
                    message: message.into(),
                    dots,
                };
                self.open[thread].push((call, kib(mem_mb)));
            }
            Step::End { thread, mem_mb } => {
                let ended = self.pop_ended(thread, now, Some(kib(mem_mb)));
                self.deliver(thread, ended.expect("balanced script"), out);
            }
            Step::EndLate { thread } => {
                let ended = self.pop_ended(thread, now, None);
                self.late[thread].push(ended.expect("balanced script"));
            }
            Step::EndLost { thread } => {
                self.open[thread].pop().expect("balanced script");
            }
            Step::Output(text) => self.suspend_and_write(now, out, text),
            Step::Panic { thread, message } => {
                // The panic hook writes its message as `suspend` does, then labels the section.
                self.suspend_and_write(now, out, message);
                self.printer.panicked(thread, now);
                while let Some(ended) = self.pop_ended(thread, now, None) {
                    self.deliver(thread, ended, out);
                }
            }
            Step::Spawn {
                id,
                parent,
                message,
                dots,
            } => self.futures.push(AsyncCall {
                id,
                parent,
                start: now,
                message: message.into(),
                dots,
            }),
            Step::Complete { id, cancelled } => {
                let i = self
                    .futures
                    .iter()
                    .position(|f| f.id == id)
                    .expect("spawned");
                let call = self.futures.remove(i);
                if now - call.start >= SECOND / 2 {
                    self.futures_ended.push(AsyncEnded {
                        call,
                        end: now,
                        mem_end_kb: kib(97),
                        cancelled,
                    });
                }
            }
        }
    }

    /// Pops `thread`'s innermost open call as ended at `now`, with `mem_end_kb` as the memory at its end
    /// (the memory at its start when `None`); `None` when no call is open.
    fn pop_ended(&mut self, thread: usize, now: u64, mem_end_kb: Option<u32>) -> Option<Ended> {
        let (call, mem) = self.open[thread].pop()?;
        Some(Ended {
            call,
            end: now,
            heap_alert: None,
            mem_start_kb: mem,
            mem_end_kb: mem_end_kb.unwrap_or(mem),
        })
    }

    /// Delivers `ended` to the printer as a record of `thread`, and notes it as the batch's last record.
    fn deliver(&mut self, thread: usize, ended: Ended, out: &mut String) {
        let key = (ended.call.depth, ended.call.start);
        self.printer.ended(thread, ended, out);
        self.last[thread] = Some(key);
    }

    pub(super) fn printer_line_open(&self) -> bool {
        !self.screen.is_empty() && !self.screen.ends_with('\n')
    }
}
