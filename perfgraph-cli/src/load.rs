//! Reading the inputs and writing the outputs, each failure one line naming the file.

use std::io::Write;
use std::path::Path;

use perfgraph_core::data::Report;

use crate::Failure;

/// The run in call-tree JSON file `path`, read as a stream (memory holds the report, not the text) and
/// held to the reader's limits (`Report::MAX_JSON_BYTES` and the others: `--help` states them).
pub fn run(path: &Path) -> Result<Report, Failure> {
    let file = std::fs::File::open(path).map_err(|e| open_failure(path, &e))?;
    Report::read_json(std::io::BufReader::with_capacity(1 << 16, file))
        .map_err(|e| Failure(format!("{}: {e}", path.display())))
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
    let mut out = std::io::BufWriter::new(std::fs::File::create(p).map_err(fail)?);
    render(&mut out).and_then(|()| out.flush()).map_err(fail)
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
