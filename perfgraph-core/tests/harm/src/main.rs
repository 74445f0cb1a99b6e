//! The program shapes of the differential test (`tests/do_no_harm.rs`), one per first argument. Every
//! section's message holds `pgmark`, which the program itself never prints, so the test can tell
//! perfgraph's lines from the program's. The test runs them with `PERFGRAPH_TIME_LIMIT=0.02`: each shape
//! first shows a live line (`warm_up`), so the capture of the program's output is running, then does what
//! its name says.

use std::io::{BufRead, Write};
use std::time::Duration;

use perfgraph_core::timed;

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

/// Longer than the time limit: live print shows it, so the capture runs from here on.
#[timed(live = "pgmark warming up")]
fn warm_up() {
    sleep_ms(60);
}

/// With perfgraph: waits (at most 10 s) until the capture runs, which the first live line starts: on a
/// machine too busy to run perfgraph's background thread within `warm_up`, the capture starts later, and
/// what the shape does before that (a child started, a partial line) goes straight through, as without
/// perfgraph, where a live line can meet it. The shapes test what comes once the capture runs.
fn wait_for_capture(fd2_before: &str) {
    if cfg!(feature = "perfgraph") {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while fd_target(2) == fd2_before && std::time::Instant::now() < deadline {
            sleep_ms(1);
        }
    }
}

fn fd_target(fd: i32) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// 100,000 `println!` lines (`HARM_LINES` if set; through a pipe each is a write), in a section live print
/// shows meanwhile.
#[timed(live = "pgmark printing lines", dots)]
fn lines() {
    let n: u32 = std::env::var("HARM_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    for i in 0..n {
        println!("line {i} of the program's output");
    }
}

/// A lock the mixed shape takes at each step (perfgraph's, recording its holds).
static STEPS: perfgraph_core::sync::Mutex<u32> =
    perfgraph_core::sync::Mutex::new("pgmark steps", 0);

/// stdout and stderr mixed, with dots coming in between; each step also sets a counter and raises an
/// event, takes a lock of `perfgraph_core::sync`, and the section records an arg: none of them may change
/// what the program shows.
#[timed(live = "pgmark mixing", dots, args(steps = 40))]
fn mixed() {
    for i in 0..40 {
        println!("out {i}");
        eprintln!("err {i}");
        perfgraph_core::counter!("pgmark step", i);
        perfgraph_core::event!("pgmark step done", args(i));
        *STEPS.lock().unwrap() += 1;
        sleep_ms(2);
    }
}

/// `perfgraph_core::sync`'s threads, condvar, channels and barrier, each waiting past the time limit (so
/// live print shows `Waiting for pgmark ...` lines), printing what they pass along.
fn sync_primitives() {
    use perfgraph_core::sync::{self, Barrier, Condvar, Mutex};
    use std::sync::Arc;

    let (tx, rx) = sync::sync_channel("pgmark items", 1);
    let producer = sync::Builder::new()
        .name("producer".into())
        .spawn(move || {
            for i in 0..3 {
                sleep_ms(40);
                tx.send(i).unwrap();
            }
        })
        .unwrap();
    for item in rx.iter() {
        println!("received {item}");
    }
    producer.join().unwrap();
    let pair = Arc::new((Mutex::new("pgmark flag", false), Condvar::new("pgmark ready")));
    let barrier = Arc::new(Barrier::new("pgmark step", 2));
    let (p, b) = (Arc::clone(&pair), Arc::clone(&barrier));
    let notifier = sync::spawn(move || {
        sleep_ms(40);
        *p.0.lock().unwrap() = true;
        p.1.notify_all();
        sleep_ms(40);
        b.wait().is_leader()
    });
    let mut ready = pair.0.lock().unwrap();
    while !*ready {
        ready = pair.1.wait(ready).unwrap();
    }
    drop(ready);
    println!("notified");
    let leaders = u8::from(barrier.wait().is_leader()) + u8::from(notifier.join().unwrap());
    eprintln!("barrier leaders {leaders}");
}

/// A progress bar redrawn with `\r`, as indicatif or any CLI tool draws one, in a dots section.
#[timed(live = "pgmark downloading", dots)]
fn bar() {
    let mut out = std::io::stdout();
    for i in 0..=40 {
        let done = "=".repeat(i / 2);
        let left = " ".repeat(20 - i / 2);
        print!("\r[{done}>{left}] {:3}%", i * 100 / 40);
        out.flush().unwrap();
        sleep_ms(5);
    }
    println!();
    println!("downloaded");
}

/// A prompt left open while live print shows a line, answered from stdin.
#[timed(live = "pgmark asking")]
fn prompt() {
    print!("name? ");
    std::io::stdout().flush().unwrap();
    sleep_ms(60);
    let mut name = String::new();
    std::io::stdin().lock().read_line(&mut name).unwrap();
    println!("hello {}", name.trim());
}

/// A section whose closing line must come before what the program prints after it returns.
#[timed(live = "pgmark step")]
fn step(i: u32) {
    sleep_ms(30);
    println!("inside step {i}");
}

