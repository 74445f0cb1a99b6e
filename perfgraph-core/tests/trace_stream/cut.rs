//! Traces cut short: a run killed mid-write, a previous trace replaced, a full disk, and calls made
//! during the exit.

use super::*;
use common::names;

/// Starts the endless child tracing to `path`.
fn start_endless(path: &Path, compress: &str) -> std::process::Child {
    let env = [
        ("PERFGRAPH_TRACE", path.to_str().unwrap()),
        ("PERFGRAPH_TRACE_COMPRESS", compress),
    ];
    child("endless", &env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Kills `process` (our child, still running) with SIGKILL and reaps it.
fn sigkill(mut process: std::process::Child) {
    // SAFETY: `kill` with the pid of our own child, which has not been reaped (it cannot exit by itself).
    assert_eq!(unsafe { libc::kill(process.id() as i32, libc::SIGKILL) }, 0);
    let status = process.wait().unwrap();
    assert!(!status.success());
}

/// Runs the endless child writing `name` in a fresh directory until its unfinished trace, under that name,
/// holds `bytes`, kills it with SIGKILL, and returns the directory and the trace's path. The trace is the
/// only file left there: no temporary one.
fn killed_run(tag: &str, name: &str, bytes: u64, compress: &str) -> (common::Scratch, PathBuf) {
    let dir = fresh_dir(tag);
    let path = dir.join(name);
    let mut process = start_endless(&path, compress);
    let start = Instant::now();
    while !std::fs::metadata(&path).is_ok_and(|m| m.len() >= bytes) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the trace did not grow under its name while the program ran: {:?}",
            names(&dir)
        );
        assert!(process.try_wait().unwrap().is_none(), "the child ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    sigkill(process);
    assert_eq!(names(&dir), [name], "a temporary file is left");
    (dir, path)
}

#[test]
fn a_previous_trace_is_replaced_in_one_step_by_one_that_starts_with_its_header() {
    for (name, compress) in [("trace.json", "auto"), ("run.pftrace", "off")] {
        let dir = fresh_dir("replace");
        let path = dir.join(name);
        let old = b"the previous run's whole trace".to_vec();
        std::fs::write(&path, &old).unwrap();
        let process = start_endless(&path, compress);
        // Read the name over and over while the run starts: there is always a file there, the old one until
        // the new one takes its place, and the new one has its header from the first moment.
        let start = Instant::now();
        let new = loop {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{name}: no file at the name while the run started: {e}")
            });
            if bytes != old {
                break bytes;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{name}: the old file was never replaced"
            );
            std::thread::sleep(Duration::from_micros(200));
        };
        if name.ends_with(".json") {
            // `[`, then the header's whole lines: the process's name and its sort index.
            assert!(
                new.starts_with(b"[\n"),
                "{name}: {:?}",
                String::from_utf8_lossy(&new)
            );
            let text = String::from_utf8_lossy(&new);
            let header: Vec<Value> = text[2..]
                .lines()
                .take(2)
                .map(|l| serde_json::from_str(l.trim_end_matches(',')).unwrap())
                .collect();
            assert_eq!(header[0]["name"], "process_name", "{text}");
            assert_eq!(header[0]["args"]["tool"], "perfgraph", "{text}");
            assert_eq!(header[1]["name"], "process_sort_index", "{text}");
        } else {
            // Whole packets, the first of them the header's.
            let (packets, _) = whole_packets(&new, true);
            assert!(packets >= 1, "{name}: {new:?}");
        }
        sigkill(process);
        assert_eq!(names(&dir), [name], "a temporary file is left");
    }
}

/// Kills this many runs of each format, at different sizes: 6 at full size (`TESTS_FULL=1`), 3 by default
/// (still each of the Perfetto trace's three compression settings).
fn kills() -> u64 {
    if common::full() { 6 } else { 3 }
}

/// The unfinished Chrome trace `text` as viewers read it: every line a whole event and its comma, or
/// padding (blank); the last line may be padding cut short, never part of an event.
fn whole_lines(text: &str) -> Vec<Value> {
    assert!(text.starts_with("[\n"));
    let mut events = Vec::new();
    for (i, line) in text[2..].split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some(event) = line.strip_suffix(',') else {
            panic!("line {} is not a whole event: {line:?}", i + 2);
        };
        events.push(
            serde_json::from_str(event).unwrap_or_else(|e| panic!("line {}: {e}: {line}", i + 2)),
        );
    }
    events
}

