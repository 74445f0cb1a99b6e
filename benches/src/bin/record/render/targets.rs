//! The targets table, with a note when the run's two-thread wall times cannot be trusted, and what limits
//! the enabled cost.

use std::fmt::Write as _;

use perfgraph_benches::ids::{case, group, process};
use perfgraph_benches::layer_rounds::Summary;
use perfgraph_benches::stats::median;

use super::fmt::{self, check};
use super::rows::{Kind, ROWS};
use crate::measure::layer::LayerRounds;
use crate::measure::layouts::Layouts;
use crate::measure::results::Results;

/// Writes the targets table and, if the floors show that the two workers shared their cores with other
/// work, the note that the two-thread wall times are not valid. `layer` is the `TracingLayer` rounds, if
/// measured; `exit_added` is the whole-process time perfgraph adds (ms), if the demo was measured.
pub fn write(
    doc: &mut String,
    r: &Results,
    layouts: &Layouts,
    layer: Option<&LayerRounds>,
    exit_added: Option<f64>,
) {
    let _ = writeln!(
        doc,
        "## Targets (2-core machine)\n\n| Target | Measured | |\n|---|---|---|"
    );
    enabled_rows(doc, r);
    async_rows(doc, r, layer);
    annotation_rows(doc, r);
    disabled_rows(doc, r, layouts);
    let disturbed = two_thread_disturbance(r);
    two_thread_rows(doc, r, disturbed.is_some());
    let _ = writeln!(
        doc,
        "| process exit latency added < 5 ms | {} | {} |\n",
        exit_added.map_or("—".into(), |v| format!(
            "{v:.2} ms (median whole-process time, instrumented − compiled out)"
        )),
        check(exit_added.map(|v| v < 5.0))
    );

    if let Some(slowdown) = disturbed {
        let _ = writeln!(
            doc,
            "**The wall-time two-thread figures of this run are not valid:** the floors themselves ran\n\
             {slowdown:.2}× slower per thread on two threads than on one, so the two workers did not each have a\n\
             core to themselves (other work on the machine). The thread-CPU-time figures below do not count\n\
             time taken by other processes; for the wall-time ones, run `benches/run.sh` on a quiet machine.\n"
        );
    }
}

/// The enabled cost against a pair of `Instant::now()` (wall and CPU time) and against the peers.
fn enabled_rows(doc: &mut String, r: &Results) {
    let pg1 = r.added(process::MAIN, group::ONE_THREAD, case::PERFGRAPH_ENABLED);
    let instant = r.added(process::MAIN, group::ONE_THREAD, case::INSTANT_PAIR);
    let ratio = pg1.zip(instant).map(|(p, i)| p / i);
    let _ = writeln!(
        doc,
        "| enabled ≤ 0.5 × a pair of `Instant::now()` | {} ns vs {} ns: {} | {} |",
        fmt::ns(pg1),
        fmt::ns(instant),
        fmt::ratio(ratio),
        check(ratio.map(|x| x <= 0.5))
    );
    let cpu_pg = r.added(
        process::MAIN,
        group::CPU_ONE_THREAD,
        case::PERFGRAPH_ENABLED,
    );
    let cpu_instant = r.added(process::MAIN, group::CPU_ONE_THREAD, case::INSTANT_PAIR);
    let cpu_ratio = cpu_pg.zip(cpu_instant).map(|(p, i)| p / i);
    let _ = writeln!(
        doc,
        "| the same, both timed again in thread CPU time | {} ns vs {} ns: {} | {} |",
        fmt::ns(cpu_pg),
        fmt::ns(cpu_instant),
        fmt::ratio(cpu_ratio),
        check(cpu_ratio.map(|x| x <= 0.5))
    );
    let cheapest_peer = cheapest_peer(r);
    let _ = writeln!(
        doc,
        "| enabled below every peer (recording) | {} ns; cheapest peer: {} | {} |",
        fmt::ns(pg1),
        cheapest_peer
            .as_ref()
            .map_or("—".into(), |(v, l)| format!("{l}, {v:.1} ns")),
        check(pg1.zip(cheapest_peer.as_ref()).map(|(p, (c, _))| p < *c))
    );
}

/// A timed future's poll against a synchronous section, and what `TracingLayer` adds to tracing + `Registry`
/// against perfgraph's own section (one thread, wall time).
fn async_rows(doc: &mut String, r: &Results, layer: Option<&LayerRounds>) {
    let added = |id| r.added(process::MAIN, group::ONE_THREAD, id);
    let pg = added(case::PERFGRAPH_ENABLED);
    let poll = added(case::PERFGRAPH_FUTURE_POLL);
    let ratio = poll.zip(pg).map(|(p, s)| p / s);
    let _ = writeln!(
        doc,
        "| a timed future's poll ≤ 1.5 × a synchronous section | {} ns vs {} ns: {} | {} |",
        fmt::ns(poll),
        fmt::ns(pg),
        fmt::ratio(ratio),
        check(ratio.map(|x| x <= 1.5))
    );
    layer_row(doc, layer);
}

