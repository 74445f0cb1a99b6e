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
///
/// A regular file is written under a temporary name in the same directory and renamed into place when
/// complete, so a write cut short (the process exit does not wait forever) never leaves a truncated file
/// under the name asked for. Anything else that exists (`/dev/stderr`, a named pipe) is written directly.
pub(crate) fn write_file(
    variable: &str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let result = if special {
        write_to(path, fill)
    } else {
        let name = path
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
        let temp = path.with_file_name(format!(".{name}.perfgraph-{}", std::process::id()));
        let written = write_to(&temp, fill).and_then(|()| std::fs::rename(&temp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    };
    result.map_err(|e| {
        format!(
            "perfgraph: error: cannot write {variable} file {:?}: {e}",
            path.display().to_string()
        )
    })
}

fn write_to(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    fill(&mut out)?;
    out.flush()
}

#[cfg(test)]
mod tests;
