//! The program shapes, each run in every setting (or those that fit it) and compared with its
//! compiled-out build.

use super::*;

#[test]
fn a_hundred_thousand_lines() {
    differential("lines", nothing_more);
}

/// Only where a reader can go away: a program that restored SIGPIPE dies of it, as without perfgraph.
#[test]
fn a_hundred_thousand_lines_with_sigpipe_restored() {
    differential_in(
        "lines-sigpipe",
        &[Setting::Head, Setting::Pipe],
        nothing_more,
    );
}

#[test]
fn stdout_and_stderr_mixed() {
    differential("mixed", nothing_more);
}

/// `perfgraph_core::sync`'s threads, condvar, channels and barrier, waiting past the time limit.
#[test]
fn sync_primitives_that_wait() {
    differential_in("sync", &SHORT_SETTINGS, nothing_more);
}

/// A stand-in OTLP collector on 127.0.0.1 that takes every request (200); returns its port and the count
/// of requests it took.
fn collector() -> (u16, &'static std::sync::atomic::AtomicU64) {
    use std::io::Read;
    static TAKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut got = Vec::new();
                let mut buf = [0u8; 65536];
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                while let Ok(n @ 1..) = stream.read(&mut buf) {
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got);
                    let Some(end) = text.find("\r\n\r\n") else {
                        continue;
                    };
                    let length: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if got.len() >= end + 4 + length {
                        TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                        break;
                    }
                }
            });
        }
    });
    (port, &TAKEN)
}

/// The OTLP export (every call a span, posted every 100 ms and at exit) to a collector that takes it, and
/// to one that is not there: the program's output, order and exit are the same as compiled out.
#[test]
fn an_otlp_export_to_a_collector_and_to_none() {
    let (port, taken) = collector();
    differential_with(
        "mixed",
        &SHORT_SETTINGS,
        &[
            ("PERFGRAPH_OTLP", format!("http://127.0.0.1:{port}")),
            ("PERFGRAPH_OTLP_SPANS", "all".to_owned()),
            ("PERFGRAPH_OTLP_INTERVAL", "0.1".to_owned()),
        ],
        nothing_more,
    );
    assert!(
        taken.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the collector got nothing"
    );
    // A port nobody listens on (bound, then let go).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    differential_with(
        "mixed",
        &SHORT_SETTINGS,
        &[("PERFGRAPH_OTLP", format!("http://127.0.0.1:{closed}"))],
        nothing_more,
    );
}

/// One bar line on the final screen, as without perfgraph (the bar redrawn below perfgraph's lines).
#[test]
fn a_progress_bar_redrawn_with_carriage_returns() {
    differential_in("bar", &SHORT_SETTINGS, |setting, ours| {
        let bars = ours.screen.iter().filter(|r| r.contains("%")).count();
        match setting {
            Setting::Terminal | Setting::Shell if bars != 1 => {
                Err(format!("{bars} bar lines:\n{}", ours.screen.join("\n")))
            }
            _ => Ok(()),
        }
    });
}

/// A bar drawn before live print's first line (so before the capture starts), then redrawn: never glued
/// to perfgraph's line, no frozen copy left above it.
#[test]
fn a_progress_bar_drawn_before_the_first_live_line() {
    differential_in("bar-first", &SHORT_SETTINGS, |setting, ours| {
        one_bar(setting, ours, "/60")
    });
}

/// indicatif's own bar, drawn before live print's first line and as wide as the terminal.
#[test]
fn an_indicatif_bar_drawn_before_the_first_live_line() {
    differential_in("indicatif", &SHORT_SETTINGS, |setting, ours| {
        one_bar(setting, ours, "/60")
    });
}

/// On a terminal, exactly one row shows the bar (its text holds `mark`).
fn one_bar(setting: Setting, ours: &Outcome, mark: &str) -> Result<(), String> {
    let bars = ours.screen.iter().filter(|r| r.contains(mark)).count();
    match setting {
        Setting::Terminal | Setting::Shell if bars != 1 => {
            Err(format!("{bars} bar lines:\n{}", ours.screen.join("\n")))
        }
        _ => Ok(()),
    }
}

/// A line left unfinished in a file before live print's first line: perfgraph's line starts on a new line
/// (the file's last byte tells), never glued to it. (On a terminal and in a pipe what came before the
/// capture cannot be read back: see docs/live-print.md.)
#[test]
fn a_line_left_unfinished_in_a_file_before_the_first_live_line() {
    differential_in("partial-first", &[Setting::File], nothing_more);
}

#[test]
fn a_prompt_that_reads_stdin() {
    differential_in("prompt", &SHORT_SETTINGS, nothing_more);
}

/// A section's closing line comes before what the program prints after the section returned.
#[test]
fn closing_lines_in_program_order() {
    differential_in("order", &SHORT_SETTINGS, |setting, ours| {
        let text = match setting {
            Setting::Terminal | Setting::Shell => ours.screen.join("\n"),
            Setting::Pipe | Setting::File => String::from_utf8_lossy(&ours.out).into_owned(),
            _ => return Ok(()),
        };
        for i in 0..3 {
            let after = text
                .find(&format!("after step {i}"))
                .ok_or_else(|| format!("no `after step {i}`:\n{text}"))?;
            let inside = text.find(&format!("inside step {i}")).unwrap_or(0);
            let closed = text[inside..after]
                .lines()
                .any(|l| l.contains("pgmark step") && l.ends_with(" MB]"));
            if !closed {
                return Err(format!(
                    "step {i}'s closing line after `after step {i}`:\n{text}"
                ));
            }
        }
        Ok(())
    });
}

