//! The demo's HTML page (`PERFGRAPH_HTML`, with `PERFGRAPH_JSON` beside it; the whole demo at full size,
//! its fine-grained loop alone by default) in a real browser: headless
//! Chromium (Debian's `chromium`, which `.ci/run` installs) opens it from `file://` with no network (in a
//! network namespace of its own where `unshare -rn` works, else with every host unresolvable and a
//! proxy that answers nothing), and the page's own self-test (the `#selftest` URL) reports what it saw:
//! no error, one frame per call path, a real click on a frame zoomed it, the reset and a column sort
//! worked. A cell of the page's `Heaviest Sections` table must equal the JSON's figures, and a
//! screenshot is taken. Without Chromium the test says loudly that it did not run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Generous: only catches a hang, on a machine with both cores busy.
const PATIENCE: Duration = Duration::from_secs(180);

/// The browser: `CHROMIUM` (a path), else `chromium` or `chromium-browser` on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// Runs `cmd`, killed past [`PATIENCE`].
fn run(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("{cmd:?} took longer than {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// Chromium headless on `url` with `extra` arguments, without a network.
fn browse(chromium: &Path, profile: &Path, extra: &[&str], url: &str) -> Output {
    let isolated = Command::new("unshare")
        .args(["-rn", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mut cmd = if isolated {
        let mut c = Command::new("unshare");
        c.arg("-rn").arg(chromium);
        c
    } else {
        eprintln!(
            "note: unshare -rn is not allowed here: Chromium runs with every host unresolvable and a dead \
             proxy instead of without a network"
        );
        let mut c = Command::new(chromium);
        c.args([
            "--proxy-server=http://127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ]);
        c
    };
    cmd.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(url);
    run(cmd)
}

#[test]
fn the_demos_page_opens_from_file_with_no_error_one_frame_a_path_and_a_zoom() {
    let Some(chromium) = chromium() else {
        eprintln!(
            "note: the_demos_page_opens_from_file... did NOT run: no chromium on PATH (.ci/run installs \
             Debian's chromium; CHROMIUM=path names another)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("perfgraph-html-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (page, json) = (dir.join("demo.html"), dir.join("demo.json"));
    // The whole demo (11 s, debug) at full size (`TESTS_FULL=1`, as `.ci/run` sets); by default its
    // fine-grained loop alone, a fraction of a second.
    let full = std::env::var("TESTS_FULL").is_ok_and(|v| v == "1");
    let mut demo = Command::new(env!("CARGO_BIN_EXE_perfgraph-demo"));
    if !full {
        demo.args(["--fine-iters", "20000"]);
    }
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("PERFGRAPH_")) {
        demo.env_remove(k);
    }
    demo.env("PERFGRAPH_HTML", &page)
        .env("PERFGRAPH_JSON", &json)
        .env("PERFGRAPH_REPORT", "critical")
        .env("PERFGRAPH_LIVE", "off");
    let ran = run(demo);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );

    let url = format!("file://{}#selftest", page.display());
    let seen = browse(&chromium, &dir.join("profile"), &["--dump-dom"], &url);
    let (dom, log) = (
        String::from_utf8_lossy(&seen.stdout),
        String::from_utf8_lossy(&seen.stderr),
    );
    // The console holds nothing of the page's: no error, no warning, nothing its policy refused (a
    // request it would have made). The self-test below also catches errors the script saw.
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") && l.contains("file://"))
        .collect();
    assert!(console.is_empty(), "the console: {console:#?}");
    let start = dom
        .find("<pre id=\"selftest\">")
        .expect("the self-test ran")
        + 19;
    let selftest: Value = serde_json::from_str(
        &dom[start..start + dom[start..].find("</pre>").unwrap()].replace("&quot;", "\""),
    )
    .unwrap();
    eprintln!("self-test: {selftest}");
    assert_eq!(selftest["errors"], serde_json::json!([]), "{selftest}");

    // One frame per call path of the merged tree (its root is the program).
    let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let tree = run["tree"].as_array().unwrap();
    assert_eq!(selftest["frames"], tree.len(), "{selftest}");
    assert_eq!(
        selftest["zoomed"], true,
        "a click on a frame zoomed it: {selftest}"
    );
    assert_eq!(selftest["reset"], true, "{selftest}");
    assert_eq!(selftest["sorted"], true, "{selftest}");
    assert!(selftest["tables"].as_u64().unwrap() >= 5, "{selftest}");

    // A cell of `Heaviest Sections` is the JSON's: the heaviest section's calls and self time (over its
    // call paths), `Simulation::solve` in the whole demo.
    let mut by_name: Vec<(String, u64, u64)> = Vec::new();
    for n in tree.iter().skip(1) {
        let name = n["name"].as_str().unwrap();
        let (calls, self_ns) = (n["calls"].as_u64().unwrap(), n["self_ns"].as_u64().unwrap());
        match by_name.iter_mut().find(|e| e.0 == name) {
            Some(e) => (e.1, e.2) = (e.1 + calls, e.2 + self_ns),
            None => by_name.push((name.to_owned(), calls, self_ns)),
        }
    }
    let (name, calls, self_ns) = by_name.into_iter().max_by_key(|e| e.2).unwrap();
    if full {
        assert_eq!(name, "Simulation::solve");
    }
    let section = &dom[dom.find("<section id=\"t-sections\">").unwrap()..];
    let row = section
        .split("<tr")
        .find(|r| r.contains(&format!(">{name}<")))
        .unwrap_or_else(|| panic!("a row for {name}"));
    let cells: Vec<&str> = row
        .split("<td")
        .skip(1)
        .map(|c| &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()])
        .collect();
    assert_eq!(cells[1], calls.to_string(), "{row}");
    assert_eq!(cells[2], format!("{:.3}", self_ns as f64 / 1e9), "{row}");

    // A screenshot, as the user guide shows.
    let shot = dir.join("demo.png");
    let url = format!("file://{}", page.display());
    let arg = format!("--screenshot={}", shot.display());
    browse(
        &chromium,
        &dir.join("profile2"),
        &[&arg, "--window-size=1280,900", "--hide-scrollbars"],
        &url,
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
