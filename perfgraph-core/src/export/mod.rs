//! File exports written at exit: the Chrome trace ([`chrome`]), folded stacks ([`folded`]) and the call-tree
//! JSON ([`json`]). Each renderer is a pure function of its data; this module only puts text in files.

pub(crate) mod chrome;
pub(crate) mod folded;
pub(crate) mod json;

use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes a file through `fill`. On failure returns the one line to print: the variable, the path and the
/// OS error, e.g. `perfgraph: error: cannot write PERFGRAPH_TRACE file "/x/t.json": No such file or
/// directory (os error 2)`.
pub(crate) fn write_file(
    variable: &str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let result = std::fs::File::create(path).and_then(|file| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        fill(&mut out)?;
        out.flush()
    });
    result.map_err(|e| {
        format!(
            "perfgraph: error: cannot write {variable} file {:?}: {e}",
            path.display().to_string()
        )
    })
}

#[cfg(test)]
mod tests;