#[test]
fn process_exit_inside_a_section() {
    differential_in("exit", &SHORT_SETTINGS, nothing_more);
}

#[test]
fn a_panic_inside_a_section() {
    differential_in("panic", &SHORT_SETTINGS, nothing_more);
}

/// Death by a signal: the same status, and the program's output before it (and, with perfgraph, the final
/// lines of the sections it ended) out before a shell's next line.
#[test]
fn terminated_by_sigterm_inside_a_section() {
    differential_in("sigterm", &SHORT_SETTINGS, nothing_more);
}

#[test]
fn a_child_process_that_inherits_the_descriptors() {
    differential_in("child", &SHORT_SETTINGS, nothing_more);
}

/// `exec` after the capture started: the new program's output still goes through the forwarder child,
/// which forwards it until every write end is closed; the test reads a pipe or a terminal to its end, so
/// all of it is there, in order. Not in a file read when the program has exited, nor before a shell's next
/// line: the new program can exit before the child has forwarded its last bytes, and nothing can make it
/// wait (docs/live-print.md, "Limits"). Said on every run of this test.
#[test]
fn exec_after_a_live_line() {
    eprintln!(
        "exec_after_a_live_line: runs in a terminal and a pipe only; after exec the output can reach a file \
         or follow a shell's next line late (a documented limit)"
    );
    differential_in("exec", &[Setting::Terminal, Setting::Pipe], nothing_more);
}

/// A binary that gets perfgraph only through a library depending with `default-features = false,
/// features = ["enabled"]` records and shows live lines, but its descriptors, signals (SIGTERM here) and
/// control socket are left alone; with perfgraph-core's default features (the binary's own choice) both are taken.
#[test]
fn a_library_leaves_descriptors_and_signals_to_the_binary() {
    let b = builds();
    let describe = |program: &Path| {
        let out = run(program, "describe", Setting::Pipe, &[]);
        // The control socket is the binary's choice too (the `listen` feature).
        assert_eq!(
            out.listened,
            program == b.with.as_path(),
            "{}",
            program.display()
        );
        let text = String::from_utf8_lossy(&out.out).into_owned();
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("pgmark warming up"),
            "live print ran:\n{text}"
        );
        let line = text
            .lines()
            .find_map(|l| l.find("fd2-taken ").map(|at| l[at..].to_owned()))
            .unwrap_or_else(|| panic!("{text}"));
        line.split(' ').map(str::to_owned).collect::<Vec<_>>()
    };
    // fd2-taken <bool> sigterm-caught <bool>
    assert_eq!(
        describe(&b.library),
        ["fd2-taken", "false", "sigterm-caught", "false"]
    );
    assert_eq!(
        describe(&b.with),
        ["fd2-taken", "true", "sigterm-caught", "true"]
    );
}

/// The long form: 200 runs of every shape in every setting.
#[test]
#[ignore]
fn long_form() {
    // SAFETY: set before any thread of this test reads it; the other tests of this binary are not run with
    // `--ignored` alone.
    unsafe { std::env::set_var("DO_NO_HARM_RUNS", "200") };
    for shape in [
        "lines",
        "lines-sigpipe",
        "mixed",
        "sync",
        "bar",
        "bar-first",
        "indicatif",
        "partial-first",
        "prompt",
        "order",
        "exit",
        "panic",
        "sigterm",
        "child",
        "exec",
    ] {
        let settings: &[Setting] = match shape {
            "lines" | "mixed" => &SETTINGS,
            "lines-sigpipe" => &[Setting::Head, Setting::Pipe],
            "exec" => &[Setting::Terminal, Setting::Pipe],
            "partial-first" => &[Setting::File],
            _ => &SHORT_SETTINGS,
        };
        differential_in(shape, settings, nothing_more);
    }
}

/// Causal profiling on (`PERFGRAPH_CAUSAL`, experiments of 50 ms at 0 to 100%): the program's threads sleep
/// the delays the experiments insert, and wake one another through `sync`, and nothing else changes: its
/// output, order and exit are the same as compiled out. The profiles are written. (The `mixed` shape at
/// full size only: the `sync` shape is the one whose threads wait for one another.)
#[test]
fn causal_profiling_on() {
    let dir = temp_dir("causal");
    let profile = dir.to_path_buf().join("causal-{pid}.coz");
    let env = [
        ("PERFGRAPH_CAUSAL", profile.display().to_string()),
        ("PERFGRAPH_CAUSAL_EXPERIMENT", "0.05".to_owned()),
    ];
    differential_with("sync", &SHORT_SETTINGS, &env, nothing_more);
    if common::full() {
        differential_with("mixed", &SHORT_SETTINGS, &env, nothing_more);
    }
    let written = common::names(&dir);
    assert!(!written.is_empty(), "no profile written");
    for name in written {
        let text = std::fs::read_to_string(dir.to_path_buf().join(&name)).unwrap();
        assert!(text.starts_with("startup\t"), "{name}: {text}");
        assert!(text.contains("\nruntime\t"), "{name}: {text}");
    }
}
