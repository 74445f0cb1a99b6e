//! The capture section: what `PERFGRAPH_CAPTURE` costs a program that floods its output.

use std::fmt::Write as _;

use crate::measure::capture::Capture;

/// The table of floods, or a line saying none was measured.
pub fn write(doc: &mut String, c: &Capture) {
    doc.push_str("## Capture of the program's output\n\n");
    if c.floods.is_empty() {
        doc.push_str("Not measured: the demo binary does not take `--flood-mb`.\n");
        return;
    }
    let runs = c.floods[0].runs;
    let _ = writeln!(
        doc,
        "The instrumented demo writes to stdout in one timed section (`perfgraph-demo --flood-mb N \
         [--lines]`, `PERFGRAPH_LIVE=off`), its stdout and stderr one pipe that `record` reads to the end: the \
         case `PERFGRAPH_CAPTURE=auto` captures. Wall time from spawn to the pipe's end, median of {runs} \
         runs of each, alternated with `PERFGRAPH_CAPTURE=off`.\n"
    );
    doc.push_str("| Written | off | auto | auto / off |\n|---|---|---|---|\n");
    for f in &c.floods {
        let what = if f.lines {
            format!("{} MB in 100-byte lines", f.mb)
        } else {
            format!("{} MB in 64 KiB writes", f.mb)
        };
        let _ = writeln!(
            doc,
            "| {what} | {:.0} ms | {:.0} ms | {:.2} |",
            f.off_ms,
            f.auto_ms,
            f.auto_ms / f.off_ms
        );
    }
}
