//! The streamed trace: bytes per call, the highest lossless rate, the cost on the recording threads and
//! the long run.

use std::fmt::Write as _;

use crate::measure::trace::{Run, TraceFigures};

/// perfgraph-core's `BUDGET_NS` (`collector::compress`), in ms: what `auto` may spend a second.
const BUDGET_MS: u64 = 150;

/// The section's heading, which [`replace`] finds.
const HEADING: &str = "## Streamed trace (`PERFGRAPH_TRACE`)";

/// `doc` with its trace section replaced by one for `t` (appended if it has none).
pub fn replace(doc: &str, t: &TraceFigures) -> String {
    let mut section = String::new();
    write(&mut section, t);
    super::fmt::replace_section(doc, HEADING, &section)
}

fn per_call(run: &Run) -> String {
    let kept = run.made.saturating_sub(run.lost);
    if run.bytes == 0 || kept == 0 {
        return "—".into();
    }
    format!("{:.1}", run.bytes as f64 / kept as f64)
}

fn millions(n: f64) -> String {
    format!("{:.2} M", n / 1e6)
}

fn mb(bytes: f64) -> String {
    format!("{:.1}", bytes / 1e6)
}

/// The highest rate of the ladder at which `pick` lost nothing, below the first that lost.
fn lossless(t: &TraceFigures, pick: fn(&crate::measure::trace::Rung) -> &[Run; 2]) -> String {
    let mut best = None;
    for rung in &t.ladder {
        if pick(rung).iter().any(|r| r.lost > 0) {
            break;
        }
        best = Some(rung.rate);
    }
    match best {
        Some(rate) => format!("{} sections/s", millions(rate as f64)),
        None => "below the ladder's lowest rung".into(),
    }
}

/// Writes the section.
pub fn write(doc: &mut String, t: &TraceFigures) {
    let _ = writeln!(
        doc,
        "{HEADING}\n\n\
         Child processes of `record` (`record --trace-child RATE SECONDS 2`): two threads named `rec-0` and\n\
         `rec-1` each record a one-section leaf at RATE sections a second, spinning between sections (so each\n\
         keeps a core busy and the background thread competes with them for the 2 cores), with\n\
         `PERFGRAPH_TRACE` set to a `.json` (Chrome JSON) or a `.pftrace` (Perfetto protobuf) file. A call is\n\
         lost when the trace lacks it: the trace's stderr line states the losses, per thread and in total.\n\
         `benches/run.sh` measures this with the rest of the record; `record --trace-only docs/performance.md\n\
         DIR` measures this section alone and puts it in place of the one in the file.\n"
    );
    if t.ladder.is_empty() {
        let _ = writeln!(doc, "Not measured in this run.\n");
        return;
    }
    ladder(doc, t);
    deflation(doc, t);
    cost(doc, t);
    long_run(doc, t);
}

/// The ladder of rates: each rung's two runs in each format, and the highest lossless rate of each.
fn ladder(doc: &mut String, t: &TraceFigures) {
    let _ = writeln!(
        doc,
        "### Lossless rate and bytes per call ({}-second runs, each twice)\n\n\
         | Rate per thread | load average | Chrome: calls made | lost | bytes per call | Perfetto: calls made | lost | bytes per call |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|",
        crate::measure::trace::RUNG_SECONDS
    );
    for r in &t.ladder {
        for i in 0..2 {
            let lost = |run: &Run| {
                if run.lost == 0 {
                    "0".to_owned()
                } else {
                    format!("{} ({})", run.lost, run.lost_per_thread)
                }
            };
            let (chrome, perfetto) = (&r.chrome[i], &r.perfetto[i]);
            let _ = writeln!(
                doc,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                if i == 0 {
                    millions(r.rate as f64)
                } else {
                    String::new()
                },
                if i == 0 {
                    format!("{:.2}", r.load)
                } else {
                    String::new()
                },
                chrome.made,
                lost(chrome),
                per_call(chrome),
                perfetto.made,
                lost(perfetto),
                per_call(perfetto),
            );
        }
    }
    let _ = writeln!(
        doc,
        "\nHighest lossless rate per thread, two threads at once: **Chrome JSON {}, Perfetto {}** (the\n\
         highest rung below the first where a run lost calls; a rung counts only if both its runs lost\n\
         nothing). The rungs stop at the first where every run lost calls. The load average is other work\n\
         on the same 2 cores, which takes CPU time from the background thread: the lossless rate is lower\n\
         on a busier machine. Bytes per call include the file's header, names and memory counter, over the\n\
         calls kept.\n",
        lossless(t, |r| &r.chrome),
        lossless(t, |r| &r.perfetto),
    );
}

