//! The text tables `diff` and `history` print: columns two spaces apart, each as wide as its widest
//! cell, the first `left` of them aligned left and the rest right; with `mark`, the last column is a
//! row's mark (`REGRESSED`, `added`), written unpadded and only where the row has one. And the lists of
//! names under them ([`list`], [`removed`]).

/// The table of `header` and `rows`, a line each.
pub fn render<const N: usize>(
    header: &[String; N],
    rows: &[[String; N]],
    left: usize,
    mark: bool,
) -> String {
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let padded = if mark { N - 1 } else { N };
    let line = |row: &[String; N]| {
        let mut s = String::new();
        for (i, (c, w)) in row[..padded].iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < left {
                s.push_str(&format!("{c:<w$}"));
            } else {
                s.push_str(&format!("{c:>w$}"));
            }
        }
        if mark && !row[N - 1].is_empty() {
            s.push_str(&format!("  {}", row[N - 1]));
        }
        s.push('\n');
        s
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// The first 10 of `names`, and how many more there are.
pub fn list(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut s = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", and {} more", names.len() - SHOWN));
    }
    s
}

/// Both diffs' `Removed:` line for the sections (call paths, `by_path`) of the base not in the head;
/// nothing when there are none.
pub fn removed(names: &[String], by_path: bool, fail_on_removed: bool) -> String {
    if names.is_empty() {
        return String::new();
    }
    format!(
        "Removed: {} {} of the base {} not in the head: {}{}.\n",
        names.len(),
        match (by_path, names.len()) {
            (true, 1) => "call path",
            (true, _) => "call paths",
            (false, 1) => "section",
            (false, _) => "sections",
        },
        if names.len() == 1 { "is" } else { "are" },
        list(names),
        if fail_on_removed {
            " (--fail-on-removed: this fails the diff)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_a_mark_follows_only_where_there_is_one() {
        let s = |v: &str| v.to_owned();
        let header = [s("Section"), s("Base"), s("")];
        let rows = [
            [s("solve"), s("812.402"), s("REGRESSED")],
            [s("a"), s("1.0"), s("")],
        ];
        assert_eq!(
            render(&header, &rows, 1, true),
            "Section     Base\nsolve    812.402  REGRESSED\na            1.0\n"
        );
        let rows = [[s("ab"), s("c"), s("1")]];
        assert_eq!(
            render(&[s("x"), s("y"), s("z")], &rows, 2, false),
            "x   y  z\nab  c  1\n"
        );
    }
}