#[timed(live = "pgmark exiting")]
fn exit_inside() {
    println!("about to exit");
    sleep_ms(40);
    std::process::exit(3);
}

#[timed(live = "pgmark panicking")]
fn panic_inside() {
    println!("about to panic");
    sleep_ms(40);
    panic!("deliberate panic");
}

#[timed(live = "pgmark being terminated")]
fn terminated_inside() {
    println!("about to be terminated");
    sleep_ms(40);
    // SAFETY: kill and getpid have no memory-safety preconditions.
    unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    sleep_ms(5000);
    println!("still running");
}

#[timed(live = "pgmark running a child")]
fn child() {
    let status = std::process::Command::new("sh")
        .args([
            "-c",
            "echo child says hi; echo child complains >&2; sleep 0.03; echo child done",
        ])
        .status()
        .unwrap();
    println!("child status {status}");
}

/// A quick section: the runtime starts, no live line.
#[timed]
fn quick() {}

/// Whether fd 2 is a terminal: bars are drawn only there, as CLI tools (and indicatif) do.
fn stderr_is_terminal() -> bool {
    // SAFETY: isatty has no memory-safety preconditions.
    unsafe { libc::isatty(2) == 1 }
}

/// A bar drawn before live print's first line, then redrawn with `\r` in a dots section that live print
/// shows: the capture starts while the bar's line is open on the terminal.
fn bar_first() {
    quick();
    let draw = |i: usize| {
        if stderr_is_terminal() {
            let mut err = std::io::stderr();
            write!(err, "\r[{:<12}] {i}/60", "#".repeat(i / 5)).unwrap();
            err.flush().unwrap();
        }
    };
    for i in 0..5 {
        draw(i);
        sleep_ms(5);
    }
    downloading_under_a_bar(&draw);
    if stderr_is_terminal() {
        eprintln!();
    }
    println!("downloaded");
}

#[timed(live = "pgmark downloading", dots)]
fn downloading_under_a_bar(draw: &dyn Fn(usize)) {
    for i in 5..=60 {
        draw(i);
        sleep_ms(8);
    }
}

/// indicatif's own bar (it draws on a terminal only), started before live print's first line, around a
/// dots section: one bar on the final screen, as without perfgraph.
fn indicatif_bar() {
    quick();
    let bar = indicatif::ProgressBar::new(60);
    for _ in 0..5 {
        bar.inc(1);
        sleep_ms(5);
    }
    indicatif_section(&bar);
    bar.finish();
    println!("downloaded");
}

#[timed(live = "pgmark fetching", dots)]
fn indicatif_section(bar: &indicatif::ProgressBar) {
    for _ in 5..60 {
        bar.inc(1);
        sleep_ms(8);
    }
}

/// A line left unfinished before live print's first line, finished after it.
fn partial_first() {
    quick();
    print!("working... ");
    std::io::stdout().flush().unwrap();
    working();
    println!("done");
}

/// Long enough for live print's first line to come while it runs.
#[timed(live = "pgmark working")]
fn working() {
    sleep_ms(200);
}

fn main() {
    let shape = std::env::args().nth(1).unwrap_or_default();
    // Shapes whose output starts before live print's first line (and so before the capture).
    match shape.as_str() {
        "bar-first" => return bar_first(),
        "indicatif" => return indicatif_bar(),
        "partial-first" => return partial_first(),
        _ => {}
    }
    if shape.ends_with("-sigpipe") {
        // As many CLI tools do: a write to a closed pipe kills the process.
        // SAFETY: setting a signal's disposition to its default has no preconditions.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let fd2 = fd_target(2);
    warm_up();
    wait_for_capture(&fd2);
    match shape.trim_end_matches("-sigpipe") {
        "lines" => lines(),
        "mixed" => mixed(),
        "sync" => sync_primitives(),
        "bar" => bar(),
        "prompt" => prompt(),
        "order" => {
            for i in 0..3 {
                step(i);
                println!("after step {i}");
            }
        }
        "exit" => exit_inside(),
        "panic" => panic_inside(),
        "sigterm" => terminated_inside(),
        "child" => child(),
        "describe" => {
            // What the process-wide machinery did: whether fd 2 was taken over, and whether SIGTERM is caught
            // (not SIGINT: a shell starts background jobs with SIGINT ignored, which perfgraph leaves so).
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let caught = status
                .lines()
                .find_map(|l| l.strip_prefix("SigCgt:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                .unwrap_or(0);
            println!(
                "fd2-taken {} sigterm-caught {}",
                fd_target(2) != fd2,
                caught & (1 << (libc::SIGTERM - 1)) != 0
            );
        }
        "exec" => {
            println!("before exec");
            use std::os::unix::process::CommandExt;
            let err = std::process::Command::new("sh")
                .args(["-c", "echo exec says hi; echo exec complains >&2"])
                .exec();
            panic!("exec failed: {err}");
        }
        other => panic!("unknown shape {other:?}"),
    }
    println!("shape done");
}