#[test]
fn a_chrome_trace_cut_by_sigkill_is_an_array_without_its_bracket() {
    for kill in 0..kills() {
        let (_dir, path) = killed_run("kill-json", "trace.json", 300_000 + kill * 350_000, "auto");
        let text = std::fs::read_to_string(&path).unwrap();
        // Whole lines only, wherever the kill landed (in a write the kernel stops only at a page
        // boundary, and no event crosses one).
        let events = whole_lines(&text);
        pages_hold_whole_lines(&text);
        assert!(events.iter().filter(|e| e["name"] == "leaf").count() > 1000);
        assert!(events.iter().all(|e| e["name"] != "perfgraph trace end"));
        assert!(
            events
                .iter()
                .any(|e| e["name"] == "thread_name" && e["args"]["name"] == "child_entry")
        );
        // As viewers read it: the trailing comma dropped, the bracket added.
        let array = format!("{}]", text.trim_end().trim_end_matches(','));
        let parsed: Vec<Value> = serde_json::from_str(&array).unwrap();
        assert_eq!(parsed.len(), events.len());
    }
}

#[test]
fn a_perfetto_trace_cut_by_sigkill_holds_whole_packets() {
    for kill in 0..kills() {
        // Raw packets, deflated bundles, and the two mixed as the budget allows.
        let compress = ["off", "on", "auto"][kill as usize % 3];
        let (_dir, path) = killed_run(
            "kill-pftrace",
            "run.pftrace",
            100_000 + kill * 150_000,
            compress,
        );
        let bytes = std::fs::read(&path).unwrap();
        // Whole packets to the last byte, wherever the kill landed.
        let (_, whole) = whole_packets(&bytes, false);
        assert_eq!(whole, bytes.len());
        pages_hold_whole_packets(&bytes);
        if let Some(t) = decode_with_perfetto(&path, true) {
            assert!(t["names"]["leaf"].as_u64().unwrap() > 1000, "{t}");
            assert!(t["end"].is_null());
        }
    }
}

#[test]
fn a_full_disk_is_one_warning_line_and_the_run_goes_on() {
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    let out = child("workload", &[("PERFGRAPH_TRACE", "/dev/full")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("perfgraph: warning: the disk is full"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].starts_with(
            "perfgraph: warning: the disk is full: the PERFGRAPH_TRACE file \"/dev/full\" stops at "
        ) && warnings[0].ends_with(" bytes; later calls are counted, not written"),
        "{stderr}"
    );
    // The lines that follow it: the trace could not be finished either.
    assert!(
        stderr.contains(
            "perfgraph: error: cannot write PERFGRAPH_TRACE file \"/dev/full\": No space left on device"
        ),
        "{stderr}"
    );
}

/// A small tmpfs mounted for one test (a disk that fills), unmounted and removed when dropped.
struct Tmpfs {
    dir: common::Scratch,
}

impl Tmpfs {
    /// A tmpfs of `kib` KiB at a fresh directory; `None`, said visibly, where it cannot be mounted (not
    /// root, no `mount`, a container without the capability).
    fn mount(tag: &str, kib: u64) -> Option<Tmpfs> {
        let dir = fresh_dir(tag);
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={kib}k,mode=0755"),
                "tmpfs",
            ])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            other => {
                use std::io::Write;
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                };
                // To the process's stderr itself: the test harness does not capture it.
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "{tag}: DID NOT RUN: cannot mount a small tmpfs to fill ({why}); it needs root"
                );
                None
            }
        }
    }

    /// Fills what is left of it with a file named `filler`.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        // Whatever partial block went in, the disk is full now.
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// A disk with no room even for the trace's header: no trace file, one line that says so, and the previous
/// trace at that name left as it was; nothing else left in the directory. Both formats.
#[test]
fn a_disk_too_full_for_the_header_leaves_the_previous_trace_and_no_file() {
    for name in ["run.json", "run.pftrace"] {
        let Some(disk) = Tmpfs::mount(&format!("full-header-{name}"), 64) else {
            return;
        };
        let path = disk.dir.join(name);
        std::fs::write(&path, b"the previous run's trace").unwrap();
        disk.fill();
        let out = child("workload", &[("PERFGRAPH_TRACE", path.to_str().unwrap())])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("perfgraph"))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].starts_with(&format!(
                "perfgraph: error: cannot write PERFGRAPH_TRACE file {:?}: No space left on device",
                path.display().to_string()
            )) && lines[0].contains("not even the trace's header fits"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"the previous run's trace",
            "{name}"
        );
        assert_eq!(names(&disk.dir), ["filler", name], "{name}");
    }
}

