//! Writing an output file at exit, complete or not at all, so the exit handler can give up on a stuck one
//! and remove what it left.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::base::process;

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
    process::progress();
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

/// A file that reports each write it completes as progress of the final pass ([`process::progress`]):
/// behind the 1 MiB buffer, that is once per MiB.
struct Progress(std::fs::File);

impl Write for Progress {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        process::progress();
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unwritable_path_is_one_line_naming_it_and_the_os_error() {
        let err = super::write_file(
            "PERFGRAPH_JSON",
            std::path::Path::new("/nonexistent-dir/x.json"),
            |w| w.write_all(b"{}"),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "perfgraph: error: cannot write PERFGRAPH_JSON file \"/nonexistent-dir/x.json\": No such file or directory (os error 2)"
        );
    }

    #[test]
    fn a_failed_write_leaves_neither_a_truncated_file_nor_a_temporary_one() {
        let dir = std::env::temp_dir().join(format!("perfgraph-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        std::fs::write(&path, "old").unwrap();
        let err = super::write_file("PERFGRAPH_TRACE", &path, |w| {
            w.write_all(b"{\"traceEvents\":[")?;
            Err(std::io::Error::other("cut short"))
        })
        .unwrap_err();
        assert!(err.ends_with(": cut short"), "{err}");
        // The old file is untouched and nothing else is left behind.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        super::write_file("PERFGRAPH_TRACE", &path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
