//! The program's partial line on a terminal: the bytes it wrote since its last newline (a prompt, a bar
//! redrawn with `\r`, `print!` without a newline), kept so that perfgraph, when it must print while that
//! line is open, can clear it, print its own line, and redraw it below, as indicatif's `suspend` does. Into
//! a pipe or a file nothing can be redrawn: there live print starts on a fresh line instead.
//!
//! A partial line is redrawn only when what it shows is known exactly:
//! * it fits on one row of the terminal, and holds no control sequence but colours (`ESC [ … m`) and
//!   erasing within the line (`ESC [ … K`);
//! * the terminal cannot have echoed input onto it, unless the program redraws it in place itself (it
//!   holds a `\r`): when fd 0 is that terminal with `ECHO` on, a prompt may have been answered and the
//!   cursor moved to the next row, which nothing tells the program or perfgraph. Redrawing the prompt
//!   there would show it twice; a fresh line costs a blank line at worst.

use crate::base::sys;

/// Longest partial line kept for redrawing; past this it is not redrawn.
const MAX: usize = 1024;

/// The program's partial line, as far as perfgraph knows it.
#[derive(Debug)]
pub(crate) struct Partial {
    /// The destination is a terminal the capture forwards to: redrawing is possible.
    pub terminal: bool,
    /// The bytes since the program's last newline (up to [`MAX`]).
    bytes: Vec<u8>,
    /// Longer than [`MAX`]: what the line shows is not known.
    overflowed: bool,
}

impl Partial {
    /// None known, not on a terminal.
    pub const fn new() -> Partial {
        Partial {
            terminal: false,
            bytes: Vec::new(),
            overflowed: false,
        }
    }

    /// The program's `bytes` reached the terminal.
    pub fn wrote(&mut self, bytes: &[u8]) {
        if !self.terminal {
            return;
        }
        match memchr::memrchr(b'\n', bytes) {
            Some(i) => {
                self.bytes.clear();
                self.overflowed = false;
                self.push(&bytes[i + 1..]);
            }
            None => self.push(bytes),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        self.bytes.extend_from_slice(bytes);
        if self.bytes.len() > MAX {
            self.compact();
        }
    }

    /// A line redrawn with `\r` again and again (a bar) outgrows [`MAX`]: what it shows is its last drawing
    /// (from the last `\r`) when no earlier drawing was wider, else it is not known.
    fn compact(&mut self) {
        let last = memchr::memrchr(b'\r', &self.bytes);
        let keep = last.filter(|&i| {
            let drawn = visible_width(&self.bytes[i..]);
            let before = visible_width(&self.bytes[..i]);
            matches!((drawn, before), (Some(d), Some(b)) if d >= b)
        });
        match keep {
            Some(i) if self.bytes.len() - i <= MAX => {
                self.bytes.drain(..i);
            }
            _ => {
                self.overflowed = true;
                self.bytes.clear();
            }
        }
    }

    /// The bytes that redraw the partial line, if it can be redrawn on the terminal `fd`.
    pub fn redrawable(&self, fd: i32) -> Option<&[u8]> {
        if !self.terminal || self.overflowed || self.bytes.is_empty() {
            return None;
        }
        let redrawn_in_place = self.bytes.contains(&b'\r');
        if !redrawn_in_place && sys::input_echoes_onto(fd) {
            return None;
        }
        let width = visible_width(&self.bytes)?;
        let cols = sys::window_cols(fd)?;
        (width < usize::from(cols)).then_some(&self.bytes[..])
    }
}

/// Columns the line shows from its last `\r` on, or `None` if it holds a control sequence that moves the
/// cursor (or anything but colours and erasing within the line).
fn visible_width(bytes: &[u8]) -> Option<usize> {
    let from = memchr::memrchr(b'\r', bytes).map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&bytes[from..]);
    let mut width = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.next() != Some('[') {
                    return None;
                }
                let end = chars.find(|c| ('\x40'..='\x7e').contains(c))?;
                if end != 'm' && end != 'K' {
                    return None;
                }
            }
            '\t' => width += 8,
            c if c.is_control() => return None,
            c => width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
        }
    }
    // Everything before the last `\r` was drawn over, but may be wider than what is drawn now.
    let before = String::from_utf8_lossy(&bytes[..from.saturating_sub(1)]);
    let widest_before = before
        .split('\r')
        .map(unicode_width::UnicodeWidthStr::width)
        .max()
        .unwrap_or(0);
    Some(width.max(widest_before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_of_bars_prompts_and_colours() {
        assert_eq!(visible_width(b"name? "), Some(6));
        assert_eq!(visible_width(b"\r[==>  ] 40%\r[===> ] 50%"), Some(11));
        assert_eq!(visible_width(b"\x1b[32m[==>]\x1b[0m 3%\x1b[K"), Some(8));
        assert_eq!(visible_width(b"up\x1b[1Aagain"), None, "cursor up");
        assert_eq!(visible_width(b"back\x08space"), None);
    }

    #[test]
    fn a_newline_starts_a_new_partial_line_and_long_ones_are_not_kept() {
        let mut p = Partial::new();
        p.terminal = true;
        p.wrote(b"done\nname? ");
        assert_eq!(p.bytes, b"name? ");
        p.wrote(&[b'x'; MAX]);
        assert!(p.overflowed);
        p.wrote(b"\n");
        for i in 0..100 {
            p.wrote(format!("\r[{i:3}%]").as_bytes());
        }
        assert!(!p.overflowed && p.bytes.len() <= MAX, "a bar is kept");
        assert!(p.bytes.ends_with(b"\r[ 99%]"));
        p.wrote(b"\nnext");
        assert_eq!((&p.bytes[..], p.overflowed), (&b"next"[..], false));
    }
}
