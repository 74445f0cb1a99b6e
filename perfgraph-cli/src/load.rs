//! Reading the inputs and writing the outputs, each failure one line naming the file.
//!
//! An output file (`-o`) is written as perfgraph-core writes its own (`PERFGRAPH_JSON`): under a temporary
//! name next to it, renamed over it once complete ([`Replacing`]), so a write that fails (a full disk) or is
//! cut short leaves the file that had the name as it was, and no temporary file.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use perfgraph_core::config::TraceFormat;
use perfgraph_core::data::Report;

use crate::failure::Failure;

/// The run in call-tree JSON file `path`, read as a stream (memory holds the report, not the text) and
/// held to the reader's limits (`Report::MAX_JSON_BYTES` and the others: `--help` states them).
pub fn run(path: &Path) -> Result<Report, Failure> {
    let file = std::fs::File::open(path).map_err(|e| open_failure(path, &e))?;
    Report::read_json(std::io::BufReader::with_capacity(1 << 16, file))
        .map_err(|e| Failure(format!("{}: {e}", path.display())))
}

/// The Chrome JSON trace `path`, opened for `what` (a command, for the error line) to read as a stream:
/// one line for a Perfetto protobuf trace (named as `PERFGRAPH_TRACE` chooses the format: the core's
/// rule), which it cannot read, or a file that will not open.
pub fn chrome_trace(path: &Path, what: &str) -> Result<BufReader<File>, Failure> {
    if TraceFormat::of_path(path) == TraceFormat::Perfetto {
        return Err(Failure(format!(
            "{}: a Perfetto protobuf trace: {what} reads Chrome JSON traces only (PERFGRAPH_TRACE with a \
             name not ending in .pftrace)",
            path.display()
        )));
    }
    File::open(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|e| open_failure(path, &e))
}

fn open_failure(path: &Path, e: &std::io::Error) -> Failure {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        _ => e.to_string(),
    };
    Failure(format!("{}: {what}", path.display()))
}

/// Writes what `render` writes to `output` (standard output for none or `-`), buffered.
pub fn write(
    output: Option<&Path>,
    render: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let to_stdout = output.is_none_or(|p| p.as_os_str() == "-");
    if to_stdout {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        return match render(&mut out).and_then(|()| out.flush()) {
            // A closed pipe (`| head`) is the reader's choice, not an error.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure(format!("standard output: {e}")))
            }
            _ => Ok(()),
        };
    }
    let p = output.unwrap_or(Path::new("-"));
    let fail = |e: std::io::Error| Failure(format!("{}: {e}", p.display()));
    let mut out = Replacing::new(p);
    render(&mut out).map_err(fail)?;
    out.commit().map_err(fail)
}

/// An output file written through a temporary name: created at the first write as
/// `.<name>.perfgraph-<pid>-<n>` in the file's own directory (new, not through a link, with the permission
/// bits of the file it replaces), and renamed over the file by [`commit`](Replacing::commit) once written
/// and on disk. Dropped without a commit (a failed write), the temporary file is removed; so it is when
/// SIGINT, SIGTERM or SIGHUP ends the command meanwhile. The name is followed through links to the file it
/// leads to; one that leads to something else than a regular file (`/dev/stdout`, a named pipe) is written in
/// place. An existing file we may not write is an error, as it was for a plain `open`.
pub struct Replacing {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    /// The temporary file and the file it replaces (links followed), until it is renamed (or removed).
    temp: Option<(PathBuf, PathBuf)>,
}

impl Replacing {
    /// Writes to `path` once [`commit`](Replacing::commit)ted; nothing is made before the first write.
    pub fn new(path: &Path) -> Replacing {
        Replacing {
            path: path.to_owned(),
            out: None,
            temp: None,
        }
    }

    /// Whether anything was written (a file made).
    pub fn started(&self) -> bool {
        self.out.is_some()
    }

    fn open(&mut self) -> std::io::Result<&mut BufWriter<File>> {
        if self.out.is_none() {
            let file = match std::fs::metadata(&self.path) {
                // Through its links: a regular file is replaced, anything else written in place.
                Ok(m) if !m.is_file() => File::create(&self.path)?,
                Ok(m) => {
                    let target = std::fs::canonicalize(&self.path)?;
                    self.create_temp(target, Some(m.permissions().mode() & 0o777))?
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if self.path.is_symlink() {
                        // A link to a file that does not exist yet: made where it leads, as `open` would.
                        File::create(&self.path)?
                    } else {
                        self.create_temp(self.path.clone(), None)?
                    }
                }
                Err(e) => return Err(e),
            };
            self.out = Some(BufWriter::with_capacity(1 << 16, file));
        }
        Ok(self.out.as_mut().expect("just made"))
    }

