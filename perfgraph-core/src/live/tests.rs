//! Golden transcripts of the live printer, driven by a fake clock in microseconds (1 tick = 1 µs here).
//! Nothing sleeps: the simulation jumps from one due time to the next, exactly as the background thread
//! would wake.
//!
//! Each transcript shows the screen as the user sees it, then when each piece of it was written
//! (`+<µs>`), which pins the timing rules (a message when its section crosses the limit, a dot per interval,
//! stats at once when a printed section ends).

use super::printer::{Call, Ended, Printer, Settings};

const SECOND: u64 = 1_000_000;
/// KiB for `mb` decimal megabytes (rounded up, so they print back as `mb`).
fn kib(mb: u32) -> u32 {
    (mb as u64 * 1_000_000).div_ceil(1024) as u32
}

fn settings() -> Settings {
    Settings {
        time_limit: SECOND,
        ns_per_tick: 1000.0,
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
    Output(&'static str),
}

struct Sim {
    printer: Printer,
    /// Per thread: open calls (call, mem at start).
    open: Vec<Vec<(Call, u32)>>,
    events: Vec<(u64, Step)>,
    screen: String,
    log: Vec<String>,
    lost: Vec<bool>,
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
            lost: vec![false; names.len()],
        }
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

    /// One pass of the background thread at `now`: the ended calls were delivered as they happened; now the
    /// snapshot of what runs, then the tick.
    fn pass(&mut self, now: u64) -> Option<u64> {
        let mut out = String::new();
        for t in 0..self.open.len() {
            let calls: Vec<Call> = self.open[t].iter().map(|(c, _)| *c).collect();
            let lost = std::mem::take(&mut self.lost[t]);
            self.printer.running(t, &calls, lost, &mut out);
        }
        let next = self.printer.tick(now, &mut out);
        self.emit(now, &out);
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
                            message,
                            dots,
                        };
                        self.open[thread].push((call, kib(mem_mb)));
                    }
                    Step::End { thread, mem_mb } => {
                        let (call, mem) = self.open[thread].pop().expect("balanced script");
                        let ended = Ended {
                            call,
                            end: now,
                            mem_start_kb: mem,
                            mem_end_kb: kib(mem_mb),
                        };
                        self.printer.ended(thread, ended, &mut out);
                    }
                    Step::Output(text) => {
                        // What `suspend` does: end the open line, write, tell the printer.
                        self.emit(now, &out);
                        out.clear();
                        if self.printer_line_open() {
                            self.emit(now, "\n");
                        }
                        self.emit(now, text);
                        self.printer.other_output();
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
    insta::assert_snapshot!(sim.run(5 * SECOND), @r"
    ---- written at (µs)
    ");
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
    // The printed section's end record is lost (ring overflow): the printer sees it gone from the running
    // snapshot, learns records were lost, and says so instead of printing made-up figures.
    let mut sim = Sim::new(settings(), &[("main", true)]);
    sim.start(0, 0, "Outer", false)
        .start(100, 0, "Solving", true);
    let before = sim.run_to(2_500_000, false);
    // Simulate: "Solving" ended but its record never arrived, and the thread reported dropped records.
    let mut out = String::new();
    sim.printer.running(0, &[sim.open[0][0].0], true, &mut out);
    sim.printer.tick(2_600_000, &mut out);
    let end = Ended {
        call: sim.open[0][0].0,
        end: 2_700_000,
        mem_start_kb: kib(97),
        mem_end_kb: kib(97),
    };
    sim.printer.ended(0, end, &mut out);
    insta::assert_snapshot!(format!("{before}\n---- then\n{out}"));
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
