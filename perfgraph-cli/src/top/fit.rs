//! How `perfgraph top`'s lines fit a narrow terminal without cutting a figure: a table's name columns are
//! elided with `…` (down to [`NAME_MIN`] columns), then its figure columns are dropped, the least useful
//! first; a line of items (the header, the keys) drops whole items. A number and its unit are shown whole
//! or not at all.

use std::borrow::Cow;

use ratatui::text::Span;

/// The narrowest a name column gets before a figure column is dropped.
pub const NAME_MIN: usize = 8;

/// The widest a name column gets.
pub const NAME_MAX: usize = 60;

/// Columns on a terminal: `s`'s width.
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// `s` in at most `max` columns: whole, or cut with `…` as its last column.
pub fn elide(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    Cow::Owned(out)
}

/// The columns of a table shown in `avail` columns, each `(column, width)`, one blank between two.
/// `widths` are the columns' widest cells (their headings included); `keep` ranks them: 0 for a name
/// (elided, never dropped), else a figure, the lowest rank dropped first (the rightmost of equal ranks).
pub fn columns(widths: &[usize], keep: &[u8], avail: usize) -> Vec<(usize, usize)> {
    let n = widths.len();
    let name = |i: usize| keep.get(i).is_none_or(|&k| k == 0);
    let full: Vec<usize> = (0..n)
        .map(|i| {
            if name(i) {
                widths[i].min(NAME_MAX)
            } else {
                widths[i]
            }
        })
        .collect();
    let mut figures: Vec<usize> = (0..n).filter(|&i| !name(i)).collect();
    figures.sort_by_key(|&i| (keep[i], std::cmp::Reverse(i)));
    for dropped in 0..=figures.len() {
        let shown: Vec<usize> = (0..n).filter(|i| !figures[..dropped].contains(i)).collect();
        let last = dropped == figures.len();
        // With every figure dropped, the names give way to a column each.
        let floor = |i: usize| {
            if name(i) {
                full[i].min(if last { 1 } else { NAME_MIN })
            } else {
                full[i]
            }
        };
        let gaps = shown.len().saturating_sub(1);
        if shown.iter().map(|&i| floor(i)).sum::<usize>() + gaps > avail && !last {
            continue;
        }
        let mut w: Vec<usize> = shown.iter().map(|&i| full[i]).collect();
        let mut over = (w.iter().sum::<usize>() + gaps).saturating_sub(avail);
        // The widest name above its floor gives a column, until the table fits.
        while over > 0 {
            let Some(j) = (0..shown.len())
                .filter(|&j| name(shown[j]) && w[j] > floor(shown[j]))
                .max_by_key(|&j| (w[j], std::cmp::Reverse(j)))
            else {
                break;
            };
            w[j] -= 1;
            over -= 1;
        }
        return shown.into_iter().zip(w).collect();
    }
    Vec::new()
}

/// A line of items in `avail` columns, `sep` between two: the items of lowest rank dropped first (the
/// rightmost of equal ranks), in order; the one left elided if even it is too wide.
pub fn line(items: &[(String, u8)], sep: &str, avail: usize) -> String {
    let mut shown: Vec<usize> = (0..items.len()).collect();
    let joined = |shown: &[usize]| {
        shown
            .iter()
            .map(|&i| items[i].0.as_str())
            .collect::<Vec<_>>()
            .join(sep)
    };
    while shown.len() > 1 && width(&joined(&shown)) > avail {
        let drop = (0..shown.len())
            .min_by_key(|&j| (items[shown[j]].1, std::cmp::Reverse(j)))
            .unwrap_or(0);
        shown.remove(drop);
    }
    elide(&joined(&shown), avail).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_way_first_then_figures_by_rank() {
        // A name of 20, figures of 5 (rank 2), 6 (rank 1), 7 (rank 3): 20+5+6+7 and 3 blanks = 41.
        let (w, keep) = ([20, 5, 6, 7], [0, 2, 1, 3]);
        assert_eq!(columns(&w, &keep, 41), [(0, 20), (1, 5), (2, 6), (3, 7)]);
        assert_eq!(columns(&w, &keep, 30), [(0, 9), (1, 5), (2, 6), (3, 7)]);
        // The name at its floor (8) and still 2 over: the lowest rank goes, the name grows back.
        assert_eq!(columns(&w, &keep, 27), [(0, 13), (1, 5), (3, 7)]);
        assert_eq!(columns(&w, &keep, 16), [(0, 8), (3, 7)]);
        // Only the name: one column at least.
        assert_eq!(columns(&w, &keep, 5), [(0, 5)]);
        assert_eq!(elide("Simulation::solve", 8), "Simulat…");
        assert_eq!(elide("solve", 8), "solve");
    }

    #[test]
    fn a_line_drops_whole_items() {
        let items = [
            ("q quit".to_owned(), 5),
            ("tab/1-6 pane".to_owned(), 1),
            ("n top 10: off".to_owned(), 2),
        ];
        assert_eq!(
            line(&items, "  ", 40),
            "q quit  tab/1-6 pane  n top 10: off"
        );
        assert_eq!(line(&items, "  ", 22), "q quit  n top 10: off");
        assert_eq!(line(&items, "  ", 20), "q quit");
        assert_eq!(line(&items, "  ", 4), "q q…");
    }
}
