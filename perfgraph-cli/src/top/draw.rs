//! `perfgraph top`'s screen, drawn from the rows of `view`: a header line (the process, its memory), the
//! panes' tabs, the table of the pane shown, a status line when there is something to say (`process 123
//! exited; showing its last snapshot`), and the keys. Colours only where the terminal may have them
//! (`NO_COLOR` unset).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::fit;
use super::view::{self, Pane, Snapshot, Ui};

/// What the screen says besides the snapshot.
pub struct Screen<'a> {
    pub snapshot: Option<&'a Snapshot>,
    pub ui: &'a Ui,
    /// The status line, above the keys: why there is no new snapshot (`process 123 exited; showing its
    /// last snapshot`), if so; its parts between `; ` are dropped whole on a narrow terminal.
    pub note: Option<&'a str>,
    /// Colours allowed.
    pub colour: bool,
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, s: &Screen) {
    let [head, tabs, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(u16::from(s.note.is_some())),
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
    let header = match s.snapshot {
        Some(snapshot) => fit::line(&view::header_items(snapshot), "  ", head.width.into()),
        None => "perfgraph top".to_owned(),
    };
    let bold = Style::default().add_modifier(Modifier::BOLD);
    f.render_widget(Paragraph::new(Span::styled(header, bold)), head);
    if let Some(note) = s.note {
        // Its parts (`process 42 exited; showing its last snapshot`) whole, the first kept longest.
        let parts: Vec<(String, u8)> = (note.split("; ").enumerate())
            .map(|(i, p)| (p.to_owned(), u8::MAX - i.min(200) as u8))
            .collect();
        let line = fit::line(&parts, "; ", status.width.into());
        let style = accent(Color::Red).add_modifier(Modifier::BOLD);
        f.render_widget(Paragraph::new(Span::styled(line, style)), status);
    }

    let highlight = accent(Color::Yellow).add_modifier(Modifier::REVERSED);
    f.render_widget(
        Paragraph::new(tab_line(s.ui.pane, tabs.width.into(), highlight)),
        tabs,
    );

    match s.snapshot {
        Some(snapshot) => {
            let t = view::table(snapshot, s.ui);
            if t.rows.is_empty() && s.ui.filter.is_empty() && !t.none.is_empty() {
                f.render_widget(Paragraph::new(t.none), body);
                return keys_line(f, s, keys);
            }
            let shown = fit::columns(&widths(&t), &t.keep, body.width.into());
            let cells = |cells: Vec<&str>| -> Row<'static> {
                Row::new(shown.iter().map(|&(i, w)| {
                    Cell::from(fit::elide(cells.get(i).copied().unwrap_or(""), w).into_owned())
                }))
            };
            let rows: Vec<Row> = t
                .rows
                .iter()
                .map(|r| cells(r.iter().map(String::as_str).collect()))
                .collect();
            let header =
                cells(t.header.clone()).style(accent(Color::Cyan).add_modifier(Modifier::BOLD));
            let widths = shown.iter().map(|&(_, w)| Constraint::Length(w as u16));
            f.render_widget(Table::new(rows, widths).header(header), body);
        }
        None => f.render_widget(Paragraph::new("waiting for the first snapshot…"), body),
    }
    keys_line(f, s, keys);
}

/// The keys, and the filter applied or being typed.
fn keys_line(f: &mut Frame, s: &Screen, keys: Rect) {
    let mut items = vec![
        ("q quit".to_owned(), 9),
        (format!("tab/1-{} pane", Pane::ALL.len()), 3),
        (format!("s sort: {}", s.ui.sort.label()), 5),
        (
            format!(
                "n top {}: {}",
                view::TOP_N,
                if s.ui.top_n { "on" } else { "off" }
            ),
            4,
        ),
        ("/ filter".to_owned(), 2),
    ];
    match (&s.ui.typing, s.ui.filter.is_empty()) {
        (Some(typing), _) => items.push((format!("filter: {typing}_"), 10)),
        (None, false) => items.push((format!("filter: {}", s.ui.filter), 10)),
        (None, true) => {}
    }
    let line = fit::line(&items, "  ", keys.width.into());
    let style = if s.colour {
        Style::default().fg(Color::DarkGray)
    } else {
        Style::default()
    };
    f.render_widget(Paragraph::new(line).style(style), keys);
}