/// A disk that fills during the run: one warning line, and the file under its name is a valid trace up to
/// what it holds (Chrome: the array from its `[`, whole events; Perfetto: whole packets, the tracks
/// described before their events), with no temporary file beside it. Both formats.
#[test]
fn a_disk_that_fills_mid_run_leaves_a_valid_trace() {
    // The workload's trace takes about 110 KB in Chrome JSON, 30 KB in raw packets.
    for (name, kib) in [("run.json", 48), ("run.pftrace", 16)] {
        let Some(disk) = Tmpfs::mount(&format!("full-mid-{name}"), kib) else {
            return;
        };
        let path = disk.dir.join(name);
        let out = child(
            "workload",
            &[
                ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                ("PERFGRAPH_TRACE_COMPRESS", "off"),
                ("PERFGRAPH_VERBOSITY", "3"),
            ],
        )
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("perfgraph: warning: the disk is full"),
            "the workload's trace must not fit in the tmpfs: {stderr}"
        );
        assert_eq!(names(&disk.dir), [name], "{name}: {stderr}");
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".json") {
            let text = String::from_utf8(bytes).unwrap();
            let events = match text.trim_end().strip_suffix(']') {
                // The closing event went in after all.
                Some(_) => serde_json::from_str::<Vec<Value>>(&text).unwrap(),
                None => whole_lines(&text),
            };
            assert_eq!(
                events[0]["name"], "process_name",
                "{name}: the header first"
            );
            assert!(events.len() > 10, "{name}: {} events", events.len());
        } else {
            let (packets, _) = whole_packets(&bytes, true);
            assert!(packets > 10, "{name}: {packets} packets");
            if let Some(t) = decode_with_perfetto(&path, true) {
                assert!(t["calls"].as_u64().unwrap() > 0, "{t}");
            }
        }
    }
}

/// A thread still recording while the program exits (a worker `main` did not join): every call of it that
/// ended before the trace's end is in the trace or in the loss its closing event states for that thread,
/// in both formats. On the manual clock the spinner knows when its last call ended; a run where that is
/// before the trace's end must account for every call it made. (A run where the exit was quicker than the
/// spinner's last calls proves nothing, and is tried again.)
#[test]
fn calls_made_during_the_exit_are_in_the_trace_or_counted() {
    for name in ["run.json", "run.pftrace"] {
        let mut conclusive = 0;
        for attempt in 0..20 {
            // Tails of many lengths: some end before the trace does, some after.
            let tail = (1_000u64 << (2 * (attempt % 5))).to_string();
            let dir = fresh_dir(&format!("through-exit-{name}-{attempt}"));
            let path = dir.join(name);
            let total_file = dir.join("total");
            let out = child(
                "through_exit",
                &[
                    ("PERFGRAPH_TRACE", path.to_str().unwrap()),
                    ("THROUGH_EXIT_TOTAL", total_file.to_str().unwrap()),
                    ("PERFGRAPH_TRACE_COMPRESS", "off"),
                    ("PERFGRAPH_REPORT", "all"),
                    ("THROUGH_EXIT_TAIL", &tail),
                ],
            )
            .output()
            .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{stderr}");
            // (spin calls in the trace, the spinner's stated loss, the trace's end in ns)
            let (spins, lost, end_ns) = if name.ends_with(".json") {
                let text = std::fs::read_to_string(&path).unwrap();
                let events: Vec<Value> = serde_json::from_str(&text).unwrap();
                let spins = events
                    .iter()
                    .filter(|e| e["name"] == "spin" && e["ph"] == "X")
                    .count();
                let end = events.last().unwrap();
                assert_eq!(end["name"], "perfgraph trace end", "{name}");
                let lost = end["args"]["dropped_ring_overflow_per_thread"]["spinner"]
                    .as_u64()
                    .unwrap_or(0);
                let end_ns = (end["ts"].as_f64().unwrap() * 1000.0).round() as u64;
                (spins as u64, lost, end_ns)
            } else {
                let Some(t) = decode_with_perfetto(&path, false) else {
                    return;
                };
                let lost = t["end"]["dropped_ring_overflow.spinner"]
                    .as_u64()
                    .unwrap_or(0);
                let end_ns = t["end"]["ts_ns"].as_u64();
                let Some(end_ns) = end_ns else {
                    panic!("{name}: the closing event has no end_ns: {t}");
                };
                (t["names"]["spin"].as_u64().unwrap_or(0), lost, end_ns)
            };
            let Ok(written) = std::fs::read_to_string(&total_file) else {
                // The process was gone before the spinner finished: nothing to compare.
                continue;
            };
            let (total, done_ns) = written.split_once(' ').unwrap();
            let (total, done_ns): (u64, u64) = (total.parse().unwrap(), done_ns.parse().unwrap());
            if done_ns <= end_ns {
                assert_eq!(
                    spins + lost,
                    total,
                    "{name}: {spins} spin calls in the trace and {lost} stated lost, of {total} made \
                     before the trace's end ({done_ns} <= {end_ns} ns)"
                );
                conclusive += 1;
            }
            if conclusive >= 2 {
                break;
            }
        }
        assert!(
            conclusive > 0,
            "{name}: in 20 runs the spinner never finished before the trace's end"
        );
    }
}
