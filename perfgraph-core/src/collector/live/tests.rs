//! Golden transcripts of the live printer, driven by a fake clock in microseconds (1 tick = 1 µs here).
//! Nothing sleeps: the simulation jumps from one due time to the next, exactly as the background thread
//! would wake.
//!
//! Each transcript shows the screen as the user sees it, then when each piece of it was written
//! (`+<µs>`), which pins the timing rules (a message when its section crosses the limit, a dot per interval,
//! stats at once when a printed section ends).

use super::printer::{AsyncCall, AsyncEnded, Call, Ended, Printer, Settings};
use crate::base::clock::{Scale, Ticks};

const SECOND: u64 = 1_000_000;
/// KiB for `mb` decimal megabytes (rounded up, so they print back as `mb`).
fn kib(mb: u32) -> u32 {
    (mb as u64 * 1_000_000).div_ceil(1024) as u32
}

fn settings() -> Settings {
    Settings {
        time_limit: SECOND,
        scale: Scale::fixed(Ticks(0), 1000.0),
        mem_limit_kb: 100 * 1000 * 1000 / 1024,
        all: false,
        color: false,
    }
}

#[derive(Clone, Copy)]
enum Step {
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

struct Sim {
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
    fn new(settings: Settings, names: &[(&'static str, bool)]) -> Sim {
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

    fn spawn(
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

    fn complete(&mut self, t: u64, id: u64) -> &mut Sim {
        self.at(
            t,
            Step::Complete {
                id,
                cancelled: false,
            },
        )
    }

    fn at(&mut self, t: u64, step: Step) -> &mut Sim {
        self.events.push((t, step));
        self
    }

    fn start(&mut self, t: u64, thread: usize, message: &'static str, dots: bool) -> &mut Sim {
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

    fn end(&mut self, t: u64, thread: usize) -> &mut Sim {
        self.at(t, Step::End { thread, mem_mb: 97 })
    }

    fn emit(&mut self, now: u64, text: &str) {
        if !text.is_empty() {
            self.screen.push_str(text);
            self.log.push(format!("+{now:>9} {text:?}"));
        }
    }

    /// One pass of the background thread at `now`: the ended calls were delivered as they happened (late
    /// ones now), the drain completes; then the snapshot of what runs, then the tick.
    fn pass(&mut self, now: u64) -> Option<u64> {
        let mut out = String::new();
        for t in 0..self.open.len() {
            for ended in std::mem::take(&mut self.late_ready[t]) {
                let key = (ended.call.depth, ended.call.start);
                self.printer.ended(t, ended, &mut out);
                self.last[t] = Some(key);
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

    fn run(&mut self, until: u64) -> String {
        self.run_to(until, true)
    }

    /// Runs the script up to `until`; at the end, `finish` as at process exit.
    fn run_to(&mut self, until: u64, finish: bool) -> String {
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
                match events[i].1 {
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
                        let (call, mem) = self.open[thread].pop().expect("balanced script");
                        let key = (call.depth, call.start);
                        let ended = Ended {
                            call,
                            end: now,
                            heap_alert: None,
                            mem_start_kb: mem,
                            mem_end_kb: kib(mem_mb),
                        };
                        self.printer.ended(thread, ended, &mut out);
                        self.last[thread] = Some(key);
                    }
                    Step::EndLate { thread } => {
                        let (call, mem) = self.open[thread].pop().expect("balanced script");
                        self.late[thread].push(Ended {
                            call,
                            end: now,
                            heap_alert: None,
                            mem_start_kb: mem,
                            mem_end_kb: mem,
                        });
                    }
                    Step::EndLost { thread } => {
                        self.open[thread].pop().expect("balanced script");
                    }
                    Step::Output(text) => {
                        // What `suspend` does: end the open line, write, tell the printer.
                        self.emit(now, &out);
                        out.clear();
                        if self.printer_line_open() {
                            self.emit(now, "\n");
                        }
                        self.emit(now, text);
                        self.printer.other_output(now);
                    }
                    Step::Panic { thread, message } => {
                        self.emit(now, &out);
                        out.clear();
                        if self.printer_line_open() {
                            self.emit(now, "\n");
                        }
                        self.emit(now, message);
                        self.printer.other_output(now);
                        self.printer.panicked(thread, now);
                        while let Some((call, mem)) = self.open[thread].pop() {
                            let key = (call.depth, call.start);
                            let ended = Ended {
                                call,
                                end: now,
                                heap_alert: None,
                                mem_start_kb: mem,
                                mem_end_kb: mem,
                            };
                            self.printer.ended(thread, ended, &mut out);
                            self.last[thread] = Some(key);
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

    fn printer_line_open(&self) -> bool {
        !self.screen.is_empty() && !self.screen.ends_with('\n')
    }
}

#[test]
fn quick_sections_print_nothing() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Setting up", true)
        .start(100, 0, "Reading mesh", false)
        .end(900_000, 0)
        .end(990_000, 0);
    // Nothing on screen, nothing written.
    assert_eq!(sim.run(5 * SECOND), "\n---- written at (µs)\n");
}

#[test]
fn nested_sections_moose_example() {
    // MOOSE's `nested_sections` test: "Executing" (no dots) around "Testing Slowness" (4 s of its own)
    // around "Testing Nested Slowness" (4 s).
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Executing", false)
        .start(350_000, 0, "Testing Slowness", true)
        .start(350_000, 0, "Testing Nested Slowness", true)
        .end(4_350_000, 0)
        .end(8_360_000, 0)
        .at(
            8_700_000,
            Step::End {
                thread: 0,
                mem_mb: 104,
            },
        );
    insta::assert_snapshot!(sim.run(20 * SECOND));
}

#[test]
fn dots_then_stats_on_the_same_line() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Solving nonlinear system", true)
        .end(3_500_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn without_dots_the_message_waits_on_its_line() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Assembling", false).end(2_500_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn still_after_an_inner_section_printed() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Time stepping", true)
        .start(200_000, 0, "Solving", true)
        .end(2_600_000, 0)
        .end(5_100_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn finished_after_a_memory_jump_even_when_quick() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Program", false)
        .at(
            100_000,
            Step::Start {
                thread: 0,
                message: "Refining the mesh",
                dots: false,
                mem_mb: 50,
            },
        )
        .at(
            400_000,
            Step::End {
                thread: 0,
                mem_mb: 210,
            },
        )
        .end(600_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn finished_after_other_output() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Solving", true)
        .at(2_300_000, Step::Output("residual 1e-9\n"))
        .end(2_600_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn still_after_other_output() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Solving", true)
        .at(2_300_000, Step::Output("residual 1e-9\n"))
        .end(4_100_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn currently_after_other_output() {
    // Output while the outer section had not been printed yet: its context line says `Currently`.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Executing", false)
        .at(
            500_000,
            Step::Output("Timed section just started, printing something though\n"),
        )
        .start(600_000, 0, "Testing Slowness", true)
        .end(2_800_000, 0)
        .end(3_000_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn currently_when_the_output_came_before_the_first_snapshot() {
    // The program wrote right after its first section started, before the background thread ever looked
    // (MOOSE's `Timed section just started, printing something though`): still `Currently`.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Executing", false)
        .at(
            0,
            Step::Output("Timed section just started, printing something though\n"),
        )
        .end(1_400_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND), @r#"
    Timed section just started, printing something though
    Currently Executing                                                                      [  1.40 s] [   97 MB]

    ---- written at (µs)
    +        0 "Timed section just started, printing something though\n"
    +  1000000 "Currently Executing"
    +  1400000 "                                                                      [  1.40 s] [   97 MB]\n"
    "#);
}

#[test]
fn live_all_prints_every_section() {
    let mut sim = Sim::new(
        Settings {
            all: true,
            ..settings()
        },
        &[("main", true)],
    );
    sim.start(0, 0, "Setting up", false)
        .start(1000, 0, "Reading mesh", false)
        .end(2000, 0)
        .end(5000, 0)
        .start(10_000, 0, "Solving", true)
        .end(1_500_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn other_threads_have_a_prefix_and_their_own_indent() {
    let mut sim = Sim::new(settings(), &[("main", true), ("checkpointer", false)]);
    sim.start(0, 0, "Time stepping", false)
        .start(100_000, 0, "Solving", true)
        .start(500_000, 1, "Writing checkpoint", false)
        .start(600_000, 1, "Compressing", true)
        .end(2_900_000, 1)
        .end(3_000_000, 1)
        .end(3_700_000, 0)
        .end(3_800_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn overflow_lost_end_records_are_stated_not_invented() {
    // The printed section's end record is lost (ring overflow): the snapshot no longer shows it, so its
    // record was in the ring; the next drain does not deliver it, so it was lost. The line says so instead of
    // printing made-up figures, and the outer section goes on normally.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Outer", false)
        .start(100, 0, "Solving", true)
        .at(2_500_000, Step::EndLost { thread: 0 })
        .end(2_700_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_late_end_record_is_not_taken_for_a_lost_one() {
    // The section left the snapshot before its record was drained (the end's wake-up raced the pass): the
    // next drain delivers it and its stats print as usual.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Solving", true)
        .at(2_500_000, Step::EndLate { thread: 0 });
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_late_end_record_of_a_nested_call_comes_before_its_parents_still_line() {
    // MOOSE's nested dots sections: the inner one ends between two passes and leaves the snapshot before its
    // record is drained, while the outer one's dot is overdue (it gets none while the inner one is
    // innermost). The outer section must wait for the inner one's record: its stats on its own line, then
    // `Still`, as when the record comes at once (seen in CI: `Still Testing Slowness` came first, and the
    // inner section then said `Finished`).
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Testing Slowness", true)
        .start(100, 0, "Testing Nested Slowness", true)
        .at(2_500_000, Step::EndLate { thread: 0 })
        .end(4_200_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_snapshot_that_still_shows_an_ended_call_is_cut_there() {
    // The drain delivered the end of "Solving" before its thread published the lower depth, so the snapshot
    // taken just after still shows it: the printer must not take it for a running call (which would print its
    // message again and, later, a lost end).
    let mut printer = Printer::new(settings());
    printer.thread(0, "main", true);
    let mut out = String::new();
    let outer = Call {
        depth: 0,
        start: 0,
        message: "Outer".into(),
        dots: false,
    };
    let solving = Call {
        depth: 1,
        start: 100,
        message: "Solving".into(),
        dots: true,
    };
    printer.running(0, &[outer.clone(), solving.clone()], 500_000);
    printer.tick(1_000_100, &mut out);
    let ended = Ended {
        call: solving.clone(),
        end: 1_500_000,
        heap_alert: None,
        mem_start_kb: kib(97),
        mem_end_kb: kib(97),
    };
    printer.ended(0, ended, &mut out);
    printer.drained(0, Some((1, 100)), &mut out);
    printer.running(0, &[outer.clone(), solving], 1_500_001);
    printer.tick(3 * SECOND, &mut out);
    printer.drained(0, None, &mut out);
    printer.running(0, &[outer], 3 * SECOND + 1);
    printer.tick(3 * SECOND + 1, &mut out);
    printer.finish(4 * SECOND, kib(97), &mut out);
    insta::assert_snapshot!(out, @r"
    Outer
      Solving                                                                                [  1.50 s] [   97 MB]
    Finished Outer                                                                           [  4.00 s] [   97 MB]
    ");
}

#[test]
fn unprinted_sections_that_end_need_no_drain_unless_they_may_have_run_too_long() {
    let mut printer = Printer::new(settings());
    printer.thread(0, "main", true);
    let short = Call {
        depth: 0,
        start: 0,
        message: "Short".into(),
        dots: false,
    };
    printer.running(0, std::slice::from_ref(&short), 100);
    printer.running(0, &[], 200_000);
    assert!(!printer.wants_drain(), "gone after 0.2 s: it cannot print");
    let long = Call {
        start: 300_000,
        ..short
    };
    printer.running(0, &[long], 400_000);
    printer.running(0, &[], 1_400_000);
    assert!(
        printer.wants_drain(),
        "gone 1.1 s after its start: its record decides"
    );
    let mut out = String::new();
    printer.drained(0, None, &mut out);
    assert!(!printer.wants_drain());
    assert!(out.is_empty());
}

#[test]
fn colour_wraps_the_figures_only_and_keeps_the_column() {
    // Only on a terminal with NO_COLOR unset (decided by the caller): yellow around number and unit, the
    // padding computed without the escape codes.
    let mut sim = Sim::new(
        Settings {
            color: true,
            ..settings()
        },
        &[("main", true)],
    );
    sim.start(0, 0, "Solving", true).end(1_500_000, 0);
    let out = sim.run(10 * SECOND);
    let line = out.lines().next().unwrap();
    assert_eq!(
        line,
        format!(
            "Solving{}[\x1b[33m  1.50 s\x1b[39m] [\x1b[33m   97 MB\x1b[39m]",
            " ".repeat(89 - "Solving".len())
        )
    );
}

#[test]
fn lines_too_long_for_the_column_keep_one_space() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(
        0,
        0,
        "A very long live message that goes on and on well past the column where the stats begin",
        false,
    )
    .end(1_200_000, 0);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn odd_names_are_escaped_and_wide_ones_keep_the_stats_column() {
    let mut sim = Sim::new(settings(), &[("main", true), ("worker\x1b[2J", false)]);
    sim.start(0, 0, "Loading\nmesh", true)
        .start(0, 1, "網格を細分化しています 🚀", false)
        .end(2_500_000, 1)
        .end(3_500_000, 0);
    let text = sim.run(10 * SECOND);
    assert!(!text.contains('\x1b'), "{text}");
    assert!(!text.contains("Loading\nmesh"), "{text}");
    // The stats' `[` stands at the same terminal column on every line that has one.
    for line in text
        .lines()
        .filter(|l| !l.starts_with('+') && l.contains("[  "))
    {
        let at = line.find("[  ").unwrap();
        assert_eq!(
            crate::base::text::width(&line[..at]),
            super::line::STATS_COLUMN,
            "{line}"
        );
    }
    insta::assert_snapshot!(text);
}

#[test]
fn a_panic_ends_the_line_and_its_sections_say_so() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Time stepping", true)
        .start(200_000, 0, "Loading data", true)
        .at(
            2_500_000,
            Step::Panic {
                thread: 0,
                message: "thread 'main' panicked at src/main.rs:9:5:\nno mesh\n",
            },
        );
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

// Async code: timed futures of `live` sections pending past the limit, on the `async: ` track.

#[test]
fn a_pending_future_prints_by_wall_time_with_no_thread_polling_it() {
    // Nothing runs on any thread: the future waits (a timer, a socket) between short polls.
    let mut sim = Sim::new(settings(), &[("main", true), ("tokio-rt-worker", false)]);
    sim.spawn(0, 7, 0, "Fetching index", true)
        .start(10, 1, "Fetching index", true)
        .end(200, 1)
        .start(3_499_900, 1, "Fetching index", true)
        .end(3_500_000, 1)
        .complete(3_500_000, 7);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn quick_futures_print_nothing() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 1, 0, "Fetching", true)
        .complete(400_000, 1)
        .spawn(500_000, 2, 0, "Fetching", true)
        .complete(1_400_000, 2);
    assert_eq!(sim.run(5 * SECOND), "\n---- written at (µs)\n");
}

#[test]
fn awaited_futures_are_indented_under_the_futures_awaiting_them() {
    // `join!(user(), posts())` inside `serve()`: both are first polled inside serve's poll.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 1, 0, "Serving request", false)
        .spawn(100_000, 2, 1, "Fetching user", true)
        .spawn(100_000, 3, 1, "Fetching posts", true)
        .complete(1_600_000, 2)
        .complete(3_300_000, 3)
        .complete(3_500_000, 1);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn an_awaited_future_waits_for_the_one_awaiting_it_to_print_first() {
    // The inner future crosses the limit later; the outer one printed already: no repeat, one indent.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 1, 0, "Time stepping", true)
        .spawn(1_500_000, 2, 1, "Solving", true)
        .complete(4_000_000, 2)
        .complete(5_200_000, 1);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_long_poll_prints_on_its_thread_and_the_future_on_the_async_track() {
    // A poll that blocks its worker for 2 s is a section on that thread; the future's wall time is the
    // async track's. Neither line claims the other's.
    let mut sim = Sim::new(settings(), &[("main", true), ("tokio-rt-worker", false)]);
    sim.spawn(0, 5, 0, "Loading mesh", true)
        .start(0, 1, "Loading mesh", true)
        .end(100, 1)
        .start(500_000, 1, "Loading mesh", true)
        .end(2_500_000, 1)
        .complete(3_000_000, 5);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_cancelled_future_says_so() {
    // `tokio::time::timeout` drops the future it gave up on.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 9, 0, "Waiting for peer", true).at(
        2_200_000,
        Step::Complete {
            id: 9,
            cancelled: true,
        },
    );
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_future_pending_at_exit_is_timed_up_to_the_exit() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 1, 0, "Serving", false)
        .spawn(0, 2, 1, "Waiting for connections", true);
    insta::assert_snapshot!(sim.run(2_500_000));
}

#[test]
fn futures_and_output_say_still_and_currently() {
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.spawn(0, 1, 0, "Downloading", true)
        .spawn(900_000, 2, 0, "Uploading", true)
        .at(1_500_000, Step::Output("log: half way\n"))
        .complete(2_600_000, 1)
        .complete(3_100_000, 2);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn a_thread_named_async_does_not_look_like_the_async_track() {
    let mut sim = Sim::new(settings(), &[("main", true), ("async", false)]);
    sim.start(0, 1, "Compacting", false)
        .end(1_500_000, 1)
        .spawn(2_000_000, 1, 0, "Compacting", false)
        .complete(3_500_000, 1);
    insta::assert_snapshot!(sim.run(10 * SECOND));
}

#[test]
fn an_event_at_live_all_is_a_line_under_the_call_on_screen() {
    let mut printer = Printer::new(Settings {
        all: true,
        ..settings()
    });
    printer.thread(0, "main", true);
    let mut out = String::new();
    let solving = Call {
        depth: 0,
        start: 0,
        message: "Solving level 3".into(),
        dots: true,
    };
    printer.running(0, std::slice::from_ref(&solving), 100);
    printer.tick(1_000_100, &mut out);
    printer.event(0, "checkpoint written (step=3, file=out/3.h5)", &mut out);
    printer.tick(2_000_100, &mut out);
    let ended = Ended {
        call: solving,
        end: 2_500_000,
        heap_alert: None,
        mem_start_kb: kib(97),
        mem_end_kb: kib(97),
    };
    printer.ended(0, ended, &mut out);
    printer.drained(0, Some((0, 0)), &mut out);
    printer.event(0, "done", &mut out);
    printer.finish(3 * SECOND, kib(97), &mut out);
    insta::assert_snapshot!(out, @r"
    Solving level 3
      checkpoint written (step=3, file=out/3.h5)
    Still Solving level 3                                                                    [  2.50 s] [   97 MB]
    done
    ");
}
