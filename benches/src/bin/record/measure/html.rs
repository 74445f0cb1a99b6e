//! The HTML page (`perfgraph html`) on synthetic runs of [`PATHS`] call paths: per size, `synthetic_run`
//! (`benches/src/bin/synthetic_run.rs`) makes the run JSON, the release `perfgraph html` writes the page
//! ([`RUNS`] times, timed from spawn to exit), and headless Chromium loads it [`RUNS`] times, each with a
//! fresh profile directory, with the URL hash `#selftest`: the page's script then appends
//! `<pre id="selftest">{json}</pre>` to its body, which `--dump-dom` prints. Its `errors` must be empty.
//! Without Chromium, the figures of the page's load are absent and the reason is kept.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perfgraph_benches::stats::median;

use super::machine::Machine;

/// The sizes of run measured, in call paths.
pub const PATHS: [usize; 3] = [1_000, 100_000, 1_000_000];
/// `perfgraph html` runs and Chromium loads per size; the median of each is printed.
pub const RUNS: usize = 3;
/// Chromium's `--virtual-time-budget`, ms.
pub const BUDGET_MS: u64 = 5_000;
/// A load that has not ended by then is killed and the step fails.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(180);

/// What the section prints.
pub struct HtmlFigures {
    /// The machine and the moment (the section is remade alone, after the header was written).
    pub machine: Machine,
    /// One row per size of [`PATHS`].
    pub rows: Vec<HtmlRow>,
    /// Chromium's version (`chromium --version`), or why the page's load was not measured.
    pub chromium: Result<String, String>,
    /// Whether Chromium ran without a network (`unshare -rn`).
    pub unshared: bool,
}

/// One size of run.
pub struct HtmlRow {
    /// Call paths of the run (the merged tree's nodes but its root).
    pub paths: usize,
    /// The run JSON's size, bytes.
    pub json_bytes: u64,
    /// `synthetic_run`'s wall time, s.
    pub generate_s: f64,
    /// The page's size, bytes.
    pub page_bytes: u64,
    /// `perfgraph html`'s wall time, s, median of [`RUNS`].
    pub html_s: f64,
    /// The Chromium figures; `None` without Chromium.
    pub load: Option<Load>,
}

/// The page loaded in Chromium, medians of [`RUNS`] loads.
pub struct Load {
    /// The flame graph's frames in the page's data (`frames`).
    pub frames: u64,
    /// Frames the first render drew (`drawn`: the others are narrower than a pixel's fraction).
    pub drawn: u64,
    /// `performance.now()` at the end of the first render, ms from navigation start.
    pub render_ms: f64,
    /// The `chromium` command's wall time, s.
    pub wall_s: f64,
}

/// What `measure` is given: the `perfgraph` command, `synthetic_run`, and a directory for the files.
pub struct HtmlInputs<'a> {
    pub perfgraph: &'a Path,
    pub synthetic: &'a Path,
    pub scratch: &'a Path,
    /// The record's path and the command that measured the section, for [`Machine`].
    pub out: &'a Path,
    pub command: &'a str,
}

/// The `chromium` command: `$CHROMIUM`, else `chromium` on the path.
fn chromium_command() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned())
}

/// Chromium's version, or why it cannot be run.
fn chromium_version(cmd: &str) -> Result<String, String> {
    match Command::new(cmd).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_owned()),
        Ok(o) => Err(format!("`{cmd} --version` exited with {}", o.status)),
        Err(e) => Err(format!("`{cmd}` could not be run ({e})")),
    }
}

