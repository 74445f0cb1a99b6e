//! Golden screens of `perfgraph top` at 40, 80 and 200 columns: what a terminal shows for a fixed
//! snapshot, every number whole with its unit (columns dropped, names elided with `…`).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

use super::draw::{Screen, draw};
use super::view::tests_support::snapshot;
use super::view::{Pane, Ui};

/// The screen as text, row by row, trailing blanks trimmed.
pub fn render(s: &Screen, w: u16, h: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, s)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    // `NO_COLOR`: not one cell with a colour of its own.
    let coloured = buffer
        .content()
        .iter()
        .any(|c| c.fg != Color::Reset || c.bg != Color::Reset);
    assert_eq!(coloured, s.colour, "colours drawn: {coloured}");
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// Pane `pane` of `snapshot` on a terminal `w` columns wide, 9 rows.
fn screen_of(snapshot: &super::view::Snapshot, pane: Pane, w: u16) -> Vec<String> {
    let ui = Ui {
        pane,
        ..Ui::default()
    };
    let s = Screen {
        snapshot: Some(snapshot),
        ui: &ui,
        note: None,
        colour: false,
    };
    render(&s, w, 9)
}

fn screen(pane: Pane, w: u16) -> Vec<String> {
    screen_of(&snapshot(), pane, w)
}

/// The screen is these rows (shown whole when not).
fn golden(screen: Vec<String>, rows: &[&str]) {
    assert_eq!(screen, rows, "the screen:\n{}", screen.join("\n"));
}

#[test]
fn heaviest_sections_at_40_columns_drop_percentiles_whole() {
    // The percentiles go first (p90, p50, Max), p99 stays: 371.8 ms and 100.0 µs whole or not at all.
    golden(
        screen(Pane::Sections, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 │ 3 Heaviest sections │ 4",
            "Section  Calls Self(s) Total(s) p99",
            "demo     1     0.500   4.000    -",
            "solve    2     1.000   3.000    1.00 s",
            "residual 1000  2.000   2.000    1.6 ms",
            "assemble 5000  0.500   0.500    100.0 µs",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
}

#[test]
fn heaviest_sections_at_80_and_200_columns_show_every_column() {
    let full = [
        "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
        " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads",
        "Section  Calls Self(s) Total(s) p50      p90      p99      Max",
        "demo     1     0.500   4.000    -        -        -        -",
        "solve    2     1.000   3.000    1.00 s   1.00 s   1.00 s   1.00 s",
        "residual 1000  2.000   2.000    1.6 ms   1.6 ms   1.6 ms   371.8 ms",
        "assemble 5000  0.500   0.500    100.0 µs 100.0 µs 100.0 µs 100.0 µs",
        "",
        "q quit  tab/1-4 pane  s sort: total  n top 10: off  / filter",
    ];
    golden(screen(Pane::Sections, 80), &full);
    golden(screen(Pane::Sections, 200), &full);
}

#[test]
fn the_call_graph_at_40_columns_drops_running_and_elides_a_name() {
    golden(
        screen(Pane::Graph, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 Call graph │ 3 │ 4",
            "Section     Calls Self(s) Total(s) %",
            "demo        1     0.500   4.000    100.0",
            "  solve     2     1.000   3.000    75.0",
            "    residu… 1000  2.000   2.000    50.0",
            "  assemble  5000  0.500   0.500    12.5",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
}

#[test]
fn the_running_pane_at_40_80_and_200_columns_elides_a_long_name() {
    let mut s = snapshot();
    s.threads[0].running[0].0 = "Simulation::time_steps::nonlinear_solve".into();
    golden(
        screen_of(&s, Pane::Running, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 Running │ 2 │ 3 │ 4",
            "Thread Running now               Elapsed",
            "main   Simulation::time_steps::… 1.50 s",
            "         residual                2.0 µs",
            "",
            "",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
    let wide = [
        "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
        " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads",
        "Thread Running now                             Elapsed",
        "main   Simulation::time_steps::nonlinear_solve 1.50 s",
        "         residual                              2.0 µs",
        "",
        "",
        "",
        "q quit  tab/1-4 pane  s sort: total  n top 10: off  / filter",
    ];
    golden(screen_of(&s, Pane::Running, 80), &wide);
    golden(screen_of(&s, Pane::Running, 200), &wide);
}

#[test]
fn the_threads_pane_at_40_columns() {
    golden(
        screen(Pane::Threads, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 │ 3 │ 4 Threads",
            "Thread Busy(s) Busy % CPU(s) CPU %",
            "main   3.500   87.5   0.000  0.0",
            "",
            "",
            "",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
}
