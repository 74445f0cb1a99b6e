//! Names made safe for a terminal and a table: control characters shown escaped, widths counted in
//! terminal columns (a CJK character or an emoji takes two), and long names cut with `…`. Used by the
//! report tables and live print; the JSON and the trace keep names whole. Live print's lines made plain
//! (no terminal controls) for the trace's markers.

use std::borrow::Cow;

use unicode_width::UnicodeWidthStr;

/// `s` with every control character escaped (`\n`, `\r`, `\t`, `\x1b`, `\u{85}`), so a name can neither
/// break a line nor send the terminal a command. Borrowed when there is nothing to escape.
///
/// ```
/// use perfgraph_core::text::escape;
///
/// assert_eq!(escape("solve"), "solve");
/// // A terminal's title set by a name: shown, not obeyed.
/// assert_eq!(escape("\u{1b}]2;PWNED\u{7}x"), "\\x1b]2;PWNED\\x07x");
/// ```
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Columns `s` takes on a terminal (`s` holds no control characters: [`escape`] it first).
pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` cut to at most `max` columns, ending in `…` when it was cut.
pub fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    Cow::Owned(out)
}

/// `s` with each character that `table` lists replaced by the text it gives for it, the others kept: a
/// format's escapes (HTML's entities, the backslashes of a Prometheus label value).
pub(crate) fn replace_chars(s: &str, table: &[(char, &str)]) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match table.iter().find(|(from, _)| *from == c) {
            Some((_, to)) => out.push_str(to),
            None => out.push(c),
        }
    }
    out
}

/// `n` and `noun`, singular for one: `1 call`, `2 calls` (`noun` makes its plural with an `s`).
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// The lines of live print's `text` without terminal controls (colours, carriage returns) or the padding
/// that aligns its columns (runs of spaces become one), empty ones left out.
pub(crate) fn plain_lines(text: &str) -> Vec<String> {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            // CSI: `ESC [` parameters, then a final byte in `@`..=`~`.
            '\u{1b}' => {
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\r' => plain.push('\n'),
            c => plain.push(c),
        }
    }
    plain
        .split('\n')
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("plain"), "plain");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a\nb\tc\x1b[31m\u{85}"), "a\\nb\\tc\\x1b[31m\\u{85}");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("網格"), 4);
        assert_eq!(width("🚀x"), 3);
    }

    #[test]
    fn long_names_are_cut_to_the_limit_with_an_ellipsis() {
        assert_eq!(fit("short", 10), "short");
        assert_eq!(fit("abcdefghijkl", 6), "abcde…");
        assert_eq!(width(&fit("abcdefghijkl", 6)), 6);
        // A wide character that would cross the limit is left out whole.
        assert_eq!(fit("ab網格網格", 6), "ab網…");
        assert!(width(&fit("ab網格網格", 6)) <= 6);
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(count(1u64, "call"), "1 call");
        assert_eq!(count(0u64, "call"), "0 calls");
        assert_eq!(count(2u32, "call path"), "2 call paths");
    }

    #[test]
    fn printed_lines_lose_their_colours() {
        assert_eq!(
            plain_lines("\u{1b}[2mSolving\u{1b}[0m...\n\r  done     1.2 s\n\n"),
            ["Solving...", "done 1.2 s"]
        );
    }
}
