//! Writing to stderr without ever blocking for long, crashing or splitting a live line: the runtime's only
//! way out (all of it goes through the terminal lock in `live::screen`).

/// Writes one warning line to stderr (ending an open live line first). A stderr that is closed, fails or
/// takes nothing for 100 ms loses the line; the program goes on.
pub(crate) fn warn(line: &str) {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    crate::live::screen::write_block(&text);
}

/// Writes a block of whole lines to stderr from the background thread (reports, interval statistics),
/// ending any open live-print line first so a live line is never split; live print then says `Still` for
/// sections it prints again. Never blocks for long: what stderr does not take within 100 ms of its last
/// progress is dropped.
pub(crate) fn write_block(text: &str) {
    crate::live::screen::write_block(text);
}
