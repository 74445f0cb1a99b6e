//! `perfgraph top`'s screen, drawn from the rows of `view`: a header line (the process, its memory, and
//! what became of it), the panes' tabs, the table of the pane shown, and the keys. Colours only where the
//! terminal may have them (`NO_COLOR` unset).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, Tabs};

use super::view::{self, Pane, Snapshot, Ui};

/// What the screen says besides the snapshot.
pub struct Screen<'a> {
    pub snapshot: Option<&'a Snapshot>,
    pub ui: &'a Ui,
    /// The status line: why there is no (new) snapshot (`process 123 exited`), if so.
    pub note: Option<&'a str>,
    /// Colours allowed.
    pub colour: bool,
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, s: &Screen) {
    let [head, tabs, body, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let accent = |c: Color| {
        if s.colour {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    };
    let mut top = vec![Span::styled(
        s.snapshot
            .map_or_else(|| "perfgraph top".to_owned(), view::header),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if let Some(note) = s.note {
        top.push(Span::raw("  "));
        top.push(Span::styled(
            note.to_owned(),
            accent(Color::Red).add_modifier(Modifier::BOLD),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(top)), head);

    let titles: Vec<String> = Pane::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} {}", i + 1, p.title()))
        .collect();
    let selected = Pane::ALL.iter().position(|&p| p == s.ui.pane).unwrap_or(0);
    f.render_widget(
        Tabs::new(titles)
            .select(selected)
            .highlight_style(accent(Color::Yellow).add_modifier(Modifier::REVERSED)),
        tabs,
    );

    match s.snapshot {
        Some(snapshot) => {
            let t = view::table(snapshot, s.ui);
            let widths = widths(&t);
            let rows: Vec<Row> = t
                .rows
                .iter()
                .map(|r| Row::new(r.iter().map(|c| Cell::from(c.as_str()))))
                .collect();
            let header = Row::new(t.header.iter().map(|h| Cell::from(*h)))
                .style(accent(Color::Cyan).add_modifier(Modifier::BOLD));
            f.render_widget(Table::new(rows, widths).header(header), body);
        }
        None => f.render_widget(Paragraph::new("waiting for the first snapshot…"), body),
    }

    let filter = match (&s.ui.typing, s.ui.filter.is_empty()) {
        (Some(typing), _) => format!("  filter: {typing}_"),
        (None, false) => format!("  filter: {}", s.ui.filter),
        (None, true) => String::new(),
    };
    let line = format!(
        "q quit  tab/1-4 pane  s sort: {}  n top {}: {}  / filter{filter}",
        s.ui.sort.label(),
        view::TOP_N,
        if s.ui.top_n { "on" } else { "off" },
    );
    f.render_widget(Paragraph::new(line).style(accent(Color::DarkGray)), keys);
}

/// Each column as wide as its widest cell (a name at most 60 columns).
fn widths(t: &view::Table) -> Vec<Constraint> {
    (0..t.header.len())
        .map(|i| {
            let widest = t
                .rows
                .iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .chain([t.header[i].len()])
                .max()
                .unwrap_or(0);
            Constraint::Length(widest.min(60) as u16)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    /// The screen as text, row by row, trailing blanks trimmed.
    fn render(s: &Screen, w: u16, h: u16) -> Vec<String> {
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

    #[test]
    fn the_running_pane_on_a_small_terminal() {
        let snapshot = crate::top::view::tests_support::snapshot();
        let ui = Ui::default();
        let screen = render(
            &Screen {
                snapshot: Some(&snapshot),
                ui: &ui,
                note: None,
                colour: false,
            },
            72,
            7,
        );
        assert_eq!(
            screen,
            [
                "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
                " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads",
                "Thread Running now Elapsed",
                "main   solve       1.50 s",
                "         residual  2.0 µs",
                "",
                "q quit  tab/1-4 pane  s sort: total  n top 10: off  / filter",
            ]
        );
    }

    #[test]
    fn the_call_graph_pane_starts_at_the_program() {
        let snapshot = crate::top::view::tests_support::snapshot();
        let ui = Ui {
            pane: Pane::Graph,
            ..Ui::default()
        };
        let screen = render(
            &Screen {
                snapshot: Some(&snapshot),
                ui: &ui,
                note: None,
                colour: false,
            },
            72,
            9,
        );
        // As the report's `Performance Graph:`: the program first, its total the run's wall time.
        assert_eq!(
            screen,
            [
                "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1",
                " 1 Running │ 2 Call graph │ 3 Heaviest sections │ 4 Threads",
                "Section      Calls Running Self(s) Total(s) %",
                "demo         1             0.500   4.000    100.0",
                "  solve      2     1       1.000   3.000    75.0",
                "    residual 1000          2.000   2.000    50.0",
                "  assemble   5000          0.500   0.500    12.5",
                "",
                "q quit  tab/1-4 pane  s sort: total  n top 10: off  / filter",
            ]
        );
    }

    #[test]
    fn an_exited_process_keeps_its_last_snapshot_and_says_so() {
        let snapshot = crate::top::view::tests_support::snapshot();
        let ui = Ui {
            pane: Pane::Graph,
            typing: Some("res".into()),
            ..Ui::default()
        };
        let screen = render(
            &Screen {
                snapshot: Some(&snapshot),
                ui: &ui,
                note: Some("process 42 exited"),
                colour: true,
            },
            90,
            8,
        );
        assert!(screen[0].ends_with("process 42 exited"), "{screen:#?}");
        assert!(screen[3].starts_with("demo "), "{screen:#?}");
        assert!(screen[4].starts_with("  solve "), "{screen:#?}");
        assert!(screen[5].starts_with("    residual "), "{screen:#?}");
        assert!(screen[7].ends_with("filter: res_"), "{screen:#?}");
    }
}
