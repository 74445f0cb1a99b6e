//! How a subcommand fails: one line for stderr, and exit code 2 (`main`).

/// A failure: what to print (one line, naming the file) and the exit code.
#[derive(Debug)]
pub struct Failure(pub String);
