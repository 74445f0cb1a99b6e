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
//!
//! What the program wrote before the capture started went straight to the terminal: until its first
//! newline or `\r` under the capture, the row the cursor is on is not known ([`Partial::unknown`]). A bar
//! redrawn with `\r` makes it known again (it draws the whole row); before that, perfgraph's first text
//! starts on a fresh row only if the cursor is not at its start ([`fresh_row`]).

// The links name what only the `capture` feature builds (what the capture calls, and `MAX`, which only it
// uses).
#![cfg_attr(not(feature = "capture"), allow(rustdoc::broken_intra_doc_links))]

use std::time::{Duration, Instant};

use crate::base::sys;

/// Longest partial line kept for redrawing; past this it is not redrawn.
#[cfg(feature = "capture")]
const MAX: usize = 1024;

/// How long live print's first line waits, once the capture started on a terminal, for the program's
/// next bytes: a bar the program drew before the capture and redraws with `\r` within this is cleared and
/// drawn again below the line, instead of left frozen above it.
pub const FIRST_LINE_WAIT: Duration = Duration::from_millis(250);

/// The program's partial line, as far as perfgraph knows it.
#[derive(Debug)]
pub(crate) struct Partial {
    /// The destination is a terminal the capture forwards to: redrawing is possible.
    pub terminal: bool,
    /// The bytes since the program's last newline (up to [`MAX`]).
    bytes: Vec<u8>,
    /// Longer than [`MAX`]: what the line shows is not known.
    overflowed: bool,
    /// Since the capture started on this terminal, the program has written no newline and no `\r`: the
    /// start of the cursor's row is not known (what the program wrote before went straight out).
    unknown_since: Option<Instant>,
}

impl Partial {
    /// None known, not on a terminal.
    pub const fn new() -> Partial {
        Partial {
            terminal: false,
            bytes: Vec::new(),
            overflowed: false,
            unknown_since: None,
        }
    }

    /// The capture starts forwarding to a terminal: what is on the cursor's row now is not known.
    #[cfg(feature = "capture")]
    pub fn start_unknown(&mut self) {
        self.terminal = true;
        self.unknown_since = Some(Instant::now());
    }

    /// Whether the start of the cursor's row is not known (see [`Partial::start_unknown`]).
    pub fn unknown(&self) -> bool {
        self.unknown_since.is_some()
    }

    /// How much longer live print's first line waits for the row to be known: while the program has
    /// written no newline and no `\r` since the capture started, up to [`FIRST_LINE_WAIT`]. Bytes without
    /// either do not end the wait: a bar whose drawing the program writes in pieces (`write!` makes one
    /// `write` per piece) may have been caught in the middle of one, and its next `\r` comes soon.
    pub fn first_line_wait(&self) -> Option<Duration> {
        let since = self.unknown_since?;
        FIRST_LINE_WAIT
            .checked_sub(since.elapsed())
            .filter(|d| !d.is_zero())
    }

    /// perfgraph started its text at the start of a row of its own ([`fresh_row`]): the row is known.
    pub fn row_known(&mut self) {
        self.unknown_since = None;
    }

    /// The program's `bytes` reached the terminal.
    #[cfg(feature = "capture")]
    pub fn wrote(&mut self, bytes: &[u8]) {
        if !self.terminal {
            return;
        }
        match memchr::memrchr(b'\n', bytes) {
            Some(i) => {
                self.bytes.clear();
                self.overflowed = false;
                self.unknown_since = None;
                self.push(&bytes[i + 1..]);
            }
            None => {
                if self.unknown_since.is_some() && bytes.contains(&b'\r') {
                    // The program goes back to the row's start and draws it: from the `\r` on, the row is
                    // what it draws (what it drew there before the capture is drawn over).
                    let r = memchr::memchr(b'\r', bytes).unwrap_or(0);
                    self.bytes.clear();
                    self.overflowed = false;
                    self.unknown_since = None;
                    self.push(&bytes[r..]);
                } else {
                    self.push(bytes);
                }
            }
        }
    }

    #[cfg(feature = "capture")]
    fn push(&mut self, bytes: &[u8]) {
        if self.overflowed {
            return;
        }
        self.bytes.extend_from_slice(bytes);
        if self.bytes.len() > MAX {
            self.compact();
        }
    }

    /// A line redrawn with `\r` again and again (a bar) outgrows [`MAX`]: what it shows is kept from the
    /// latest `\r` whose drawings are as wide as every one before them (the last drawing alone, usually; the
    /// one before it too when the last is still being written, as `write!` writes a drawing in pieces, or
    /// is narrower), else it is not known.
    #[cfg(feature = "capture")]
    fn compact(&mut self) {
        let mut end = self.bytes.len();
        let mut keep = None;
        while let Some(i) = memchr::memrchr(b'\r', &self.bytes[..end]) {
            if self.bytes.len() - i > MAX {
                break;
            }
            let drawn = visible_width(&self.bytes[i..]);
            let before = visible_width(&self.bytes[..i]);
            match (drawn, before) {
                (Some(d), Some(b)) if d >= b => {
                    keep = Some(i);
                    break;
                }
                // Narrower than what is on the row: the drawing before it covers more.
                (Some(_), Some(_)) => end = i,
                _ => break,
            }
        }
        match keep {
            Some(i) => {
                self.bytes.drain(..i);
            }
            None => {
                self.overflowed = true;
                self.bytes.clear();
            }
        }
    }