/// ThreadScope's annotations against a plain section (one thread, wall time): two integer args add at
/// most 5 ns, with no trace and recorded as a trace wants them; an uncontended lock and unlock at most 25
/// ns to std's `Mutex`; an event and a counter sample cost no more than a section.
fn annotation_rows(doc: &mut String, r: &Results) {
    let added = |id| r.added(process::MAIN, group::ONE_THREAD, id);
    let pg = added(case::PERFGRAPH_ENABLED);
    for (id, what) in [
        (
            case::PERFGRAPH_ARGS,
            "two integer args add ≤ 5 ns to a section, no trace",
        ),
        (
            case::PERFGRAPH_ARGS_TRACED,
            "the same, recorded as a trace wants them",
        ),
    ] {
        let args = added(id);
        let extra = args.zip(pg).map(|(a, s)| a - s);
        let _ = writeln!(
            doc,
            "| {what} | {} ns vs {} ns: {} ns more | {} |",
            fmt::ns(args),
            fmt::ns(pg),
            fmt::ns(extra),
            check(extra.map(|x| x <= 5.0))
        );
    }
    let std_mutex = added(case::STD_MUTEX);
    let mutex = added(case::PERFGRAPH_MUTEX);
    let extra = mutex.zip(std_mutex).map(|(m, s)| m - s);
    let _ = writeln!(
        doc,
        "| an uncontended lock + unlock adds ≤ 25 ns to std's `Mutex` | {} ns vs {} ns: {} ns more | {} |",
        fmt::ns(mutex),
        fmt::ns(std_mutex),
        fmt::ns(extra),
        check(extra.map(|x| x <= 25.0))
    );
    for (id, what) in [
        (
            case::PERFGRAPH_EVENT_TRACED,
            "an `event!` (recorded) ≤ a section",
        ),
        (case::PERFGRAPH_COUNTER, "a `counter!` sample ≤ a section"),
    ] {
        let one = added(id);
        let ratio = one.zip(pg).map(|(e, s)| e / s);
        let _ = writeln!(
            doc,
            "| {what} | {} ns vs {} ns: {} | {} |",
            fmt::ns(one),
            fmt::ns(pg),
            fmt::ratio(ratio),
            check(ratio.map(|x| x <= 1.0))
        );
    }
}

/// What `TracingLayer` adds to tracing + `Registry` against perfgraph's own section: the median of the
/// side-by-side rounds (see [`super::layer`]), not the two Criterion cases, which run seconds apart.
pub fn layer_row(doc: &mut String, layer: Option<&LayerRounds>) {
    let summary = layer.and_then(|l| Summary::of(&l.rounds));
    let measured = summary.map_or("—".into(), |s| {
        format!(
            "{} ns vs {} ns: {} (median of {} side-by-side rounds in {} processes; stacked on a no-op layer: {})",
            fmt::ns(Some(s.median.layer_added())),
            fmt::ns(Some(s.median.section())),
            fmt::ratio(Some(s.median.ratio())),
            s.rounds,
            layer.map_or(0, |l| l.processes),
            fmt::ratio(Some(s.stacked_ratio)),
        )
    });
    let _ = writeln!(
        doc,
        "| `TracingLayer` adds ≤ 2 × perfgraph's section on top of tracing + `Registry` | {measured} | {} |",
        check(summary.map(|s| s.met()))
    );
}

