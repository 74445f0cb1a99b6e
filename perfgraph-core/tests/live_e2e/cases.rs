//! The tests, each run by the harness in `main` against a child of this binary.

use super::*;

pub(crate) fn moose_nested_sections_line_by_line() {
    let r = run(&mut command("moose"));
    assert!(r.success && r.stdout == "child done\n", "{}", r.stdout);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert_eq!(l.len(), 5, "{}", ctx());
    assert_eq!(l[0], "Executing", "{}", ctx());
    assert_eq!(l[1], "  Testing Slowness", "{}", ctx());
    // 0.9 s at 0.2 s a dot from 0.4 s: three dots (one fewer or more if a wake-up is late at the end).
    let (head, s, _) = stats(l[2]);
    assert!(
        dotted(head, "    Testing Nested Slowness", 2, 4),
        "{}",
        ctx()
    );
    assert!((0.85..2.0).contains(&s), "{}", ctx());
    // Back in the outer section after the inner one printed: Still, at its next dot, then dots.
    let (head, s, _) = stats(l[3]);
    assert!(dotted(head, "  Still Testing Slowness", 1, 4), "{}", ctx());
    assert!((1.65..3.0).contains(&s), "{}", ctx());
    let (head, s, _) = stats(l[4]);
    assert_eq!(head, "Finished Executing", "{}", ctx());
    assert!((1.7..3.0).contains(&s), "{}", ctx());
    assert!(!r.stderr.contains('\x1b'), "no colour in a pipe");
}

pub(crate) fn live_messages_name_their_args() {
    let r = run(&mut command("args"));
    assert!(r.success && r.stdout == "child done\n", "{}", r.stdout);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert!(
        l.iter()
            .any(|l| l.starts_with("Refining level 3 of mesh-A")),
        "{}",
        ctx()
    );
    assert!(
        l.iter()
            .any(|l| l.contains("Fetching https://example.org/data")),
        "{}",
        ctx()
    );
    assert!(!r.stderr.contains('{'), "no placeholder left: {}", ctx());
}

pub(crate) fn a_thread_blocked_on_a_lock_says_what_it_waits_for_and_who_holds_it() {
    let r = run(&mut command("lock"));
    assert!(r.success && r.stdout == "child done\n", "{}", r.stdout);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert!(
        l.iter()
            .any(|l| l.starts_with("worker: Waiting for queue (held by main).")),
        "{}",
        ctx()
    );
    let last = l
        .iter()
        .rfind(|l| l.starts_with("worker: "))
        .unwrap_or_else(|| panic!("{}", ctx()));
    let (head, s, _) = stats(last);
    assert!(
        head.contains("Waiting for queue (held by main)"),
        "{}",
        ctx()
    );
    assert!((0.6..5.0).contains(&s), "{}", ctx());
}

pub(crate) fn threads_have_their_name_as_prefix() {
    let r = run(&mut command("threads"));
    assert!(r.success);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert_eq!(l.len(), 2, "{}", ctx());
    let (head, s, _) = stats(l[0]);
    assert!(dotted(head, "worker: Worker job", 0, 2), "{}", ctx());
    assert!((0.45..2.0).contains(&s), "{}", ctx());
    let (head, _, _) = stats(l[1]);
    let n = head
        .strip_prefix("unnamed-")
        .and_then(|h| h.strip_suffix(": Unnamed job"))
        .unwrap_or_else(|| panic!("{}", ctx()));
    // An unnamed thread shows its OS thread id.
    assert!(n.parse::<u64>().is_ok(), "{}", ctx());
}

pub(crate) fn program_output_gives_currently_and_still() {
    let r = run(&mut command("output"));
    assert!(r.success);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert_eq!(l.len(), 6, "{}", ctx());
    // MOOSE's test: output before the section printed makes its first line say `Currently`.
    assert_eq!(
        l[0],
        "Timed section just started, printing something though",
        "{}",
        ctx()
    );
    assert_eq!(stats(l[1]).0, "Currently Executing", "{}", ctx());
    // Printed at 0.2 s, the log line at 0.3 s ends its line; at its next dot it says `Still`.
    assert_eq!(l[2], "Solving", "{}", ctx());
    assert_eq!(l[3], "log line", "{}", ctx());
    let (head, s, _) = stats(l[4]);
    assert!(dotted(head, "Still Solving", 0, 3), "{}", ctx());
    assert!((0.65..2.0).contains(&s), "{}", ctx());
    assert_eq!(l[5], "program output", "{}", ctx());
}

pub(crate) fn a_memory_jump_prints_finished_even_when_quick() {
    // A time limit far above the section's time (allocating is slow in a debug build).
    let r = run(command("memory")
        .env("PERFGRAPH_MEM_LIMIT", "20")
        .env("PERFGRAPH_TIME_LIMIT", "5"));
    assert!(r.success);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert_eq!(l.len(), 1, "{}", ctx());
    let (head, s, mb) = stats(l[0]);
    assert_eq!(head, "Finished Allocating", "{}", ctx());
    assert!(s < 5.0, "quicker than the time limit: {}", ctx());
    assert!(mb >= 60, "resident memory at its end: {}", ctx());
}