/// The Perfetto trace with deflation off, on and `auto`, and what deflating costs; nothing if not
/// measured.
fn deflation(doc: &mut String, t: &TraceFigures) {
    if !t.deflate.is_empty() {
        let _ = writeln!(
            doc,
            "### Deflation of the Perfetto trace ({} sections/s per thread, {}-second runs)\n\n\
             `PERFGRAPH_TRACE_COMPRESS`: `off` writes raw packets, `on` deflates every packet into\n\
             `compressed_packets` bundles, `auto` (the default, as in the table above) deflates for at most\n\
             {} ms of the background thread's time a second. Other CPU ns per section is the process's CPU time\n\
             outside the recording threads (the background thread, mostly), per section; its growth from `off`\n\
             is what deflation costs.\n\n\
             | `PERFGRAPH_TRACE_COMPRESS` | calls made | lost | bytes per call | other CPU ns per section | deflation ns per call |\n\
             |---|---:|---:|---:|---:|---:|",
            millions(crate::measure::trace::DEFLATE_RATE as f64),
            crate::measure::trace::RUNG_SECONDS,
            BUDGET_MS,
        );
        let off = t
            .deflate
            .iter()
            .find(|(m, _)| *m == "off")
            .map(|(_, r)| r.other_cpu_ns_per_section);
        for (mode, run) in &t.deflate {
            let cost = match off {
                Some(off) if *mode != "off" => format!("{:.1}", run.other_cpu_ns_per_section - off),
                _ => "—".into(),
            };
            let _ = writeln!(
                doc,
                "| `{mode}` | {} | {} | {} | {:.1} | {cost} |",
                run.made,
                run.lost,
                per_call(run),
                run.other_cpu_ns_per_section,
            );
        }
        doc.push('\n');
    }
}

/// The recording threads' CPU time per section with no trace and with each format; nothing if not
/// measured.
fn cost(doc: &mut String, t: &TraceFigures) {
    if let Some([none, chrome, perfetto]) = &t.cost {
        let _ = writeln!(
            doc,
            "### Cost on the recording threads (2 threads as fast as they go, 2 s)\n\n\
             The recording threads' own CPU time (`CLOCK_THREAD_CPUTIME_ID`) per section, and the rest of the\n\
             process's CPU time per section (the background thread draining, encoding and writing).\n\n\
             | Trace | sections/s per thread | recording thread CPU ns per section | vs no trace | other CPU ns per section | calls lost |\n\
             |---|---:|---:|---:|---:|---:|"
        );
        for (name, run) in [
            ("none", none),
            ("Chrome JSON", chrome),
            ("Perfetto", perfetto),
        ] {
            let _ = writeln!(
                doc,
                "| {name} | {} | {:.1} | {:.2}× | {:.1} | {} |",
                millions(run.rate),
                run.cpu_ns_per_section,
                run.cpu_ns_per_section / none.cpu_ns_per_section,
                run.other_cpu_ns_per_section,
                run.lost,
            );
        }
        doc.push('\n');
    }
}

/// The long run with and without a Perfetto trace: calls kept, size and resident memory; nothing if
/// not measured.
fn long_run(doc: &mut String, t: &TraceFigures) {
    if let Some((rate, seconds, without, with)) = &t.long {
        let _ = writeln!(
            doc,
            "### A long two-thread run ({seconds} s at {} sections/s per thread, Perfetto)\n\n\
             Shorter than the issue's 110 s run; the same child without a trace is the baseline of the memory.\n\n\
             | | no trace | Perfetto trace |\n|---|---:|---:|\n\
             | calls made | {} | {} |\n\
             | calls kept in the trace | — | {} |\n\
             | trace size, MB | — | {} |\n\
             | peak resident memory (VmHWM), MB | {} | {} |\n\
             | resident memory for the trace, MB | — | {} |\n",
            millions(*rate as f64),
            without.made,
            with.made,
            with.made.saturating_sub(with.lost),
            mb(with.bytes as f64),
            mb(without.peak_kb as f64 * 1024.0),
            mb(with.peak_kb as f64 * 1024.0),
            mb((with.peak_kb as f64 - without.peak_kb as f64) * 1024.0),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{TraceFigures, replace};

    #[test]
    fn the_section_replaces_its_old_self_only() {
        let doc = "# R\n\n## A\n\na\n\n## Streamed trace (`PERFGRAPH_TRACE`)\n\nold\n\n## B\n\nb\n";
        let new = replace(doc, &TraceFigures::default());
        assert!(
            new.starts_with("# R\n\n## A\n\na\n\n## Streamed trace"),
            "{new}"
        );
        assert!(!new.contains("old"), "{new}");
        assert!(
            new.ends_with("Not measured in this run.\n\n## B\n\nb\n"),
            "{new}"
        );
        let appended = replace("# R\n", &TraceFigures::default());
        assert!(appended.contains("# R\n\n## Streamed trace"), "{appended}");
    }
}
