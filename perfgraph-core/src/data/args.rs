//! The values a call or an event records with it (`#[timed(args(tile))]`,
//! `time_section!("load", args(bytes = n))`, `event!("saved", args(file = path.display()))`): integers,
//! floats and bools as such, anything else as its `Display` text, formatted only when an output needs it.

use std::fmt;

/// Most args one call site records; the macros refuse more.
pub const MAX_ARGS: usize = 8;

/// Longest text an arg keeps, bytes: a longer `Display` text is cut at a character boundary at or below
/// it and ends in `…`, so an event with all its args escaped still fits in a trace's 4 KiB page.
pub const MAX_ARG_TEXT: usize = 192;

/// One recorded value.
///
/// ```
/// use perfgraph_core::data::ArgValue;
///
/// assert_eq!(ArgValue::Int(-3).to_string(), "-3");
/// assert_eq!(ArgValue::Text("mesh.exo".into()).to_string(), "mesh.exo");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ArgValue {
    /// A signed integer (`i8` to `i64`, `isize`).
    Int(i64),
    /// An unsigned integer (`u8` to `u64`, `usize`).
    Uint(u64),
    /// A float (`f32`, `f64`).
    Float(f64),
    /// A bool.
    Bool(bool),
    /// Anything else, through its `Display` (at most [`MAX_ARG_TEXT`] bytes).
    Text(String),
}

impl fmt::Display for ArgValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgValue::Int(v) => write!(f, "{v}"),
            ArgValue::Uint(v) => write!(f, "{v}"),
            ArgValue::Float(v) => write!(f, "{v}"),
            ArgValue::Bool(v) => write!(f, "{v}"),
            ArgValue::Text(v) => f.write_str(v),
        }
    }
}

impl ArgValue {
    /// `text`, its control characters each replaced by `�` (a terminal, a JSON string and a trace
    /// viewer show it as one character), cut to [`MAX_ARG_TEXT`] bytes.
    pub(crate) fn text(mut text: String) -> ArgValue {
        if text.chars().any(char::is_control) {
            text = text
                .chars()
                .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                .collect();
        }
        if text.len() > MAX_ARG_TEXT {
            let mut cut = MAX_ARG_TEXT - '…'.len_utf8();
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        ArgValue::Text(text)
    }
}

/// `template` with each `{name}` replaced by the value of the arg `name` (`{{` and `}}` are braces); a
/// placeholder naming no arg in `args` stays as written. The macros check at compile time that every
/// placeholder names an arg.
pub(crate) fn fill_message(template: &str, args: &[(&str, ArgValue)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let (brace, after) = (rest.as_bytes()[i], &rest[i + 1..]);
        if after.as_bytes().first() == Some(&brace) {
            out.push(brace as char);
            rest = &after[1..];
            continue;
        }
        if brace == b'{'
            && let Some(end) = after.find('}')
            && let Some((_, value)) = args.iter().find(|(name, _)| *name == &after[..end])
        {
            use std::fmt::Write;
            let _ = write!(out, "{value}");
            rest = &after[end + 1..];
            continue;
        }
        out.push(brace as char);
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{ArgValue, MAX_ARG_TEXT, fill_message};

    #[test]
    fn control_characters_are_replaced() {
        assert_eq!(
            ArgValue::text("a\x1b[31mb\n".into()),
            ArgValue::Text("a\u{fffd}[31mb\u{fffd}".into())
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        let ArgValue::Text(t) = ArgValue::text("é".repeat(400)) else {
            unreachable!()
        };
        assert!(t.len() <= MAX_ARG_TEXT && t.ends_with('…'), "{t}");
        assert_eq!(
            ArgValue::text("short".into()),
            ArgValue::Text("short".into())
        );
    }

    #[test]
    fn placeholders_are_filled_and_braces_unescaped() {
        let args = [
            ("level", ArgValue::Uint(2)),
            ("mesh", ArgValue::Text("a.exo".into())),
        ];
        assert_eq!(
            fill_message("Refining {mesh} to level {level}", &args),
            "Refining a.exo to level 2"
        );
        assert_eq!(fill_message("{{level}}", &args), "{level}");
        assert_eq!(fill_message("{unknown} {", &args), "{unknown} {");
        assert_eq!(fill_message("}x", &args), "}x");
    }
}
