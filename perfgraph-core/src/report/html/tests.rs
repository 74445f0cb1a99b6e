//! The page's pieces that the whole-page tests (`tests/html_page.rs`) do not pin on their own.

use super::*;

#[test]
fn start_times_read_as_utc_dates() {
    assert_eq!(utc(0), "unknown");
    assert_eq!(utc(1_700_000_000_000_000_000), "2023-11-14 22:13:20 UTC");
    // A leap day, and the last second of a year.
    assert_eq!(utc(1_709_164_800_000_000_000), "2024-02-29 00:00:00 UTC");
    assert_eq!(utc(1_735_689_599_999_999_999), "2024-12-31 23:59:59 UTC");
}

#[test]
fn text_is_escaped_for_elements_and_attributes() {
    assert_eq!(
        esc("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

#[test]
fn a_table_page_sorts_figures_as_figures_and_colours_rows_by_class() {
    let mut out = Vec::new();
    write_table_page(
        &mut out,
        "t",
        &["Section".into(), "Base".into(), "Change".into()],
        &[
            vec!["solve".into(), "12.500".into(), "-3.5%".into()],
            vec!["<b>".into(), "-".into(), "-".into()],
        ],
        &["improved", ""],
        &["No regression past 10%.".into()],
    )
    .unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(html.contains(
        "<tr class=\"improved\"><td class=\"name\">solve</td><td class=\"num\" data-v=\"12.5\">12.500</td>\
         <td class=\"num\" data-v=\"-3.5\">-3.5%</td></tr>"
    ));
    assert!(html.contains("<tr><td class=\"name\">&lt;b&gt;</td><td class=\"name\">-</td>"));
    assert!(html.contains("<p>No regression past 10%.</p>"));
}

#[test]
fn a_series_stays_bounded_and_keeps_its_peaks() {
    let mut s = Series::new("counter", "");
    for i in 0..250_000u64 {
        s.push(i, if i == 123_457 { 1e9 } else { (i % 7) as f64 });
    }
    assert!(s.points.len() < Series::MAX_POINTS, "{}", s.points.len());
    assert!(s.points.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(s.points.contains(&(123_457, 1e9)));
}