    /// Creates the temporary file for `target` (`mode`: the bits of the file it replaces) and arms the
    /// signal handlers that remove it.
    fn create_temp(&mut self, target: PathBuf, mode: Option<u32>) -> std::io::Result<File> {
        if mode.is_some() {
            // One we may not write is refused, as a plain `open` would refuse it (never truncated here).
            OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&target)?;
        }
        let dir = target
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default().as_bytes();
        let name = String::from_utf8_lossy(&name[..name.len().min(200)]).into_owned();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for n in 0..16u32 {
            let temp = dir.join(format!(
                ".{name}.perfgraph-{}-{:x}",
                std::process::id(),
                stamp.wrapping_add(n)
            ));
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(mode.unwrap_or(0o666))
                .open(&temp);
            match created {
                Ok(file) => {
                    crate::stop::remove_on_signal(&temp);
                    self.temp = Some((temp, target));
                    if let Some(mode) = mode {
                        // The umask may have cleared some of the bits.
                        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
                    }
                    return Ok(file);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(std::io::ErrorKind::AlreadyExists.into())
    }

    /// The file is complete: written out, on disk (a full disk may say so only now), and renamed over
    /// the file of that name. An output nothing was written to is made empty, as `-o` always makes one.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.open()?;
        // A stream written in place (a pipe) has nothing to sync.
        let sync = self.temp.is_some();
        if let Some(out) = &mut self.out {
            out.flush()?;
            if sync {
                out.get_ref().sync_all()?;
            }
        }
        self.out = None;
        if let Some((temp, target)) = self.temp.take() {
            let renamed = std::fs::rename(&temp, &target);
            crate::stop::disarm();
            if renamed.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            renamed?;
        }
        Ok(())
    }
}

impl Write for Replacing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.open()?.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Replacing {
    /// Not committed: the temporary file goes.
    fn drop(&mut self) {
        if let Some((temp, _)) = self.temp.take() {
            crate::stop::disarm();
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Prints `text` on standard output.
pub fn print(text: &str) -> Result<(), Failure> {
    print_bytes(text.as_bytes())
}

fn print_bytes(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure(format!("standard output: {e}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    //! A signal while an output is replaced (`crate::stop`'s handlers): each case runs in a child process
    //! (this test binary again, the case named by `STOP_CASE`), since its signal would end the test
    //! process.

    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Command;

    use super::*;
    use crate::stop::Stop;

    /// The child's side: the case `STOP_CASE` in the directory `STOP_DIR`; in the parent, nothing.
    #[test]
    fn child() {
        let (Some(case), Some(dir)) = (std::env::var_os("STOP_CASE"), std::env::var_os("STOP_DIR"))
        else {
            return;
        };
        let path = Path::new(&dir).join("out.txt");
        let mut out = Replacing::new(&path);
        out.write_all(b"partial").unwrap();
        let stop = (case == "caught").then(Stop::catch);
        // SAFETY: raise(3) with a signal number.
        unsafe { libc::raise(libc::SIGTERM) };
        // Reached only while a `Stop` catches it.
        assert_eq!(stop.as_ref().and_then(Stop::signal), Some(libc::SIGTERM));
        out.commit().unwrap();
    }

    /// Runs `case` in a child: how it ended, and what its directory holds.
    fn run(case: &str) -> (std::process::ExitStatus, Vec<String>) {
        let dir =
            std::env::temp_dir().join(format!("perfgraph-stop-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["load::tests::child", "--exact", "--test-threads=1"])
            .env("STOP_CASE", case)
            .env("STOP_DIR", &dir)
            .output()
            .unwrap()
            .status;
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let _ = std::fs::remove_dir_all(&dir);
        (status, names)
    }

    #[test]
    fn a_signal_while_an_output_is_replaced_removes_its_temporary_file_and_ends_the_process() {
        let (status, names) = run("plain");
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn a_signal_while_a_stop_catches_it_is_noted_and_the_output_completes() {
        let (status, names) = run("caught");
        assert!(status.success(), "{status:?}");
        assert_eq!(names, ["out.txt"]);
    }
}