    /// The bytes that redraw the partial line, if it can be redrawn on the terminal `fd`.
    pub fn redrawable(&self, fd: i32) -> Option<&[u8]> {
        if !self.terminal || self.overflowed || self.bytes.is_empty() || self.unknown() {
            return None;
        }
        let redrawn_in_place = self.bytes.contains(&b'\r');
        if !redrawn_in_place && sys::input_echoes_onto(fd) {
            return None;
        }
        let width = visible_width(&self.bytes)?;
        let cols = sys::window_cols(fd)?;
        // A line as wide as the terminal leaves the cursor on its last column (the wrap is deferred until
        // the next character): `\r` still goes back to its start.
        (width <= usize::from(cols)).then_some(&self.bytes[..])
    }
}

/// What starts perfgraph's text on a row of its own when the cursor's row is not known, on a terminal of
/// `cols` columns, as zsh's `PROMPT_SP` does: `cols` spaces, then `\r`. From the start of a row the spaces
/// fill it and leave the cursor on its last column (terminals defer the wrap until the next character),
/// and `\r` goes back to its start; from further in, they wrap onto the next row, which `\r` leaves the
/// cursor at the start of. So the program's unfinished line is kept, never written after, and a row that
/// was already fresh costs nothing but its blanks.
pub fn fresh_row(cols: u16) -> Vec<u8> {
    let mut bytes = vec![b' '; usize::from(cols)];
    bytes.push(b'\r');
    bytes
}

/// Columns the line shows: the widest of its drawings (each `\r` starts one over the last, which may have
/// been wider), or `None` if one holds a control sequence that moves the cursor (or anything but colours
/// and erasing within the line).
fn visible_width(bytes: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(bytes);
    text.split('\r').try_fold(0, |widest, drawing| {
        // A drawing that first erases the row (`ESC [ K`, `ESC [ 2 K`, as indicatif's) leaves nothing of
        // the ones before.
        let erases = ["\x1b[K", "\x1b[0K", "\x1b[2K"]
            .iter()
            .any(|e| drawing.starts_with(e));
        let widest = if erases { 0 } else { widest };
        Some(widest.max(drawn_width(drawing)?))
    })
}

/// Columns one drawing (`text`, holding no `\r`) takes.
fn drawn_width(text: &str) -> Option<usize> {
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
    Some(width)
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
        // indicatif clears the row (`ESC [ 2 K`) before each drawing: the clearing takes no column.
        assert_eq!(visible_width(b"[#  ] 1/3\r\x1b[2K[## ] 2/3"), Some(9));
        assert_eq!(visible_width(b"wider before\rnarrow"), Some(12));
        assert_eq!(visible_width(b"wider before\r\x1b[2Knarrow"), Some(6));
    }

    #[test]
    #[cfg(feature = "capture")]
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

    /// The row a terminal shows for `bytes` (printable text and `\r` only).
    #[cfg(feature = "capture")]
    fn row(bytes: &[u8]) -> String {
        let mut row: Vec<u8> = Vec::new();
        let mut col = 0;
        for &b in bytes {
            if b == b'\r' {
                col = 0;
                continue;
            }
            if col == row.len() {
                row.push(b);
            } else {
                row[col] = b;
            }
            col += 1;
        }
        String::from_utf8(row).unwrap()
    }

    /// A bar past [`MAX`] written as `write!` writes it, a piece a `write`, its pieces caught anywhere (a
    /// busy machine): what is kept shows what the terminal shows, a drawing cut short included (do_no_harm
    /// saw its bar-first shape's bar left frozen above a live line, 1 run in 100 at load 4: the compaction
    /// met a half-written drawing narrower than the one before and gave the line up as not known).
    #[test]
    #[cfg(feature = "capture")]
    fn a_bar_written_in_pieces_stays_redrawable_past_the_limit() {
        let mut p = Partial::new();
        p.terminal = true;
        let mut all = Vec::new();
        for i in 0..=60 {
            let pieces = [
                "\r[".to_owned(),
                format!("{:<12}", "#".repeat(i / 5)),
                "] ".to_owned(),
                i.to_string(),
                "/60".to_owned(),
            ];
            for piece in pieces {
                p.wrote(piece.as_bytes());
                all.extend_from_slice(piece.as_bytes());
                assert!(!p.overflowed && p.bytes.len() <= MAX, "drawing {i}");
                assert_eq!(row(&p.bytes), row(&all), "drawing {i}");
            }
        }
    }

    #[test]
    #[cfg(feature = "capture")]
    fn a_row_not_known_since_the_start_is_known_again_at_a_newline_or_a_carriage_return() {
        let mut p = Partial::new();
        p.start_unknown();
        assert!(p.unknown() && p.first_line_wait().is_some());
        p.wrote(b" 6/60");
        assert!(p.unknown(), "appended to what was there");
        assert!(
            p.first_line_wait().is_some(),
            "mid-row: a drawing written in pieces, its next carriage return may come"
        );
        assert_eq!(p.redrawable(1), None);
        p.wrote(b"\r[##] 7/60");
        assert!(!p.unknown() && p.first_line_wait().is_none());
        assert_eq!(p.bytes, b"\r[##] 7/60", "from the carriage return on");

        let mut p = Partial::new();
        p.start_unknown();
        p.wrote(b"tail\nname? ");
        assert!(!p.unknown());
        assert_eq!(p.bytes, b"name? ");
    }

    #[test]
    fn a_fresh_row_is_as_wide_as_the_terminal() {
        assert_eq!(fresh_row(4), b"    \r");
    }
}
