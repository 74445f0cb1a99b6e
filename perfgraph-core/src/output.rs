//! Writing to stderr without ever blocking, crashing or interleaving: the runtime's only way out.

use std::io::Write;

/// Writes one warning line to stderr; errors (closed stderr, EPIPE) are ignored.
pub(crate) fn warn(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}
