//! How the `TracingLayer` target is measured (side-by-side rounds), with each case's median and the spread
//! of the rounds' ratios.

use std::fmt::Write as _;

use perfgraph_benches::layer_rounds::{DEFAULT_ROUNDS, ROUNDS_VAR, Summary, TARGET_RATIO};

use super::fmt;
use crate::measure::layer::LayerRounds;

/// The section, or a line saying the rounds were not measured.
pub fn write(doc: &mut String, layer: Option<&LayerRounds>) {
    let _ = writeln!(
        doc,
        "### `TracingLayer` on tracing + `Registry`, side by side\n"
    );
    let Some((l, s)) = layer.and_then(|l| Some((l, Summary::of(&l.rounds)?))) else {
        let _ = writeln!(
            doc,
            "Not measured in this run (the peers bench gave no rounds).\n"
        );
        return;
    };
    let ratios: Vec<f64> = l.rounds.iter().map(|r| r.ratio()).collect();
    let registry: Vec<f64> = l.rounds.iter().map(|r| r.registry).collect();
    let above = ratios.iter().filter(|&&x| x > TARGET_RATIO).count();
    let _ = writeln!(
        doc,
        "The target's row is not made from the two Criterion cases of the table above, which run seconds\n\
         apart: whatever the machine's other work changes between them goes whole into their difference,\n\
         which is small next to either. `record` runs the peers bench {processes} times more with\n\
         `{ROUNDS_VAR}={DEFAULT_ROUNDS}`: {DEFAULT_ROUNDS} rounds each (after one not counted), each round timing one batch\n\
         of {calls} calls of each case below, one after the other, in an order rotated from round to round;\n\
         the {rounds} rounds of those processes are pooled. A round's ratio is what the layer\n\
         adds (with the layer − with the no-op layer) over what perfgraph's section adds (the section − the\n\
         empty call, as *added* above); the row gives the median round by that ratio. The no-op layer\n\
         stands for \"`Registry` alone\": a `Registry` with no layer never frees closed spans\n\
         (tokio-rs/tracing#900). perfgraph's layer takes its place, as users install it\n\
         (`tracing_subscriber::registry().with(TracingLayer::new())`). Stacked on top of the no-op layer it\n\
         would also pay tracing-subscriber's dispatch to a second layer, which any added layer pays: that\n\
         figure is given beside the row, not judged.\n\n\
         | Case (one thread, wall time) | ns/call, median over the rounds |\n|---|---:|\n\
         | empty `#[inline(never)]` call | {} |\n\
         | perfgraph, enabled | {} |\n\
         | tracing 0.1 + `Registry` + no-op layer, scoped | {} |\n\
         | the same, perfgraph `TracingLayer` in place of the no-op layer | {} |\n\
         | the same, perfgraph `TracingLayer` stacked on the no-op layer | {} |\n\n\
         The rounds' ratios were {}; {above} of {rounds} above {TARGET_RATIO:.1}. The median round: the\n\
         layer added {} ns, the section {} ns ({}). From round to round, tracing + `Registry` alone took\n\
         {} ns.\n",
        fmt::ns(Some(s.case_medians.floor)),
        fmt::ns(Some(s.case_medians.enabled)),
        fmt::ns(Some(s.case_medians.registry)),
        fmt::ns(Some(s.case_medians.layer)),
        fmt::ns(Some(s.case_medians.stacked)),
        fmt::range(&ratios).map_or("—".into(), |(lo, hi)| format!(
            "between {lo:.2}× and {hi:.2}×"
        )),
        fmt::ns(Some(s.median.layer_added())),
        fmt::ns(Some(s.median.section())),
        fmt::ratio(Some(s.median.ratio())),
        fmt::range(&registry).map_or("—".into(), |(lo, hi)| format!("{lo:.1} to {hi:.1}")),
        rounds = s.rounds,
        calls = l.calls,
        processes = l.processes,
    );
}