/// The panes' tabs, the one shown highlighted: ` 1 Running │ 2 Call graph │ …`; where that is too wide,
/// their titles in a word (` 1 Running │ 2 Graph │ 3 Sections │ …`); where that is too, the other panes by
/// their keys only (`1 │ 2 │ 3 Heaviest sections │ 4 │ 5 │ 6`).
fn tab_line(pane: Pane, avail: usize, highlight: Style) -> Line<'static> {
    let selected = Pane::ALL.iter().position(|&p| p == pane).unwrap_or(0);
    let style = |i: usize| {
        if i == selected {
            highlight
        } else {
            Style::default()
        }
    };
    for title in [Pane::title, Pane::short] {
        let titles: Vec<String> = (Pane::ALL.iter().enumerate())
            .map(|(i, &p)| format!("{} {}", i + 1, title(p)))
            .collect();
        if titles.iter().map(|t| fit::width(t) + 3).sum::<usize>() - 1 > avail {
            continue;
        }
        let mut spans = Vec::new();
        for (i, title) in titles.into_iter().enumerate() {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(title, style(i)));
            let last = i + 1 == Pane::ALL.len();
            spans.push(Span::raw(if last { " " } else { " │" }));
        }
        return Line::from(spans);
    }
    let titles: Vec<String> = (Pane::ALL.iter().enumerate())
        .map(|(i, p)| format!("{} {}", i + 1, p.title()))
        .collect();
    let mut spans = Vec::new();
    // The other panes' keys and the dividers (4 columns each), then what is left for the title shown.
    let others = (Pane::ALL.len() - 1) * 4;
    for (i, title) in titles.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(" │ "));
        }
        if i == selected {
            let title = fit::elide(title, avail.saturating_sub(others).max(1)).into_owned();
            spans.push(Span::styled(title, highlight));
        } else {
            spans.push(Span::raw((i + 1).to_string()));
        }
    }
    Line::from(spans)
}

/// Each column as wide as its widest cell, its heading included.
fn widths(t: &view::Table) -> Vec<usize> {
    (0..t.header.len())
        .map(|i| {
            t.rows
                .iter()
                .map(|r| r.get(i).map_or(0, |c| fit::width(c)))
                .chain([fit::width(t.header[i])])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::golden::render;

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
                "1 Running │ 2 │ 3 │ 4 │ 5 │ 6 │ 7",
                "Thread Running now Elapsed",
                "main   solve       1.50 s",
                "         residual  2.0 µs",
                "",
                "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter",
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
                "1 │ 2 Call graph │ 3 │ 4 │ 5 │ 6 │ 7",
                "Section      Calls Running Self(s) Total(s) %",
                "demo         1             0.500   4.000    100.0",
                "  solve      2     1       1.000   3.000    75.0",
                "    residual 1000          2.000   2.000    50.0",
                "  assemble   5000          0.500   0.500    12.5",
                "",
                "q quit  tab/1-7 pane  s sort: total  n top 10: off  / filter",
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
        let note = "process 42 exited; showing its last snapshot";
        let screen = |w| {
            render(
                &Screen {
                    snapshot: Some(&snapshot),
                    ui: &ui,
                    note: Some(note),
                    colour: true,
                },
                w,
                9,
            )
        };
        // A line of its own above the keys, whole; on a narrow terminal, its first part whole.
        let wide = screen(90);
        assert_eq!(wide[0], "demo (pid 42)  up 4.00 s  rss 12.5 MB  threads 1");
        assert!(wide[3].starts_with("demo "), "{wide:#?}");
        assert!(wide[4].starts_with("  solve "), "{wide:#?}");
        assert!(wide[5].starts_with("    residual "), "{wide:#?}");
        assert_eq!(wide[7], note);
        assert!(wide[8].ends_with("filter: res_"), "{wide:#?}");
        let narrow = screen(40);
        assert_eq!(narrow[7], "process 42 exited");
        assert!(narrow[8].ends_with("filter: res_"), "{narrow:#?}");
    }
}