pub(crate) fn exit_prints_final_lines_and_does_not_wait() {
    // `process::exit` inside a printed section, while another thread sleeps inside a printed section.
    let r = run(&mut command("exit"));
    assert!(r.success && r.stdout == "exiting\n", "{}", r.stdout);
    let ctx = || format!("stderr:\n{}", r.stderr);
    let l = lines(&r.stderr);
    let main = l
        .iter()
        .filter(|l| l.contains("Main work") && l.len() > COLUMN)
        .count();
    let sleeper = l
        .iter()
        .filter(|l| {
            l.starts_with("sleeper: ") && l.contains("Sleeping forever") && l.len() > COLUMN
        })
        .count();
    assert_eq!((main, sleeper), (1, 1), "final stats of both: {}", ctx());
    for line in l.iter().filter(|l| l.len() > COLUMN) {
        stats(line);
    }
    assert!(r.took < Duration::from_secs(5), "exit took {:?}", r.took);
}

pub(crate) fn a_bad_setting_warns_once_and_live_print_goes_on() {
    let r = run(command("threads")
        .env("PERFGRAPH_LIVE", "maybe")
        .env("PERFGRAPH_MEM_LIMIT", "lots"));
    assert!(r.success);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    assert_eq!(l.len(), 4, "{}", ctx());
    assert_eq!(
        l[0],
        "perfgraph: warning: PERFGRAPH_MEM_LIMIT=\"lots\" is not valid (accepted: a whole number of MB >= 1, e.g. 100); using the default, 100",
        "{}",
        ctx()
    );
    assert_eq!(
        l[1],
        "perfgraph: warning: PERFGRAPH_LIVE=\"maybe\" is not valid (accepted: on, off, all); using the default, on",
        "{}",
        ctx()
    );
    assert!(l[2].starts_with("worker: Worker job"), "{}", ctx());
}

pub(crate) fn a_panic_ends_the_live_line_and_labels_the_section() {
    let r = run(command("panic").env("RUST_BACKTRACE", "0"));
    assert!(!r.success);
    let l = lines(&r.stderr);
    let ctx = || format!("stderr:\n{}", r.stderr);
    let message = l
        .iter()
        .position(|l| l.starts_with("thread 'main'") && l.contains("panicked at"))
        .unwrap_or_else(|| panic!("the panic message starts its own line: {}", ctx()));
    // The live line was ended before it (std's hook may add a blank line of its own).
    let before = l[..message].iter().rev().find(|l| !l.is_empty()).unwrap();
    assert!(before.starts_with("Loading data"), "{}", ctx());
    assert!(!before.contains("panicked"), "{}", ctx());
    let finished = l
        .iter()
        .find(|l| l.starts_with("Finished Loading data (panicked) "))
        .unwrap_or_else(|| panic!("a labelled Finished line: {}", ctx()));
    stats(finished);
    // No stats line without a label (only padding before the figures).
    assert!(
        !l.iter().any(|l| l.trim_start().starts_with('[')),
        "{}",
        ctx()
    );
}

pub(crate) fn live_off_prints_nothing() {
    let r = run(command("moose").env("PERFGRAPH_LIVE", "off"));
    assert!(r.success);
    assert_eq!(r.stderr, "");
}

pub(crate) fn stderr_closed_never_hurts_the_program() {
    // Closed by the child itself: closed before exec, Rust's start-up code would reopen it on /dev/null.
    let mut cmd = command("moose");
    cmd.env("LIVE_CLOSE_STDERR", "1");
    let r = run(&mut cmd);
    assert!(r.success);
    assert_eq!(r.stdout, "child done\n");
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
}

pub(crate) fn stderr_a_broken_pipe_never_hurts_the_program() {
    // The reader is gone before the child writes: every write to stderr fails with EPIPE.
    let mut cmd = command("moose");
    let start = Instant::now();
    let mut process = cmd.spawn().unwrap();
    drop(process.stderr.take());
    let mut stdout = String::new();
    process
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = common::wait_or_kill(&mut process, start, HANG);
    assert!(status.success());
    assert_eq!(stdout, "child done\n");
    assert!(start.elapsed() < Duration::from_secs(5));
}

pub(crate) fn stderr_a_pipe_nobody_reads_never_stalls() {
    let mut cmd = command("flood");
    cmd.env("PERFGRAPH_LIVE", "all");
    let start = Instant::now();
    let mut process = cmd.spawn().unwrap();
    // stderr is never read while the child runs: its pipe fills up.
    let _stderr = process.stderr.take();
    let mut stdout = String::new();
    process
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = common::wait_or_kill(&mut process, start, HANG);
    assert!(status.success());
    assert_eq!(stdout, "child done\n");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
}
