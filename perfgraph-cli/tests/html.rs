//! `perfgraph html RUN [TRACE]`, `PERFGRAPH_HTML` at exit and `perfgraph diff --html`, on a real program
//! (`examples/critical fork-join`): the page holds the tables `perfgraph report` prints, the critical path
//! `perfgraph report --critical-path` prints, the trace's series; bad input is one line and exit 2. The
//! page in a real browser: `perfgraph-demo/tests/html_in_chromium.rs`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{example, scratch};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

fn cli(args: &[&str]) -> Output {
    Command::new(CLI).args(args).output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `html` decoded of its entities.
fn decoded(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The run: its trace, its JSON, the page it wrote at exit, and its stderr.
fn fork_join(dir: &Path) -> String {
    let out = Command::new(example("critical"))
        .arg("fork-join")
        .env("PERFGRAPH_TRACE", dir.join("trace.json"))
        .env("PERFGRAPH_JSON", dir.join("run.json"))
        .env("PERFGRAPH_HTML", dir.join("exit.html"))
        .env("PERFGRAPH_REPORT", "critical")
        .env("PERFGRAPH_LIVE", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"", "{out:?}");
    text(&out).1
}

#[test]
fn the_page_holds_the_reports_tables_the_critical_path_and_the_series() {
    let dir = scratch("html", "page");
    let stderr = fork_join(&dir);
    let (run, trace, page) = (
        dir.join("run.json"),
        dir.join("trace.json"),
        dir.join("page.html"),
    );
    let o = cli(&[
        "html",
        run.to_str().unwrap(),
        trace.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(o.stdout, b"");
    let html = std::fs::read_to_string(&page).unwrap();
    // The graph's rows: the cells `perfgraph report --graph` prints, in its order.
    let graph = text(&cli(&["report", "--graph", run.to_str().unwrap()])).0;
    let names: Vec<String> = graph
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| {
            // `| name   |`: one space of padding before the name, its indentation kept.
            let cell = l.trim_matches('|').split(" | ").next().unwrap();
            cell.strip_prefix(' ').unwrap().trim_end().to_owned()
        })
        .collect();
    let section = &html[html.find("<section id=\"t-graph\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    let section = decoded(section);
    let mut at = 0;
    for name in &names {
        let cell = format!("<td class=\"name\">{name}</td>");
        let found = section[at..].find(&cell);
        assert!(found.is_some(), "{name} after {at} in {section}");
        at += found.unwrap() + 1;
    }
    // The critical path: what `report --critical-path` prints of the same trace.
    let critical = text(&cli(&[
        "report",
        "--critical-path",
        trace.to_str().unwrap(),
    ]))
    .0;
    let pre = &html[html.find("<section id=\"critical\">").unwrap()..];
    let pre = &pre[pre.find("<pre class=\"text\">").unwrap() + 18..pre.find("</pre>").unwrap()];
    assert_eq!(decoded(pre), critical);
    // The trace's resident memory, plotted.
    assert!(html.contains("Resident memory (MB): "), "no memory plot");
    // The page written at exit: the same critical path as the run printed on stderr, and memory.
    let exit = std::fs::read_to_string(dir.join("exit.html")).unwrap();
    let pre = &exit[exit.find("<pre class=\"text\">").unwrap() + 18..exit.find("</pre>").unwrap()];
    assert!(
        stderr.contains(&decoded(pre)),
        "{stderr}\n---\n{}",
        decoded(pre)
    );
    assert!(exit.contains("Resident memory (MB): "));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = scratch("html", "bad");
    std::fs::write(dir.join("cut.json"), "{\"format\": ").unwrap();
    std::fs::write(dir.join("trace.pftrace"), b"\x0a\x00").unwrap();
    let out = dir.join("page.html");
    let out = out.to_str().unwrap();
    let cut = dir.join("cut.json");
    let cut = cut.to_str().unwrap();
    let missing_dir = dir.join("no/such/dir/page.html");
    let cases: [(&[&str], &str); 3] = [
        (
            &["html", "missing.json", "-o", out],
            "missing.json: no such file",
        ),
        (&["html", cut, "-o", out], "cut.json"),
        (
            &["html", cut, "-o", missing_dir.to_str().unwrap()],
            "cut.json",
        ),
    ];
    for (args, says) in cases {
        let o = cli(args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!Path::new(out).exists(), "{args:?} left a page");
    }
    // A good run with a Perfetto trace, and into a directory that does not exist.
    fork_join(&dir);
    let run = dir.join("run.json");
    let run = run.to_str().unwrap();
    let pf = dir.join("trace.pftrace");
    for (args, says) in [
        (
            vec!["html", run, pf.to_str().unwrap(), "-o", out],
            "a Perfetto protobuf trace",
        ),
        (
            vec!["html", run, "-o", missing_dir.to_str().unwrap()],
            "no/such/dir/page.html",
        ),
    ] {
        let o = cli(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn diff_html_marks_the_regressed_row() {
    let dir = scratch("html", "diff");
    fork_join(&dir);
    let base = dir.join("run.json");
    // The head: work_b twice as long.
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    for n in v["tree"].as_array_mut().unwrap() {
        if n["name"] == "work_b" {
            for k in ["total_ns", "self_ns"] {
                n[k] = (n[k].as_u64().unwrap() * 2).into();
            }
        }
    }
    let head = dir.join("head.json");
    std::fs::write(&head, serde_json::to_vec(&v).unwrap()).unwrap();
    let page = dir.join("diff.html");
    let o = cli(&[
        "diff",
        base.to_str().unwrap(),
        head.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<tr class=\"regressed\"><td class=\"name\">work_b</td>"),
        "{html}"
    );
    // The text's verdict is on the page too.
    let verdict = out.lines().last().unwrap();
    assert!(html.contains(&format!("<p>{verdict}</p>")), "{verdict}");
}
