//! The cost of the control socket (`PERFGRAPH_LISTEN`): the idle background thread, and a recording thread
//! while a client refreshes every 100 ms as `perfgraph top --interval 0.1` does.

use std::fmt::Write as _;

use crate::measure::listen::Listen;

fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "not readable here".to_owned(), |p| format!("{p:.3}%"))
}

/// The section.
pub fn write(doc: &mut String, l: &Listen) {
    let _ = writeln!(
        doc,
        "\n## The control socket (`PERFGRAPH_LISTEN`)\n\n\
         **Idle.** Two child processes of `record`, side by side, each records one section and then sleeps; \
         the time their background thread ran (the scheduler's count, `/proc/<pid>/task/<tid>/schedstat`) over \
         {secs} s, as a share of one core. With the socket on, the thread wakes every 200 ms to look at it.\n\n\
         | Background thread, idle | CPU (share of one core) |\n|---|---:|\n\
         | `PERFGRAPH_LISTEN=on` (default) | {on} |\n\
         | `PERFGRAPH_LISTEN=off` | {off} |\n\n\
         **While `top` refreshes every 100 ms.** In `record`'s own process, one thread records sections \
         (`time_section!` in a loop, batches of 20,000) in {phases} phases of 1 s with nobody asking, \
         alternating with {phases} in which a client thread asks the process's own socket, every 100 ms, \
         for what `perfgraph top` asks at each refresh: `status`, then `dump`, read back as a report \
         ({refreshes} refreshes; a dump of {bytes} bytes; a refresh took {ms:.1} ms, median: the first \
         request waits for the background thread's next look at the socket, up to 200 ms, the next within 5 ms). The median batch of each kind:\n\n\
         | Recording thread | ns per section |\n|---|---:|\n\
         | nobody asking | {quiet:.1} |\n\
         | a client every 100 ms | {asked:.1} |\n\
         | ratio | {ratio:.3} |",
        secs = l.idle_seconds,
        on = percent(l.idle_cpu_on),
        off = percent(l.idle_cpu_off),
        phases = l.phases,
        refreshes = l.refreshes,
        bytes = l.dump_bytes,
        ms = l.refresh_ms,
        quiet = l.quiet_ns,
        asked = l.asked_ns,
        ratio = l.asked_ns / l.quiet_ns,
    );
    let _ = writeln!(
        doc,
        "\n**Trace windows.** A child of `record` records on two threads at a fixed rate each (`record \
         --trace-child`, no `PERFGRAPH_TRACE`); a second into its run, a client asks for a 2 s window \
         (`perfgraph trace --seconds 2`, Chrome JSON; its threads' rings are the 8,192 records of a process \
         without a trace). From the window's closing event:\n\n\
         | Rate per thread | Calls in the window | Lost to ring overflow | Not written | Bytes |\n\
         |---:|---:|---:|---:|---:|"
    );
    for (rate, calls, overflow, unwritten, bytes) in &l.windows {
        let _ = writeln!(
            doc,
            "| {rate} | {calls} | {overflow} | {unwritten} | {bytes} |"
        );
    }
    if l.windows.is_empty() {
        let _ = writeln!(doc, "| (no window could be taken) | | | | |");
    }
    let scrape = match l.scrape {
        Some((bytes, us)) => format!(
            "{bytes} bytes of text per scrape, and {us:.0} µs of the background thread's time per scrape \
             (a report taken and rendered; the mean of {} scrapes in a row, `schedstat`)",
            l.scrapes
        ),
        None => "not measured here".to_owned(),
    };
    let _ = writeln!(
        doc,
        "\n**Prometheus (`PERFGRAPH_PROMETHEUS`).** A child of `record` with 100 sections of 1,000 calls \
         each (`record --metrics-child`), scraped at `GET /metrics`: {scrape}."
    );
    let otlp = match l.otlp {
        Some((bytes, us, n)) => format!(
            "{bytes} bytes of protobuf per metrics request, and {us:.0} µs of the background thread's time \
             per export (a report taken, encoded and posted; over {n} exports in 10 s, `schedstat`, idle \
             time between them included)"
        ),
        None => "not measured here".to_owned(),
    };
    let idle = match l.otlp_idle {
        Some(share) => format!("{share:.3}%"),
        None => "not measured here".to_owned(),
    };
    let _ = writeln!(
        doc,
        "\n**OpenTelemetry (`PERFGRAPH_OTLP`).** The same child, exporting every 0.1 s \
         (`PERFGRAPH_OTLP_INTERVAL=0.1`, spans `slow`) to a collector in `record`'s process that takes every \
         request: {otlp}. Beside it, the same child with the default interval (10 s), idle but for its \
         exports: its background thread's share of a core over the same time, {idle}."
    );
}
