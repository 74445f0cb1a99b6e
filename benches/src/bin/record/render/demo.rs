//! The demo's sections: the fine-grained loop end to end, the print thread's CPU time and the
//! whole-process time; or one line saying the demo was not measured.

use std::fmt::Write as _;

use super::fmt;
use crate::measure::demo::{CpuRun, DemoFigures, FineLoop, PrintThreadCpu, ProcessTime};

/// Writes the demo's three sections, or that the demo was not measured.
pub fn write(doc: &mut String, demo: Option<&DemoFigures>) {
    match demo {
        Some(d) => {
            fine_loop(doc, &d.fine_loop);
            print_cpu(doc, &d.print_cpu);
            process_time(doc, &d.process);
        }
        None => {
            let _ = writeln!(
                doc,
                "## Demo measurements\n\nNot measured: the demo binaries do not support `--fine-iters` yet.\n"
            );
        }
    }
}

/// The fine-grained loop's time in each build, and how much slower than compiled out.
fn fine_loop(doc: &mut String, f: &FineLoop) {
    let slow = |x: Option<f64>| {
        x.zip(f.off).map_or("—".into(), |(x, o)| {
            format!("{:+.1}%", (x / o - 1.0) * 100.0)
        })
    };
    let _ = writeln!(
        doc,
        "## The demo's fine-grained loop, end to end\n\n\
         `perfgraph-demo --fine-iters {iters}` (median of {runs} runs of the time it prints), built with and without\n\
         perfgraph-core's `enabled` feature (`--no-default-features`).\n\n\
         | Build / settings | ms | vs compiled out |\n|---|---:|---:|\n\
         | instrumented, default settings | {} | {} |\n\
         | instrumented, `PERFGRAPH_VERBOSITY=off` | {} | {} |\n\
         | compiled out | {} | — |\n",
        fmt::ns(f.on),
        slow(f.on),
        fmt::ns(f.verbosity_off),
        slow(f.verbosity_off),
        fmt::ns(f.off),
        iters = f.iters,
        runs = f.runs,
    );
}

/// The print thread's CPU time per run, and per second of run.
fn print_cpu(doc: &mut String, c: &PrintThreadCpu) {
    let source = if c.schedstat {
        "this kernel has `schedstat`, so the figures are its nanoseconds on CPU"
    } else {
        "this kernel has no `schedstat`, so the figures are `stat`'s user + system ticks, counted as 10 ms each"
    };
    let row = |run: Option<&CpuRun>| {
        run.map_or("— | — | — | —".into(), |r| {
            format!(
                "{:.1} | {:.2} | {:.2} ms/s | {:.3}%",
                r.cpu_ms,
                r.wall_ms / 1e3,
                r.cpu_ms / (r.wall_ms / 1e3),
                r.cpu_ms / r.wall_ms * 100.0
            )
        })
    };
    let _ = writeln!(
        doc,
        "## The print thread's CPU time\n\n\
         CPU time of the thread named `perfgraph` over a whole demo run, default settings. The demo (`--cpu`)\n\
         reads it from `/proc/self/task/<tid>/schedstat`, or from `stat` where the kernel has no `schedstat`;\n\
         {source}. Each row is the median of {runs} runs by CPU time; *per second of run* divides it by that\n\
         run's own wall time from spawn to exit (start-up and exit included), and *of a core* says it as a\n\
         share of one core. The target for a program that only waits is under 0.1% of a core.\n\n\
         | Run | CPU ms | run s | per second of run | of a core |\n|---|---:|---:|---:|---:|\n\
         | `--idle-secs {secs}`: one section that sleeps | {} |\n\
         | `--fine-secs {secs}`: the fine-grained loop | {} |\n",
        row(c.idle.as_ref()),
        row(c.fine.as_ref()),
        runs = c.runs,
        secs = c.secs,
    );
}

/// Whole-process wall time of each build, and what perfgraph adds.
fn process_time(doc: &mut String, exit: &ProcessTime) {
    let _ = writeln!(
        doc,
        "## Whole-process time (start-up + exit latency added)\n\n\
         `perfgraph-demo --fine-iters {}`, {} runs of each, interleaved; wall time from spawn to exit.\n\n\
         | Build / settings | median ms | min ms |\n|---|---:|---:|\n\
         | instrumented, default settings | {:.2} | {:.2} |\n\
         | instrumented, `PERFGRAPH_VERBOSITY=off` | {:.2} | |\n\
         | compiled out | {:.2} | {:.2} |\n\
         | **added by perfgraph** | **{:.2}** | {:.2} |\n",
        exit.iters,
        exit.runs,
        exit.on_median,
        exit.on_min,
        exit.verbosity_off_median,
        exit.off_median,
        exit.off_min,
        exit.on_median - exit.off_median,
        exit.on_min - exit.off_min,
    );
}
