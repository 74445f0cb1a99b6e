//! The HTML page (`perfgraph_core::html`) from the deterministic fake recording of the golden tests: it is
//! self-contained, its tables are the text tables' cells, its flame graph has one frame per call path (at
//! most `MAX_FRAMES`, the cut stated), and no name can break out of its markup. The page in a real browser
//! is tested by `perfgraph-cli/tests/html.rs`.

mod report_fake;

use perfgraph_core::Verbosity;
use perfgraph_core::data::{CallNode, CallTree, Report, RunInfo};
use perfgraph_core::html::{MAX_FRAMES, MAX_TABLE_ROWS, Page, Series};
use report_fake::{solver_report, thread};

fn page_of(r: &Report, page: &Page) -> String {
    let mut out = Vec::new();
    r.write_html(&mut out, page).unwrap();
    String::from_utf8(out).unwrap()
}

/// The text of each `<td>` of each body row of the table in the section `id`, entities decoded.
fn html_rows(page: &str, id: &str) -> Vec<Vec<String>> {
    let start = page
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    let body = &section[section.find("<tbody>").unwrap()..section.find("</tbody>").unwrap()];
    body.split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
                    text.replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&quot;", "\"")
                        .replace("&#39;", "'")
                        .replace("&amp;", "&")
                })
                .collect()
        })
        .collect()
}

/// The cells of each row of a text table (`| a | b |` lines after the header).
fn text_rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn the_page_asks_for_nothing_outside_itself() {
    let page = page_of(&solver_report(Verbosity::Level(3), 0), &Page::default());
    assert!(page.starts_with("<!doctype html>") && page.trim_end().ends_with("</html>"));
    assert!(page.contains(
        "content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\""
    ));
    for outside in [
        "http:", "https:", "<link", " src=", "url(", "@import", "//cdn",
    ] {
        assert!(!page.contains(outside), "the page has {outside:?}");
    }
    // The data and the script: the only two script elements.
    assert_eq!(page.matches("<script").count(), 2);
}

#[test]
fn every_table_holds_the_text_tables_cells() {
    let r = solver_report(Verbosity::Level(3), 0);
    let page = page_of(&r, &Page::default());
    for (id, text) in [
        ("t-graph", r.graph_table()),
        ("t-branch", r.branch_table()),
        ("t-sections", r.sections_table(10)),
        ("t-latency", r.latency_table(10)),
        ("t-threads", r.threads_table()),
        ("t-cpu", r.cpu_table()),
    ] {
        let (html, text) = (html_rows(&page, id), text_rows(&text));
        assert!(!text.is_empty(), "{id}");
        let trimmed: Vec<Vec<String>> = html
            .iter()
            .map(|row| row.iter().map(|c| c.trim().to_owned()).collect())
            .collect();
        assert_eq!(trimmed, text, "{id}");
    }
    // The graph's names keep their indentation: a level deeper, two spaces more.
    let graph = html_rows(&page, "t-graph");
    assert_eq!(graph[2][0], "    mesh::refine");
}

#[test]
fn the_flame_graph_has_one_frame_per_call_path() {
    let r = solver_report(Verbosity::Level(3), 0);
    let page = page_of(&r, &Page::default());
    let start = page.find("id=\"perfgraph-data\">").unwrap() + "id=\"perfgraph-data\">".len();
    let json = &page[start..start + page[start..].find("</script>").unwrap()];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 8 * r.tree.nodes.len());
    let names = v["names"].as_array().unwrap();
    for (i, n) in r.tree.nodes.iter().enumerate() {
        let at = |k: usize| nodes[8 * i + k].as_i64().unwrap();
        assert_eq!(at(0), n.parent.map_or(-1, |p| p as i64));
        assert_eq!(names[at(1) as usize], n.name);
        assert_eq!(
            (at(2), at(3), at(4)),
            (n.total_ns as i64, n.self_ns as i64, n.calls as i64)
        );
    }
    assert_eq!(v["total_ns"], 10_350_000_000u64);
    assert!(!page.contains("are left out"));
}

