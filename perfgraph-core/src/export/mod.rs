//! File exports written at exit: the Chrome trace ([`chrome`]), folded stacks ([`folded`]) and the call-tree
//! JSON ([`json`]). Each renderer is a pure function of its data; this module only puts text in files.

pub(crate) mod chrome;
pub(crate) mod folded;
pub(crate) mod json;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file being written now, if any: `(variable, path asked for, temporary file)`, so an exit handler that
/// gives up on a stuck write can name it and remove the temporary file ([`abandon_current`]).
static CURRENT: Mutex<Option<(&'static str, PathBuf, Option<PathBuf>)>> = Mutex::new(None);

/// Called by the exit handler when the final pass is stuck: the file being written, with the variable that
/// named it, after removing its temporary file (`true` if there was one). `None` when no file is being
/// written.
pub(crate) fn abandon_current() -> Option<(&'static str, PathBuf, bool)> {
    // `try_lock`: the writer holds the lock only to set or clear the entry, never while writing.
    let (variable, path, temp) = CURRENT.try_lock().ok()?.take()?;
    let removed = temp.is_some_and(|t| std::fs::remove_file(t).is_ok());
    Some((variable, path, removed))
}

fn set_current(entry: Option<(&'static str, PathBuf, Option<PathBuf>)>) {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = entry;
}

/// Writes a file through `fill`. On failure returns the one line to print: the variable, the path and the
/// OS error, e.g. `perfgraph: error: cannot write PERFGRAPH_TRACE file "/x/t.json": No such file or
/// directory (os error 2)`.
///
/// A regular file is written under a temporary name in the same directory and renamed into place when
/// complete, so a write cut short (the process exit does not wait forever) never leaves a truncated file
/// under the name asked for. Anything else that exists (`/dev/stderr`, a named pipe) is written directly.
pub(crate) fn write_file(
    variable: &'static str,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    let result = if special {
        set_current(Some((variable, path.to_owned(), None)));
        write_to(path, fill)
    } else {
        let name = path
            .file_name()
            .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
        let temp = path.with_file_name(format!(".{name}.perfgraph-{}", std::process::id()));
        set_current(Some((variable, path.to_owned(), Some(temp.clone()))));
        let written = write_to(&temp, fill).and_then(|()| std::fs::rename(&temp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    };
    set_current(None);
    crate::runtime::progress();
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
    let mut out = BufWriter::with_capacity(1 << 20, Progress(file));
    fill(&mut out)?;
    out.flush()
}

/// A file that reports each write it completes as progress of the final pass ([`crate::runtime::progress`]):
/// behind the 1 MiB buffer, that is once per MiB.
struct Progress(std::fs::File);

impl Write for Progress {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        crate::runtime::progress();
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests;