/// The recording peer with the lowest *added* on one thread, and its label (a section's enter + exit: not
/// the async rows, which time a future's poll).
fn cheapest_peer(r: &Results) -> Option<(f64, String)> {
    const POLLS: [&str; 2] = [case::FASTRACE_FUTURE_POLL, case::HOTPATH_FUTURE_POLL];
    ROWS.iter()
        .filter(|row| !POLLS.contains(&row.id))
        .filter(|row| {
            matches!(
                row.kind,
                Kind::Peer {
                    recording: true,
                    ..
                }
            )
        })
        .filter_map(|row| {
            Some((
                r.added(row.process, group::ONE_THREAD, row.id)?,
                row.label(),
            ))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// The off-by-verbosity cost in the main process, and its median over the short processes.
fn disabled_rows(doc: &mut String, r: &Results, layouts: &Layouts) {
    let off = r.added(
        process::MAIN,
        group::ONE_THREAD,
        case::PERFGRAPH_DISABLED_BY_VERBOSITY,
    );
    let _ = writeln!(
        doc,
        "| off by verbosity ≤ 1 ns | {} ns over an empty call | {} |",
        fmt::ns(off),
        check(off.map(|x| x <= 1.0))
    );
    let layout_median = median(layouts.aslr.clone(), |&ns| ns);
    let _ = writeln!(
        doc,
        "| the same, median over {} short processes ({}; see below) | {} ns over an empty call | {} |",
        layouts.aslr.len(),
        fmt::range(&layouts.aslr).map_or("none measured".into(), |(lo, hi)| format!(
            "each between {lo:.2} and {hi:.2} ns"
        )),
        fmt::ns(layout_median),
        check(layout_median.map(|x| x <= 1.0))
    );
}

/// Two threads against one, in thread CPU time and in wall time (not judged when `disturbed`).
fn two_thread_rows(doc: &mut String, r: &Results, disturbed: bool) {
    let pg1 = r.added(process::MAIN, group::ONE_THREAD, case::PERFGRAPH_ENABLED);
    let pg2 = r.added(process::MAIN, group::TWO_THREADS, case::PERFGRAPH_ENABLED);
    let two = pg2.zip(pg1).map(|(t, o)| t / o - 1.0);
    let cpu1 = r.added(
        process::MAIN,
        group::CPU_ONE_THREAD,
        case::PERFGRAPH_ENABLED,
    );
    let cpu2 = r.added(
        process::MAIN,
        group::CPU_TWO_THREADS,
        case::PERFGRAPH_ENABLED,
    );
    let cpu_two = cpu2.zip(cpu1).map(|(t, o)| t / o - 1.0);
    let _ = writeln!(
        doc,
        "| two threads: per-thread cost within 10% of one thread (thread CPU time) | {} ns vs {} ns: {:+.1}% | {} |",
        fmt::ns(cpu2),
        fmt::ns(cpu1),
        cpu_two.unwrap_or(f64::NAN) * 100.0,
        check(cpu_two.map(|x| x <= 0.10)),
    );
    let _ = writeln!(
        doc,
        "| the same in wall time | {} ns vs {} ns: {:+.1}% | {} |",
        fmt::ns(pg2),
        fmt::ns(pg1),
        two.unwrap_or(f64::NAN) * 100.0,
        if disturbed {
            "not valid in this run (see below)"
        } else {
            check(two.map(|x| x <= 0.10))
        }
    );
}

/// How much slower (per thread) the clock floors ran on two threads than on one, if by more than 15%: a sign
/// that the two workers shared a core with other work, which invalidates every two-thread figure of the run.
/// (Not the empty call: at 1.6 ns, a quarter of a nanosecond of noise is already 15%.)
fn two_thread_disturbance(r: &Results) -> Option<f64> {
    [case::INSTANT_PAIR, case::RAW_CLOCK_PAIR]
        .iter()
        .filter_map(|id| {
            Some(
                r.get(process::MAIN, group::TWO_THREADS, id)?
                    / r.get(process::MAIN, group::ONE_THREAD, id)?,
            )
        })
        .max_by(f64::total_cmp)
        .filter(|&ratio| ratio > 1.15)
}

/// Writes what limits the enabled cost: the clock pair's share of it, and whether the clock alone already
/// misses the target. `clock_source` is the clock perfgraph uses.
pub fn enabled_cost(doc: &mut String, r: &Results, clock_source: &str) {
    let pg1 = r.added(process::MAIN, group::ONE_THREAD, case::PERFGRAPH_ENABLED);
    let clock = r.added(process::MAIN, group::ONE_THREAD, case::RAW_CLOCK_PAIR);
    let _ = writeln!(
        doc,
        "### What limits the enabled cost\n\n\
         A recorded section reads the clock twice. With `{source}`, that pair alone costs {} ns here\n\
         ({} of perfgraph's {} ns); the rest is the call-tree update (find the child node, count the call, add\n\
         self time), the open-frame write that live print reads, and the 40-byte record pushed into the\n\
         thread's event ring. Nothing on this path locks, allocates (except at a thread's first section, a new\n\
         call path or a depth never reached before) or makes a system call, and each thread writes only its\n\
         own cache lines, so a second recording thread should not slow the first (the two-thread column\n\
         checks it). Below this, only fewer clock reads or less bookkeeping would help.\n",
        fmt::ns(clock),
        clock
            .zip(pg1)
            .map_or("—".into(), |(c, p)| format!("{:.0}%", c / p * 100.0)),
        fmt::ns(pg1),
        source = clock_source,
    );
    let instant_pair = r.added(process::MAIN, group::ONE_THREAD, case::INSTANT_PAIR);
    if let (Some(c), Some(i), Some(p)) = (clock, instant_pair, pg1) {
        let floor = c / i;
        let verdict = if floor > 0.5 {
            "so on this machine the target of 0.5× cannot be met by any design that reads the clock twice \
             per section"
        } else {
            "so the clock leaves room under the target of 0.5×"
        };
        let _ = writeln!(
            doc,
            "Against the target: the two raw clock reads alone are {floor:.2}× a pair of `Instant::now()` \
             here ({} ns vs {} ns; `Instant::now()` reads the same counter through the vDSO and scales it), \
             {verdict}; perfgraph's bookkeeping adds {} ns on top of the clock.\n",
            fmt::ns(Some(c)),
            fmt::ns(Some(i)),
            fmt::ns(Some(p - c)),
        );
    }
}
