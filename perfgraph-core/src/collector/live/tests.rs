//! Golden transcripts of the live printer, driven by a fake clock in microseconds (1 tick = 1 µs here).
//! Nothing sleeps: the simulation jumps from one due time to the next, exactly as the background thread
//! would wake.
//!
//! Each transcript shows the screen as the user sees it, then when each piece of it was written
//! (`+<µs>`), which pins the timing rules (a message when its section crosses the limit, a dot per interval,
//! stats at once when a printed section ends).

mod sim;

use super::printer::{Call, Ended, Printer, Settings};
use sim::{SECOND, Sim, Step, kib, settings};

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