/// Measures every size (a few minutes: the 1,000,000-path run is a 1 GB file, read 3 times).
pub fn measure(i: &HtmlInputs) -> HtmlFigures {
    let machine = Machine::read(i.command, i.out);
    let cmd = chromium_command();
    let chromium = chromium_version(&cmd);
    let unshared = Command::new("unshare")
        .args(["-rn", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    std::fs::create_dir_all(i.scratch).expect("the scratch directory");
    let mut rows = Vec::new();
    for paths in PATHS {
        let json = i.scratch.join(format!("run-{paths}.json"));
        let page = i.scratch.join(format!("page-{paths}.html"));
        eprintln!("   {paths} call paths");
        let start = Instant::now();
        let made = Command::new(i.synthetic)
            .arg(paths.to_string())
            .arg(&json)
            .status()
            .expect(
                "synthetic_run (cargo build --release -p perfgraph-benches --bin synthetic_run)",
            );
        assert!(made.success(), "synthetic_run {paths} failed");
        let generate_s = start.elapsed().as_secs_f64();
        let json_bytes = size(&json);
        let times: Vec<f64> = (0..RUNS).map(|_| html(i.perfgraph, &json, &page)).collect();
        let html_s = median(times, |&t| t).expect("runs");
        let page_bytes = size(&page);
        // The run is the largest file by far; the page is kept to look at.
        let _ = std::fs::remove_file(&json);
        let load = chromium.as_ref().ok().map(|_| {
            let loads: Vec<Load> = (0..RUNS)
                .map(|run| {
                    load(
                        &cmd,
                        unshared,
                        &page,
                        &i.scratch.join(format!("chromium-{paths}-{run}")),
                    )
                })
                .collect();
            Load {
                frames: loads[0].frames,
                drawn: loads[0].drawn,
                render_ms: median(loads.iter().map(|l| l.render_ms).collect(), |&v| v)
                    .expect("loads"),
                wall_s: median(loads.iter().map(|l| l.wall_s).collect(), |&v| v).expect("loads"),
            }
        });
        rows.push(HtmlRow {
            paths,
            json_bytes,
            generate_s,
            page_bytes,
            html_s,
            load,
        });
    }
    HtmlFigures {
        machine,
        rows,
        chromium,
        unshared,
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len()
}

/// One `perfgraph html RUN -o PAGE`, its wall time in s.
fn html(perfgraph: &Path, json: &Path, page: &Path) -> f64 {
    let start = Instant::now();
    let status = Command::new(perfgraph)
        .arg("html")
        .arg(json)
        .arg("-o")
        .arg(page)
        .status()
        .expect("the perfgraph command (cargo build --release -p perfgraph-cli)");
    let s = start.elapsed().as_secs_f64();
    assert!(status.success(), "perfgraph html {} failed", json.display());
    s
}

/// One load of `page` in headless Chromium, with the fresh profile directory `profile` (removed after).
/// Panics if the page's self-test is missing or reports errors.
fn load(cmd: &str, unshared: bool, page: &Path, profile: &Path) -> Load {
    let _ = std::fs::remove_dir_all(profile);
    let dom: PathBuf = profile.with_extension("dom.html");
    let log: PathBuf = profile.with_extension("stderr.txt");
    let url = format!(
        "file://{}#selftest",
        std::fs::canonicalize(page).expect("the page").display()
    );
    let mut c = if unshared {
        let mut c = Command::new("unshare");
        c.args(["-rn", cmd]);
        c
    } else {
        Command::new(cmd)
    };
    c.args(["--headless=new", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--virtual-time-budget={BUDGET_MS}"))
        .arg("--dump-dom")
        .arg(&url)
        .stdin(Stdio::null())
        // To files, not pipes: the dump is megabytes, and a full pipe would stall Chromium.
        .stdout(File::create(&dom).expect("the dump's file"))
        .stderr(File::create(&log).expect("Chromium's log file"));
    let start = Instant::now();
    let mut child = c.spawn().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for Chromium") {
            break status;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "Chromium did not end within {CHROMIUM_TIMEOUT:?} on {url} (log: {})",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall_s = start.elapsed().as_secs_f64();
    assert!(
        status.success(),
        "Chromium exited with {status} on {url} (log: {})",
        log.display()
    );
    let text = std::fs::read_to_string(&dom).expect("the dump");
    let out = selftest(&text).unwrap_or_else(|| {
        panic!(
            "no self-test in the page Chromium dumped ({}; log: {})",
            dom.display(),
            log.display()
        )
    });
    let errors = out["errors"].as_array().map_or(1, Vec::len);
    assert!(
        errors == 0,
        "the page's self-test reported errors on {url}: {}",
        out["errors"]
    );
    let _ = std::fs::remove_dir_all(profile);
    let _ = std::fs::remove_file(&dom);
    let _ = std::fs::remove_file(&log);
    Load {
        frames: out["frames"].as_u64().expect("frames"),
        drawn: out["drawn"].as_u64().expect("drawn"),
        render_ms: out["render_ms"].as_f64().expect("render_ms"),
        wall_s,
    }
}

/// The self-test's JSON in a dumped DOM: the text of `<pre id="selftest">`, unescaped.
fn selftest(dom: &str) -> Option<serde_json::Value> {
    const OPEN: &str = "<pre id=\"selftest\">";
    let start = dom.find(OPEN)? + OPEN.len();
    let end = start + dom[start..].find("</pre>")?;
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_selftest_is_read_from_the_dumped_dom() {
        let dom = "<html><body><main></main><pre id=\"selftest\">{\"errors\":[\"a &lt;b&gt; &amp; c\"],\
                   \"frames\":50000,\"render_ms\":3035.3}</pre></body></html>";
        let out = super::selftest(dom).expect("found");
        assert_eq!(out["errors"][0], "a <b> & c");
        assert_eq!(out["frames"], 50000);
        assert!(super::selftest("<html></html>").is_none());
    }
}
