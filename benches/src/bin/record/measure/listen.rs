//! What the control socket (`PERFGRAPH_LISTEN`) costs: the background thread's CPU time in an idle process
//! with the socket open and with it off (two child processes side by side, `record --listen-child MODE
//! SECONDS`), and a recording thread's time per section while a client asks for what `perfgraph top`
//! asks for at each refresh (`status`, then `dump` read back as a report) every 100 ms, against the same
//! thread with nobody asking, in alternating phases in `record`'s own process; and what a trace window
//! (`perfgraph trace`) of a child recording at a fixed rate holds and lacks.

use std::hint::black_box;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the idle children are watched.
const IDLE_SECONDS: u64 = 20;
/// Phases of each kind (alternating), and how long each lasts.
const PHASES: usize = 10;
const PHASE: Duration = Duration::from_millis(1000);
/// Sections per timed batch within a phase.
const BATCH: u64 = 20_000;
/// The client's period, as `perfgraph top --interval 0.1`.
const REFRESH: Duration = Duration::from_millis(100);

/// The figures.
pub struct Listen {
    /// Seconds the idle children were watched.
    pub idle_seconds: u64,
    /// The background thread's CPU time over them, as a share of one core (percent): socket on, off.
    pub idle_cpu_on: Option<f64>,
    pub idle_cpu_off: Option<f64>,
    /// Median ns per section of the recording thread: nobody asking, a client every 100 ms.
    pub quiet_ns: f64,
    pub asked_ns: f64,
    /// Phases of each, and refreshes the client made in all.
    pub phases: usize,
    pub refreshes: u64,
    /// Median time of one refresh (status + dump + reading it back), ms, and the dump's size, bytes.
    pub refresh_ms: f64,
    pub dump_bytes: usize,
    /// Trace windows (`perfgraph trace --seconds 2`, Chrome JSON) of a child recording on two threads at
    /// each rate per thread: `(rate, calls in the window, lost to ring overflow, not written, bytes)`.
    pub windows: Vec<(u64, u64, u64, u64, u64)>,
    /// A `/metrics` scrape of a process with 100 sections: bytes of text, and the background thread's
    /// time per scrape, µs (over [`SCRAPES`] in a row); `None` if it could not be measured.
    pub scrape: Option<(usize, f64)>,
    pub scrapes: u64,
    /// OTLP exports (`PERFGRAPH_OTLP`, every 0.1 s to a collector in `record`'s process that takes them) of
    /// the same child: bytes of the metrics request, the background thread's time per export, µs, and the
    /// exports counted; `None` if it could not be measured.
    pub otlp: Option<(usize, f64, u64)>,
    /// The same child with the default interval (10 s, spans `slow`), side by side: its background
    /// thread's CPU while the other was measured, as a share of one core (percent).
    pub otlp_idle: Option<f64>,
}

/// Scrapes of `/metrics` timed, of a child with 100 sections.
const SCRAPES: u64 = 200;

/// Each named section once, in order (distinct names need distinct call sites).
macro_rules! sections_once {
    ($i:expr, $($name:literal),*) => {
        $(
            {
                perfgraph_core::time_section!($name);
                black_box($i);
            }
        )*
    };
}

/// The child of the scrape measure: 100 sections, 1,000 calls each, then nothing for `seconds`.
pub fn metrics_child(seconds: u64) {
    for i in 0..1000u64 {
        metrics_000_to_049(i);
        metrics_050_to_099(i);
    }
    std::thread::sleep(Duration::from_secs(seconds));
}

/// One call of each of the first fifty sections of [`metrics_child`], `metric_000` to `metric_049`.
fn metrics_000_to_049(i: u64) {
    sections_once!(
        i,
        "metric_000",
        "metric_001",
        "metric_002",
        "metric_003",
        "metric_004",
        "metric_005",
        "metric_006",
        "metric_007",
        "metric_008",
        "metric_009",
        "metric_010",
        "metric_011",
        "metric_012",
        "metric_013",
        "metric_014",
        "metric_015",
        "metric_016",
        "metric_017",
        "metric_018",
        "metric_019",
        "metric_020",
        "metric_021",
        "metric_022",
        "metric_023",
        "metric_024",
        "metric_025",
        "metric_026",
        "metric_027",
        "metric_028",
        "metric_029",
        "metric_030",
        "metric_031",
        "metric_032",
        "metric_033",
        "metric_034",
        "metric_035",
        "metric_036",
        "metric_037",
        "metric_038",
        "metric_039",
        "metric_040",
        "metric_041",
        "metric_042",
        "metric_043",
        "metric_044",
        "metric_045",
        "metric_046",
        "metric_047",
        "metric_048",
        "metric_049"
    );
}

