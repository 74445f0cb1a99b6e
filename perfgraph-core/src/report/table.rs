//! Text tables drawn the way MOOSE's `VariadicTable` draws them: a `-` rule, a header row with each header
//! roughly centred, a rule, the rows, a rule. One space of padding on each side of a cell; text is
//! left-justified, numbers right-justified.
//!
//! Column widths follow `VariadicTable`: the widest of the header and the cells, where a fixed-point number
//! counts as 10 characters, a percentage as 6 (`100.00`) and an integer as its digits. Where a value is wider
//! than that (a time of a million seconds, 1000%), the column grows to fit, so columns never go out of line;
//! `VariadicTable` would overflow the cell instead. Widths are terminal columns ([`text::width`]), so a
//! name in CJK or with an emoji keeps its column in line.

use crate::base::text;

use crate::base::process;

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    /// Left-justified text, already made safe for a terminal ([`text::escape`]).
    Text(String),
    /// A whole number, right-justified.
    Int(i128),
    /// A number with a fixed count of decimals, right-justified (at least 10 wide).
    Fixed(f64, usize),
    /// A percentage with 2 decimals, right-justified (at least 6 wide).
    Percent(f64),
    /// A number already formatted, right-justified.
    Number(String),
}

/// A table's headers and cells: what both the text table ([`Grid::text`]) and the HTML page's table
/// render.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    /// One per column.
    pub headers: Vec<String>,
    /// One cell per header in each row.
    pub rows: Vec<Vec<Cell>>,
}

impl Grid {
    pub(crate) fn new(headers: &[&str], rows: Vec<Vec<Cell>>) -> Grid {
        Grid {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows,
        }
    }

    /// The table as text ([`render`]).
    pub(crate) fn text(&self) -> String {
        let headers: Vec<&str> = self.headers.iter().map(String::as_str).collect();
        render(&headers, &self.rows)
    }
}

impl Cell {
    /// The cell's text, as the text table shows it (without padding).
    pub(crate) fn text(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Fixed(x, decimals) => format!("{x:.decimals$}"),
            Cell::Percent(x) => format!("{x:.2}"),
            Cell::Number(s) => s.clone(),
        }
    }

    /// The cell's figure, for sorting: None for text.
    pub(crate) fn value(&self) -> Option<f64> {
        match self {
            Cell::Text(_) => None,
            Cell::Int(n) => Some(*n as f64),
            Cell::Fixed(x, _) | Cell::Percent(x) => Some(*x),
            Cell::Number(s) => s
                .replace(',', "")
                .trim_start_matches('+')
                .trim_end_matches('%')
                .parse()
                .ok(),
        }
    }

    /// Width `VariadicTable` reserves for the cell, grown to fit the actual text.
    fn width(&self, text: &str) -> usize {
        let nominal = match self {
            Cell::Text(_) | Cell::Int(_) | Cell::Number(_) => 0,
            Cell::Fixed(..) => 10,
            Cell::Percent(_) => 6,
        };
        nominal.max(text::width(text))
    }
}

/// Renders a table. Every row has one cell per header. Reports [`process::progress`] every few thousand
/// rows.
pub(crate) fn render(headers: &[&str], rows: &[Vec<Cell>]) -> String {
    let texts: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(Cell::text).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for (i, (row, text)) in rows.iter().zip(&texts).enumerate() {
        process::progress_at(i);
        debug_assert_eq!(row.len(), headers.len());
        for ((w, cell), t) in widths.iter_mut().zip(row).zip(text) {
            *w = (*w).max(cell.width(t));
        }
    }
    let total: usize = headers.len() + 1 + widths.iter().map(|w| w + 2).sum::<usize>();
    let rule = "-".repeat(total);
    let mut out = String::with_capacity((rows.len() + 4) * (total + 1));
    out.push_str(&rule);
    out.push_str("\n|");
    for (h, &w) in headers.iter().zip(&widths) {
        // VariadicTable: `half = width / 2 - header / 2` spaces, then the header, left-justified.
        let half = w / 2 - h.chars().count() / 2;
        let centred = format!("{}{h}", " ".repeat(half));
        out.push_str(&format!(" {centred:<w$} |"));
    }
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for (i, (row, text)) in rows.iter().zip(&texts).enumerate() {
        process::progress_at(i);
        out.push('|');
        for ((cell, t), &w) in row.iter().zip(text).zip(&widths) {
            let pad = " ".repeat(w.saturating_sub(text::width(t)));
            match cell {
                Cell::Text(_) => out.push_str(&format!(" {t}{pad} |")),
                _ => out.push_str(&format!(" {pad}{t} |")),
            }
        }
        out.push('\n');
    }
    out.push_str(&rule);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variadic_table_layout() {
        let t = render(
            &["Section", "Calls", "Self(s)", "%", "Mem(MB)"],
            &[
                vec![
                    Cell::Text("app".into()),
                    Cell::Int(1),
                    Cell::Fixed(1.5, 3),
                    Cell::Percent(100.0),
                    Cell::Int(-12),
                ],
                vec![
                    Cell::Text("  solve".into()),
                    Cell::Int(123456),
                    Cell::Fixed(0.0004, 3),
                    Cell::Percent(2.5),
                    Cell::Int(3),
                ],
            ],
        );
        let expected = "\
----------------------------------------------------
| Section |  Calls |   Self(s)  |    %   | Mem(MB) |
----------------------------------------------------
| app     |      1 |      1.500 | 100.00 |     -12 |
|   solve | 123456 |      0.000 |   2.50 |       3 |
----------------------------------------------------
";
        assert_eq!(t, expected);
    }

    #[test]
    fn wide_values_widen_their_column() {
        let t = render(&["%"], &[vec![Cell::Percent(1234.5)]]);
        assert_eq!(
            t,
            "-----------\n|    %    |\n-----------\n| 1234.50 |\n-----------\n"
        );
    }
}