/// A run of one thread whose `names` are top-level sections of 1 call and `ms[i]` ms each.
fn flat(names: &[String], ms: impl Fn(usize) -> u64) -> Report {
    let mut nodes = vec![CallNode::new(0, "(root)", 0, 0, None)];
    for (i, name) in names.iter().enumerate() {
        let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
        let mut n = CallNode::new(i as u32 + 1, leaked, 0, 1, Some(0));
        n.calls = 1;
        n.self_ns = ms(i) * 1_000_000;
        n.total_ns = n.self_ns;
        let at = nodes.len();
        nodes[0].total_ns += n.total_ns;
        nodes[0].children.push(at);
        nodes.push(n);
    }
    let tree = CallTree::new(nodes);
    let wall = tree.nodes[0].total_ns;
    Report::build(
        RunInfo::new("flat", "tsc", wall),
        &[thread(0, "main", 0, None, 0, tree)],
    )
}

#[test]
fn no_name_breaks_out_of_the_markup_or_the_data() {
    let evil = [
        "</script><script>alert(1)</script>".to_owned(),
        "<img src=x onerror=alert(2)>".to_owned(),
        "a \"quoted\" & 'ticked' <!-- name".to_owned(),
    ];
    let r = flat(&evil, |i| 10 + i as u64);
    let page = page_of(&r, &Page::default());
    assert_eq!(page.matches("<script").count(), 2, "{page}");
    assert!(!page.contains("<img") && !page.contains("<!-- name"));
    // The names are whole in the data and in the tables.
    let start = page.find("id=\"perfgraph-data\">").unwrap() + "id=\"perfgraph-data\">".len();
    let json = &page[start..start + page[start..].find("</script>").unwrap()];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    for name in &evil {
        assert!(
            v["names"]
                .as_array()
                .unwrap()
                .contains(&name.as_str().into())
        );
    }
    let rows = html_rows(&page, "t-sections");
    assert!(rows.iter().any(|row| row[0] == evil[0]), "{rows:?}");
}

#[test]
fn a_thousand_call_paths_make_a_page_under_a_megabyte() {
    let names: Vec<String> = (0..1_000).map(|i| format!("module::section_{i}")).collect();
    let page = page_of(&flat(&names, |i| 1 + i as u64 % 97), &Page::default());
    assert!(page.len() < 1 << 20, "{} bytes", page.len());
    assert!(page.contains("module::section_999"));
}

#[test]
fn past_max_frames_the_heaviest_paths_are_drawn_and_the_cut_is_stated() {
    let n = MAX_FRAMES + 10_000;
    let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    // s0 the heaviest, then lighter and lighter: the last 10,000 (and the root's slot) are left out.
    let r = flat(&names, |i| (n - i) as u64);
    let page = page_of(&r, &Page::default());
    let start = page.find("id=\"perfgraph-data\">").unwrap() + "id=\"perfgraph-data\">".len();
    let json = &page[start..start + page[start..].find("</script>").unwrap()];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let frames = v["nodes"].as_array().unwrap().len() / 8;
    assert_eq!(frames, MAX_FRAMES);
    let names = v["names"].as_array().unwrap();
    assert!(
        names.contains(&"s0".into()) && !names.contains(&format!("s{}", n - 1).as_str().into())
    );
    assert!(
        page.contains("10001 paths whose total time is under"),
        "cut not stated"
    );
    let note = format!(
        "The heaviest {MAX_TABLE_ROWS} call paths: the {} under",
        n - (MAX_TABLE_ROWS - 1)
    );
    assert!(page.contains(&note), "{note}");
    assert_eq!(html_rows(&page, "t-graph").len(), MAX_TABLE_ROWS);
    assert!(page.len() < 6 << 20, "{} bytes", page.len());
}

#[test]
fn series_and_the_critical_path_are_drawn_where_given() {
    let r = solver_report(Verbosity::Level(3), 0);
    let mut page = Page::default();
    let mut rss = Series::new("Resident memory", "MB");
    for i in 0..10_000u64 {
        rss.push(i * 1_000_000, (i % 100) as f64);
    }
    page.series.push(rss);
    page.critical_path = Some("Critical Path:\nPath: 10.350 s <on> 1 thread.\n".to_owned());
    let html = page_of(&r, &page);
    assert!(html.contains("<section id=\"critical\">"));
    assert!(html.contains("Path: 10.350 s &lt;on&gt; 1 thread."));
    assert!(html.contains("Resident memory (MB): 10000 points, from 0 to 99"));
    // Thinned to at most 2,000 points drawn.
    let line = &html[html.find("<polyline").unwrap()..];
    let points = line[..line.find("/>").unwrap()].matches(',').count();
    assert!((1_000..=2_000).contains(&points), "{points}");
}