/// One call of each of the last fifty sections of [`metrics_child`], `metric_050` to `metric_099`.
fn metrics_050_to_099(i: u64) {
    sections_once!(
        i,
        "metric_050",
        "metric_051",
        "metric_052",
        "metric_053",
        "metric_054",
        "metric_055",
        "metric_056",
        "metric_057",
        "metric_058",
        "metric_059",
        "metric_060",
        "metric_061",
        "metric_062",
        "metric_063",
        "metric_064",
        "metric_065",
        "metric_066",
        "metric_067",
        "metric_068",
        "metric_069",
        "metric_070",
        "metric_071",
        "metric_072",
        "metric_073",
        "metric_074",
        "metric_075",
        "metric_076",
        "metric_077",
        "metric_078",
        "metric_079",
        "metric_080",
        "metric_081",
        "metric_082",
        "metric_083",
        "metric_084",
        "metric_085",
        "metric_086",
        "metric_087",
        "metric_088",
        "metric_089",
        "metric_090",
        "metric_091",
        "metric_092",
        "metric_093",
        "metric_094",
        "metric_095",
        "metric_096",
        "metric_097",
        "metric_098",
        "metric_099"
    );
}

/// `(bytes, background thread µs)` per scrape of `/metrics` of a child with 100 sections.
fn scrapes() -> Option<(usize, f64)> {
    use std::io::{Read, Write};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let me = std::env::current_exe().expect("own path");
    let mut child = Command::new(&me)
        .args(["--metrics-child", "60"])
        .env("PERFGRAPH_PROMETHEUS", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let scrape = || -> Option<usize> {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .ok()?;
        let mut body = Vec::new();
        s.read_to_end(&mut body).ok()?;
        let at = body.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
        Some(body.len() - at)
    };
    // Until the 100 sections are in.
    let start = Instant::now();
    let mut bytes = 0;
    while start.elapsed() < Duration::from_secs(20) {
        let text_ok = scrape().is_some_and(|b| {
            bytes = b;
            b > 100 * 2000
        });
        if text_ok {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = background_cpu_ns(child.id());
    for _ in 0..SCRAPES {
        scrape()?;
    }
    let after = background_cpu_ns(child.id());
    let _ = child.kill();
    let _ = child.wait();
    Some((bytes, (after? - before?) as f64 / SCRAPES as f64 / 1e3))
}

/// A collector on 127.0.0.1 that takes every request (200): its port, and per request the body's bytes.
fn collector() -> Option<(u16, Arc<std::sync::Mutex<Vec<usize>>>)> {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
    let port = listener.local_addr().ok()?.port();
    let taken = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&taken);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut got = Vec::new();
            let mut buf = [0u8; 1 << 16];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
                let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                    continue;
                };
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:")?.trim().parse().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    if head.starts_with("post /v1/metrics") {
                        log.lock().unwrap().push(length);
                    }
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                    break;
                }
            }
        }
    });
    Some((port, taken))
}

