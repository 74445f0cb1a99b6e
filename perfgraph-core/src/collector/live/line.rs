//! The line grammar of live print (MOOSE's PerfGraphLivePrint): two spaces of indent per printed level, the
//! stats `[%6.2f s] [%5d MB]` with their `[` at column 89.

use crate::base::text;

/// Column (0-based) of the stats' `[` when the text before it fits.
pub const STATS_COLUMN: usize = 89;

/// Two spaces per level.
pub fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// The head of a line: `prefix` (the thread's, or the async track's), the indent of `level`, `word`
/// (`Still `, `Currently `, `Finished ` or nothing) and the message, escaped.
pub fn push_head(out: &mut String, prefix: &str, level: usize, word: &str, message: &str) {
    out.push_str(prefix);
    push_indent(out, level);
    out.push_str(word);
    out.push_str(&text::escape(message));
}

/// `prefix + indent + "Finished " + message + ending` (the caller has ended any open line); returns its
/// width.
pub fn finished_head(
    out: &mut String,
    prefix: &str,
    level: usize,
    message: &str,
    ending: &str,
) -> usize {
    let start = out.len();
    push_head(out, prefix, level, "Finished ", message);
    out.push_str(ending);
    text::width(&out[start..])
}

/// Spaces so the `[` lands at [`STATS_COLUMN`] after `width` columns, with at least one space before it.
pub fn push_padding(out: &mut String, width: usize) {
    let pad = STATS_COLUMN.saturating_sub(width).max(1);
    for _ in 0..pad {
        out.push(' ');
    }
}

/// `[  4.00 s] [   97 MB]` and the newline; the figures in yellow when `color`.
pub fn push_stats_text(out: &mut String, seconds: f64, mb: u64, color: bool) {
    let (on, off) = if color {
        ("\x1b[33m", "\x1b[39m")
    } else {
        ("", "")
    };
    out.push_str(&format!(
        "[{on}{seconds:6.2} s{off}] [{on}{mb:5} MB{off}]\n"
    ));
}
