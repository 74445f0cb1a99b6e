//! `perfgraph top <pid>` on a pseudo-terminal, its screen rendered by a terminal emulator (`vt100`), as
//! `tests/top.rs` runs it: the call graph, heaviest sections and threads panes read back, each figure
//! against the truth (calls exactly, times within the tolerance plus their printed resolution).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::Reaped;
use crate::common::truth::{PATIENCE, Truth, Worst, histogram_ns};
use crate::held::{CLI, Held, wait};
use crate::model::{self, Expected, printed_ns};

const ROWS: u16 = 40;
const COLS: u16 = 120;

/// A pseudo-terminal of `COLS` x `ROWS`: (master, slave), both close-on-exec.
fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: the pointers are to live locals; openpty writes the two descriptors and reads `size`.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // SAFETY: fcntl on the descriptors openpty just gave us.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: openpty gave us these two descriptors; nothing else owns them.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// `top` running on the pseudo-terminal, its screen kept up to date by a thread reading the master.
struct Top {
    child: Reaped,
    parser: Arc<Mutex<vt100::Parser>>,
    master: std::fs::File,
}

impl Top {
    fn start(held: &Held) -> Top {
        let (master, slave) = open_pty();
        let slave = std::fs::File::from(slave);
        let child = Command::new(CLI)
            .args(["top", &held.pid_arg(), "--interval", "0.2"])
            .env("XDG_RUNTIME_DIR", &held.dir)
            .env("TERM", "xterm-256color")
            .env("NO_COLOR", "1")
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave)
            .spawn()
            .unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            std::num::NonZeroU16::new(ROWS).unwrap(),
            std::num::NonZeroU16::new(COLS).unwrap(),
            0,
        )));
        let reader = std::fs::File::from(master);
        let writer = reader.try_clone().unwrap();
        let feed = Arc::clone(&parser);
        std::thread::spawn(move || {
            let mut reader = reader;
            let mut buf = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buf[..n]);
            }
        });
        Top {
            child: Reaped(child),
            parser,
            master: writer,
        }
    }

    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Pane `key` (pressed again every 2 s until it shows: a key typed before `top` took the terminal
    /// may be lost), whose header line starts with `labels[0]` and holds `labels[1..]`, read as a table once
    /// it has a row for each of `rows` and the cells read (`cols` of those rows; the others, such as the
    /// run's time, move at every refresh) are the same in two screens 300 ms apart: a refresh (every
    /// 0.2 s) came between them, and neither was a frame half written.
    fn pane(
        &mut self,
        key: &str,
        labels: &[&str],
        rows: &[&str],
        cols: &[usize],
    ) -> Vec<Vec<String>> {
        let start = Instant::now();
        let mut pressed: Option<Instant> = None;
        let mut last = None;
        loop {
            let text = self.text();
            let header = text
                .lines()
                .find(|l| l.starts_with(labels[0]) && labels.iter().all(|h| l.contains(h)));
            if header.is_none() && pressed.is_none_or(|p| p.elapsed() > Duration::from_secs(2)) {
                self.press(key);
                pressed = Some(Instant::now());
            }
            let read = header.and_then(|_| {
                let table = table(&text, labels);
                let picked: Option<Vec<Vec<String>>> = rows
                    .iter()
                    .map(|name| {
                        let r = table.iter().find(|r| r[0].trim() == *name)?;
                        Some(cols.iter().map(|&c| r[c].trim().to_owned()).collect())
                    })
                    .collect();
                picked.map(|p| (p, table))
            });
            if let Some((picked, table)) = read {
                if last.as_ref() == Some(&picked) {
                    return table;
                }
                last = Some(picked);
            }
            assert!(
                start.elapsed() < PATIENCE,
                "top never showed {labels:?} with {rows:?}:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn press(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }
}

/// The table under the header line starting with `labels[0]`: each row's cells by the header's columns
/// (the cells are left-aligned under their header's label).
fn table(text: &str, labels: &[&str]) -> Vec<Vec<String>> {
    let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let at = lines
        .iter()
        .position(|l| {
            let l: String = l.iter().collect();
            l.starts_with(labels[0]) && labels.iter().all(|h| l.contains(h))
        })
        .unwrap();
    let header: String = lines[at].iter().collect();
    let mut starts = Vec::new();
    let mut from = 0;
    for label in labels {
        let byte = header[from..].find(label).unwrap() + from;
        starts.push(header[..byte].chars().count());
        from = byte + label.len();
    }
    let mut rows = Vec::new();
    for line in &lines[at + 1..] {
        let s: String = line.iter().collect();
        if s.trim().is_empty() || s.starts_with("q quit") {
            break;
        }
        let cell = |i: usize| -> String {
            let a = starts[i].min(line.len());
            let b = starts.get(i + 1).map_or(line.len(), |&b| b.min(line.len()));
            line[a..b].iter().collect::<String>()
        };
        rows.push((0..starts.len()).map(cell).collect());
    }
    rows
}

fn count(cell: &str) -> u64 {
    let first = cell.split_whitespace().next().unwrap_or("");
    first
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {cell:?}"))
}

/// `top` on the held program (before any phase): its three panes of figures against the truth. Returns
/// the call graph's rows.
pub fn check(w: &mut Worst, out: &str, held: &Held, truth: &Truth) -> Vec<Vec<String>> {
    let expected = model::expected(truth);
    let mut top = Top::start(held);
    let names: Vec<&str> = expected.iter().map(|e| e.name).collect();

    // 2: the call graph, a row per path (each name on one path here).
    let labels = ["Section", "Calls", "Running", "Self(s)", "Total(s)", "%"];
    let graph = top.pane("2", &labels, &names, &[1, 3, 4]);
    graph_figures(w, out, &graph, truth, &expected);

    // 3: heaviest sections, with each one's percentiles and longest call.
    let labels = [
        "Section", "Calls", "Self(s)", "Total(s)", "p50", "p90", "p99", "Max",
    ];
    let sections = top.pane("3", &labels, &names, &[1, 2, 3, 4, 5, 6, 7]);
    section_figures(w, out, &sections, truth, &expected);

    // 4: the threads, their calls and time in sections.
    let labels = [
        "Thread", "Alive(s)", "Busy(s)", "Busy %", "CPU(s)", "CPU %", "Calls",
    ];
    let threads = top.pane("4", &labels, &["main", "locker-a", "locker-b"], &[2, 6]);
    thread_figures(w, out, &threads, truth);

    top.press("q");
    let status = wait(&mut top.child, "perfgraph top");
    assert!(status.success(), "top: {status:?}\n{}", top.text());
    graph
}

/// The row of `rows` whose first cell is `name`.
fn row(rows: &[Vec<String>], name: &str) -> Option<Vec<String>> {
    rows.iter().find(|r| r[0].trim() == name).cloned()
}

/// The call graph pane's rows against the truth: depth, calls and running exact, total and self time.
fn graph_figures(
    w: &mut Worst,
    out: &str,
    graph: &[Vec<String>],
    truth: &Truth,
    expected: &[Expected],
) {
    for e in expected {
        let Some(r) = row(graph, e.name) else {
            w.exact(out, &format!("graph {} present", e.name), false, true);
            continue;
        };
        let depth = (r[0].len() - r[0].trim_start().len()) / 2;
        w.exact(
            out,
            &format!("graph {} depth", e.name),
            depth,
            e.path.split('/').count(),
        );
        w.exact(
            out,
            &format!("graph {} calls", e.name),
            count(&r[1]),
            e.calls,
        );
        w.exact(out, &format!("graph {} running", e.name), r[2].trim(), "");
        if e.name != "truth_future" {
            let (got, res) = printed_ns(&r[4]);
            w.time(out, &format!("graph {} total", e.name), got, e.total, res);
            if let Some(s) = e.self_time {
                let (got, res) = printed_ns(&r[3]);
                w.time(out, &format!("graph {} self", e.name), got, s, res);
            }
        }
    }
    let ticks = model::ticks(truth)[0].1;
    w.exact(
        out,
        "graph tick calls",
        row(graph, "tick").map(|r| count(&r[1])),
        Some(ticks),
    );
}

/// The heaviest sections pane's rows against the truth: calls exact, total and self time, percentiles and
/// longest call.
fn section_figures(
    w: &mut Worst,
    out: &str,
    sections: &[Vec<String>],
    truth: &Truth,
    expected: &[Expected],
) {
    let ticks = model::ticks(truth)[0].1;
    for e in expected {
        let Some(r) = row(sections, e.name) else {
            w.exact(out, &format!("sections {} present", e.name), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("sections {} calls", e.name),
            count(&r[1]),
            e.calls,
        );
        if e.name != "truth_future" {
            let (got, res) = printed_ns(&r[3]);
            w.time(
                out,
                &format!("sections {} total", e.name),
                got,
                e.total,
                res,
            );
            if let Some(s) = e.self_time {
                let (got, res) = printed_ns(&r[2]);
                w.time(out, &format!("sections {} self", e.name), got, s, res);
            }
        }
        for (i, what, p) in [
            (4, "p50", 50.0),
            (5, "p90", 90.0),
            (6, "p99", 99.0),
            (7, "max", 100.0),
        ] {
            let (got, res) = printed_ns(&r[i]);
            let exact = e.percentile(p);
            let res = res + histogram_ns(p, exact);
            w.time(out, &format!("sections {} {what}", e.name), got, exact, res);
        }
    }
    w.exact(
        out,
        "sections tick calls",
        row(sections, "tick").map(|r| count(&r[1])),
        Some(ticks),
    );
}

/// The threads pane's rows against the truth: calls exact, time in sections.
fn thread_figures(w: &mut Worst, out: &str, threads: &[Vec<String>], truth: &Truth) {
    for thread in ["main", "locker-a", "locker-b"] {
        let Some(r) = row(threads, thread) else {
            w.exact(out, &format!("threads {thread} present"), false, true);
            continue;
        };
        w.exact(
            out,
            &format!("threads {thread} calls"),
            count(&r[6]),
            model::thread_calls(truth, thread),
        );
        let (got, res) = printed_ns(&r[2]);
        w.time(
            out,
            &format!("threads {thread} busy"),
            got,
            model::thread_busy(truth, thread),
            res,
        );
    }
}