/// `(bytes, background thread µs, exports)` per OTLP metrics export of a child with 100 sections, and the
/// share of a core the same child's background thread takes with the default interval.
fn otlp_exports() -> (Option<(usize, f64, u64)>, Option<f64>) {
    // A collector each: the counts are the measured child's only.
    let (Some((port, taken)), Some((idle_port, _))) = (collector(), collector()) else {
        return (None, None);
    };
    let me = std::env::current_exe().expect("own path");
    let spawn = |interval: Option<&str>| {
        let mut cmd = Command::new(&me);
        let port = if interval.is_some() { port } else { idle_port };
        cmd.args(["--metrics-child", "60"])
            .env("PERFGRAPH_OTLP", format!("http://127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(i) = interval {
            cmd.env("PERFGRAPH_OTLP_INTERVAL", i);
        }
        cmd.spawn()
    };
    let (Ok(mut child), Ok(mut idle)) = (spawn(Some("0.1")), spawn(None)) else {
        return (None, None);
    };
    // The idle child's background thread exists once its sections ran (well within a second).
    std::thread::sleep(Duration::from_secs(1));
    let (idle_before, since) = (background_cpu_ns(idle.id()), Instant::now());
    let measured = exports(&mut child, &taken);
    let (idle_after, watched) = (background_cpu_ns(idle.id()), since.elapsed());
    let _ = idle.kill();
    let _ = idle.wait();
    let share = match (idle_before, idle_after) {
        (Some(a), Some(b)) => Some((b - a) as f64 / watched.as_nanos() as f64 * 100.0),
        _ => None,
    };
    (measured, share)
}

/// How long the exports are watched.
const OTLP_SECONDS: u64 = 10;

/// The exports of `child` (every 0.1 s) over [`OTLP_SECONDS`] once they hold the 100 sections.
fn exports(
    child: &mut std::process::Child,
    taken: &std::sync::Mutex<Vec<usize>>,
) -> Option<(usize, f64, u64)> {
    let exports = || taken.lock().unwrap().len() as u64;
    // Until an export holds the 100 sections (each section's points take more than 600 bytes).
    let start = Instant::now();
    while taken.lock().unwrap().last().is_none_or(|&b| b < 100 * 600) {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (before, first) = (background_cpu_ns(child.id()), exports());
    std::thread::sleep(Duration::from_secs(OTLP_SECONDS));
    let (after, last) = (background_cpu_ns(child.id()), exports());
    let bytes = *taken.lock().unwrap().last()?;
    let _ = child.kill();
    let _ = child.wait();
    let n = last - first;
    let cpu_ns = after? - before?;
    (n > 0).then(|| (bytes, cpu_ns as f64 / n as f64 / 1e3, n))
}

/// Rates per thread of the trace-window runs (two threads each).
const WINDOW_RATES: [u64; 3] = [250_000, 1_000_000, 2_000_000];

/// A writer that keeps the count of bytes and the last 64 KiB (where the trace's closing event is).
#[derive(Default)]
struct Tail {
    bytes: u64,
    tail: Vec<u8>,
}

impl std::io::Write for Tail {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len() as u64;
        self.tail.extend_from_slice(buf);
        if self.tail.len() > 128 << 10 {
            self.tail.drain(..self.tail.len() - (64 << 10));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The number after `"key":` in `text`'s last occurrence.
fn field(text: &str, key: &str) -> Option<u64> {
    let at = text.rfind(&format!("\"{key}\":"))? + key.len() + 3;
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A 2 s trace window of a child recording at `rate` per thread on two threads (`record --trace-child`,
/// no trace of its own), taken a second into its run.
fn window(rate: u64) -> Option<(u64, u64, u64, u64, u64)> {
    let me = std::env::current_exe().expect("own path");
    let mut child = Command::new(&me)
        .args(["--trace-child", &rate.to_string(), "5", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let socket = perfgraph_core::attach::directory().join(format!("{}.sock", child.id()));
    let start = Instant::now();
    while !socket.exists() && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_secs(1).saturating_sub(start.elapsed()));
    let mut tail = Tail::default();
    let traced = perfgraph_core::attach::trace(child.id(), 2.0, false, &mut tail);
    let _ = child.wait();
    traced.ok()?;
    let text = String::from_utf8_lossy(&tail.tail);
    Some((
        rate,
        field(&text, "events")?,
        field(&text, "dropped_ring_overflow")?,
        field(&text, "dropped_unwritten")?,
        tail.bytes,
    ))
}

impl Listen {
    pub fn measure() -> Listen {
        let (idle_cpu_on, idle_cpu_off) = idle();
        let recording = recording();
        let windows = WINDOW_RATES.iter().filter_map(|&r| window(r)).collect();
        let scrape = scrapes();
        let (otlp, otlp_idle) = otlp_exports();
        Listen {
            scrape,
            otlp,
            otlp_idle,
            scrapes: SCRAPES,
            idle_seconds: IDLE_SECONDS,
            idle_cpu_on,
            idle_cpu_off,
            windows,
            ..recording
        }
    }
}

/// The child: one section (the runtime starts, the socket opens), then nothing for `seconds`.
pub fn child(mode: &str, seconds: u64) {
    // SAFETY: set before anything reads the environment (the first section reads the settings).
    unsafe { std::env::set_var("PERFGRAPH_LISTEN", mode) };
    {
        perfgraph_core::time_section!("start");
    }
    std::thread::sleep(Duration::from_secs(seconds));
}

/// The CPU time (ns) of the thread named `perfgraph` of process `pid`: the scheduler's own count
/// (`/proc/<pid>/task/<tid>/schedstat`, ns), else `stat`'s user + system ticks (10 ms each).
fn background_cpu_ns(pid: u32) -> Option<u64> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() != "perfgraph" {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
        {
            return Some(ns);
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
        // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        return Some(ticks * 10_000_000);
    }
    None
}

/// The idle children, side by side: percent of a core their background threads used.
fn idle() -> (Option<f64>, Option<f64>) {
    let me = std::env::current_exe().expect("own path");
    let spawn = |mode: &str| {
        Command::new(&me)
            .args(["--listen-child", mode, &(IDLE_SECONDS + 3).to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the child")
    };
    let mut on = spawn("on");
    let mut off = spawn("off");
    std::thread::sleep(Duration::from_secs(1));
    let first = (background_cpu_ns(on.id()), background_cpu_ns(off.id()));
    std::thread::sleep(Duration::from_secs(IDLE_SECONDS));
    let last = (background_cpu_ns(on.id()), background_cpu_ns(off.id()));
    let _ = on.wait();
    let _ = off.wait();
    let share = |a: Option<u64>, b: Option<u64>| {
        Some((b? - a?) as f64 / (IDLE_SECONDS as f64 * 1e9) * 100.0)
    };
    (share(first.0, last.0), share(first.1, last.1))
}

#[inline(never)]
fn leaf(i: u64) -> u64 {
    perfgraph_core::time_section!("listen_leaf");
    black_box(i)
}

/// A recording thread's ns per section in phases with and without a client refreshing every 100 ms.
fn recording() -> Listen {
    let pid = std::process::id();
    let asking = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let client = {
        let (asking, stop) = (Arc::clone(&asking), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut times = Vec::new();
            let mut bytes = 0;
            while !stop.load(Ordering::Relaxed) {
                if asking.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = perfgraph_core::attach::status(pid).is_ok();
                    let dump = perfgraph_core::attach::dump(pid).unwrap_or_default();
                    bytes = dump.len();
                    let read = perfgraph_core::data::Report::read_json(&dump[..]).is_ok();
                    if ok && read {
                        times.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    std::thread::sleep(REFRESH.saturating_sub(t.elapsed()));
                } else {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            (times, bytes)
        })
    };
    let batch = || {
        let t = Instant::now();
        for i in 0..BATCH {
            black_box(leaf(i));
        }
        t.elapsed().as_nanos() as f64 / BATCH as f64
    };
    // Warm up: the first sections allocate the thread's state.
    for _ in 0..10 {
        batch();
    }
    let (mut quiet, mut asked) = (Vec::new(), Vec::new());
    for phase in 0..2 * PHASES {
        let on = phase % 2 == 1;
        asking.store(on, Ordering::Relaxed);
        let start = Instant::now();
        while start.elapsed() < PHASE {
            let ns = batch();
            if on { asked.push(ns) } else { quiet.push(ns) }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (times, dump_bytes) = client.join().expect("the client");
    let median = |v: Vec<f64>| perfgraph_benches::stats::median(v, |&x| x).unwrap_or(f64::NAN);
    Listen {
        idle_seconds: 0,
        idle_cpu_on: None,
        idle_cpu_off: None,
        quiet_ns: median(quiet),
        asked_ns: median(asked),
        phases: PHASES,
        refreshes: times.len() as u64,
        refresh_ms: median(times),
        dump_bytes,
        windows: Vec::new(),
        scrape: None,
        scrapes: 0,
        otlp: None,
        otlp_idle: None,
    }
}
