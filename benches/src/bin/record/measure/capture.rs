//! The cost of `PERFGRAPH_CAPTURE`: the instrumented demo writes a flood to stdout (`--flood-mb`), with its
//! stdout and stderr one pipe (the case `auto` captures), read to the end by this process; the same run with
//! `PERFGRAPH_CAPTURE=off`, alternated with it.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use perfgraph_benches::stats::median;

/// One kind of flood: what the demo writes.
pub struct Flood {
    /// Megabytes written.
    pub mb: u64,
    /// 100-byte `println!` lines (`--lines`) rather than 64 KiB `write_all`s.
    pub lines: bool,
    /// Wall time of the run (spawn to the pipe's end), ms, `PERFGRAPH_CAPTURE=off`: median.
    pub off_ms: f64,
    /// The same with `PERFGRAPH_CAPTURE=auto`: median.
    pub auto_ms: f64,
    /// Runs of each.
    pub runs: usize,
}

/// The floods measured; empty when the demo cannot flood.
pub struct Capture {
    /// One entry per kind of flood.
    pub floods: Vec<Flood>,
}

/// Runs of each setting, alternated.
const RUNS: usize = 3;

impl Capture {
    /// Measures 1 GB in 64 KiB blocks and 100 MB in 100-byte lines.
    pub fn measure(demo_on: &Path) -> Capture {
        let floods = [(1000, false), (100, true)]
            .into_iter()
            .filter_map(|(mb, lines)| flood(demo_on, mb, lines))
            .collect();
        Capture { floods }
    }
}

fn flood(demo: &Path, mb: u64, lines: bool) -> Option<Flood> {
    let mut off = Vec::new();
    let mut auto = Vec::new();
    for _ in 0..RUNS {
        off.push(run(demo, mb, lines, "off")?);
        auto.push(run(demo, mb, lines, "auto")?);
    }
    Some(Flood {
        mb,
        lines,
        off_ms: median(off, |&x| x)?,
        auto_ms: median(auto, |&x| x)?,
        runs: RUNS,
    })
}

/// One run's wall time in ms, its stdout and stderr one pipe drained by this process.
fn run(demo: &Path, mb: u64, lines: bool, capture: &str) -> Option<f64> {
    let (mut reader, writer) = std::io::pipe().ok()?;
    let mut cmd = Command::new(demo);
    cmd.arg("--flood-mb").arg(mb.to_string());
    if lines {
        cmd.arg("--lines");
    }
    cmd.env("PERFGRAPH_CAPTURE", capture)
        .env("PERFGRAPH_LIVE", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().ok()?))
        .stderr(Stdio::from(writer));
    let start = Instant::now();
    let mut child = cmd.spawn().ok()?;
    drop(cmd);
    let mut buf = vec![0u8; 1 << 16];
    while reader.read(&mut buf).ok()? > 0 {}
    let ok = child.wait().ok()?.success();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    ok.then_some(ms)
}
