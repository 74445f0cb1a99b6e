//! Writing to stderr without ever blocking, crashing or interleaving: the runtime's only way out.

use std::io::Write;

/// Writes one warning line to stderr; errors (closed stderr, EPIPE) are ignored.
pub(crate) fn warn(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Writes a block of whole lines to stderr from the background thread (reports, interval statistics),
/// ending any open live-print line first so a live line is never split; live print then says `Still` for
/// sections it prints again.
#[allow(dead_code)] // reason: the reports (issue 4) are its first caller.
pub(crate) fn write_block(text: &str) {
    crate::live::screen::write_other(text);
}
