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
            "1 │ 2 │ 3 Heaviest sect… │ 4 │ 5 │ 6 │ 7",
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
    let mut full = [
        "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
        " 1 Running │ 2 Graph │ 3 Sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Waits",
        "Section  Calls Self(s) Total(s) p50      p90      p99      Max",
        "demo     1     0.500   4.000    -        -        -        -",
        "solve    2     1.000   3.000    1.00 s   1.00 s   1.00 s   1.00 s",
        "residual 1000  2.000   2.000    1.6 ms   1.6 ms   1.6 ms   371.8 ms",
        "assemble 5000  0.500   0.500    100.0 µs 100.0 µs 100.0 µs 100.0 µs",
        "",
        "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter",
    ];
    golden(screen(Pane::Sections, 80), &full);
    // Room for the tabs' whole titles.
    full[1] = " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Wait chains";
    golden(screen(Pane::Sections, 200), &full);
}

#[test]
fn the_call_graph_at_40_columns_drops_running_and_elides_a_name() {
    golden(
        screen(Pane::Graph, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 Call graph │ 3 │ 4 │ 5 │ 6 │ 7",
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
            "1 Running │ 2 │ 3 │ 4 │ 5 │ 6 │ 7",
            "Thread Running now               Elapsed",
            "main   Simulation::time_steps::… 1.50 s",
            "         residual                2.0 µs",
            "",
            "",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
    let mut wide = [
        "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
        " 1 Running │ 2 Graph │ 3 Sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Waits",
        "Thread Running now                             Elapsed",
        "main   Simulation::time_steps::nonlinear_solve 1.50 s",
        "         residual                              2.0 µs",
        "",
        "",
        "",
        "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter",
    ];
    golden(screen_of(&s, Pane::Running, 80), &wide);
    wide[1] = " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Wait chains";
    golden(screen_of(&s, Pane::Running, 200), &wide);
}

#[test]
fn the_threads_pane_at_40_columns() {
    golden(
        screen(Pane::Threads, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 │ 3 │ 4 Threads │ 5 │ 6 │ 7",
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

#[test]
fn the_locks_pane_at_40_80_and_200_columns() {
    // As the report's `Locks:`, sorted by the time waited; the narrower, the fewer figures.
    let rows = |tabs: &'static str, header: &'static str, queue, log, keys| {
        let mut r = vec![
            "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
            tabs,
            header,
            queue,
            log,
        ];
        r.extend(["", "", "", keys]);
        r
    };
    let keys = "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter";
    let mut narrow = rows(
        "1 │ 2 │ 3 │ 4 │ 5 Locks │ 6 │ 7",
        "Lock  Acquisitions Contended Wait(s)",
        "queue 12000        150       0.043",
        "log   800          0         0.000",
        "q quit  s sort: total  n top 10: off",
    );
    narrow[0] = "demo (pid 42)  up 4.00 s  rss 12.5 MB";
    golden(screen(Pane::Locks, 40), &narrow);
    golden(
        screen(Pane::Locks, 80),
        &rows(
            " 1 Running │ 2 Graph │ 3 Sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Waits",
            "Lock  Acquisitions Contended Wait(s) Max wait(ms) Hold(s) Max hold(ms)",
            "queue 12000        150       0.043   3.200        0.910   12.400",
            "log   800          0         0.000   0.000        0.002   0.020",
            keys,
        ),
    );
    golden(
        screen(Pane::Locks, 200),
        &rows(
            " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Wait chains",
            "Lock  Acquisitions Contended Wait(s) Max wait(ms) Hold(s) Max hold(ms) Max waiters",
            "queue 12000        150       0.043   3.200        0.910   12.400       3",
            "log   800          0         0.000   0.000        0.002   0.020        0",
            keys,
        ),
    );
}

#[test]
fn the_counters_pane_at_40_80_and_200_columns() {
    // As the report's `Counters:`, by name; at 40 columns the samples go first.
    let table = |header, depth, residual| [header, depth, residual, "", "", ""];
    let mut expect: Vec<&str> = vec![
        "demo (pid 42)  up 4.00 s  rss 12.5 MB",
        "1 │ 2 │ 3 │ 4 │ 5 │ 6 Counters │ 7",
    ];
    expect.extend(table(
        "Counter     Last   Min    Max Mean",
        "queue_depth 7      3      12  7.33333",
        "residual    0.0031 0.0031 0.5 0.19578",
    ));
    expect.push("q quit  s sort: total  n top 10: off");
    golden(screen(Pane::Counters, 40), &expect);
    for (w, tabs) in [
        (
            80,
            " 1 Running │ 2 Graph │ 3 Sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Waits",
        ),
        (
            200,
            " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Wait chains",
        ),
    ] {
        let mut expect = vec!["demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1", tabs];
        expect.extend(table(
            "Counter     Samples Last   Min    Max Mean",
            "queue_depth 3       7      3      12  7.33333",
            "residual    4       0.0031 0.0031 0.5 0.19578",
        ));
        expect.push("q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter");
        golden(screen(Pane::Counters, w), &expect);
    }
}

#[test]
fn a_pane_with_nothing_recorded_says_so() {
    let mut s = snapshot();
    s.report.run.locks.clear();
    s.report.run.counters.clear();
    assert_eq!(
        screen_of(&s, Pane::Locks, 80)[2],
        "No lock of perfgraph_core::sync used yet."
    );
    assert_eq!(screen_of(&s, Pane::Counters, 80)[2], "No counter! set yet.");
}

#[test]
fn the_wait_chains_at_40_80_and_200_columns() {
    let s = super::view::tests_support::waiting_snapshot();
    // The chain is the name that gives way: elided, never the time.
    golden(
        screen_of(&s, Pane::Waits, 40),
        &[
            "demo (pid 42)  up 4.00 s  rss 12.5 MB",
            "1 │ 2 │ 3 │ 4 │ 5 │ 6 │ 7 Wait chains",
            "Thread   Waits for              Waiting",
            "T1       `L2` held by T2 in `f… 250.0 ms",
            "T3       `L1` held by T1, whic… 200.0 ms",
            "consumer `queue`                3.0 ms",
            "",
            "",
            "q quit  s sort: total  n top 10: off",
        ],
    );
    let mut wide = [
        "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 5",
        " 1 Running │ 2 Graph │ 3 Sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Waits",
        "Thread   Waits for                                                   Waiting",
        "T1       `L2` held by T2 in `flush`                                  250.0 ms",
        "T3       `L1` held by T1, which waits for `L2` held by T2 in `flush` 200.0 ms",
        "consumer `queue`                                                     3.0 ms",
        "",
        "",
        "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter",
    ];
    golden(screen_of(&s, Pane::Waits, 80), &wide);
    wide[1] = " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads │ 5 Locks │ 6 Counters │ 7 Wait chains";
    golden(screen_of(&s, Pane::Waits, 200), &wide);
    let mut idle = snapshot();
    idle.threads[0].waiting = None;
    assert_eq!(
        screen_of(&idle, Pane::Waits, 80)[2],
        "No thread is waiting in perfgraph_core::sync now."
    );
}
