//! Unit tests of the settings (`base::config`): each variable's parsing, its warning line, its default.

use super::*;

fn parse(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
    Config::from_lookup(|name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    })
}

#[test]
fn defaults() {
    let (c, w) = parse(&[]);
    assert_eq!(c, Config::default());
    assert!(w.is_empty());
}

#[test]
fn misspelled_variables_warn_with_the_closest_name() {
    let names = [
        "PERFGRAPH_VERBOSE",
        "PERFGRAPH_REPORTS",
        "PERFGRAPH_VERBOSITY",
        "PERFGRAPH_XYZZY_PLUGH",
        "HOME",
    ]
    .map(String::from);
    assert_eq!(
        unknown_variables(names),
        [
            "perfgraph: warning: PERFGRAPH_REPORTS is not a perfgraph setting (did you mean \
             PERFGRAPH_REPORT?); it is ignored",
            "perfgraph: warning: PERFGRAPH_VERBOSE is not a perfgraph setting (did you mean \
             PERFGRAPH_VERBOSITY?); it is ignored",
            "perfgraph: warning: PERFGRAPH_XYZZY_PLUGH is not a perfgraph setting; it is ignored",
        ]
    );
}

#[test]
fn limits_below_a_millisecond_are_refused() {
    for (name, value) in [
        ("PERFGRAPH_TIME_LIMIT", "1e-12"),
        ("PERFGRAPH_TIME_LIMIT", "0.0009"),
        ("PERFGRAPH_INTERVAL", "0.0001"),
    ] {
        let (c, w) = parse(&[(name, value)]);
        assert_eq!(c, Config::default(), "{name}={value}");
        assert_eq!(w.len(), 1, "{name}={value}");
        assert!(w[0].contains(">= 0.001"), "{}", w[0]);
    }
    assert_eq!(
        parse(&[("PERFGRAPH_TIME_LIMIT", "0.001")]).0.time_limit_ns,
        1_000_000
    );
}

#[test]
fn every_variable_is_named_once() {
    let names = Config::VARIABLE_NAMES;
    assert_eq!(names[0], "PERFGRAPH_VERBOSITY");
    assert!(names.iter().all(|n| n.starts_with("PERFGRAPH_")));
    let mut sorted = names.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len());
}

#[test]
fn good_values() {
    let (c, w) = parse(&[
        ("PERFGRAPH_VERBOSITY", "off"),
        ("PERFGRAPH_TIME_LIMIT", "0.2"),
        ("PERFGRAPH_MEM_LIMIT", "5"),
        ("PERFGRAPH_LIVE", "all"),
        ("PERFGRAPH_REPORT", "graph, sections=3"),
        ("PERFGRAPH_INTERVAL", "1"),
        ("PERFGRAPH_TRACE", "t.json"),
        ("PERFGRAPH_SIGNALS", "off"),
        ("PERFGRAPH_CAPTURE", "off"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.capture, CaptureMode::Off);
    assert_eq!(c.trace_compress, TraceCompress::Auto);
    assert_eq!(
        parse(&[("PERFGRAPH_TRACE_COMPRESS", "off")])
            .0
            .trace_compress,
        TraceCompress::Off
    );
    assert_eq!(
        parse(&[("PERFGRAPH_CAPTURE", "on")]).0.capture,
        CaptureMode::On
    );
    assert_eq!(c.verbosity, None);
    assert_eq!(c.time_limit_ns, 200_000_000);
    assert_eq!(c.mem_limit_bytes, 5_000_000);
    assert_eq!(c.live, LiveMode::All);
    assert_eq!(
        c.report,
        ReportSelection {
            graph: true,
            sections: Some(3),
            ..Default::default()
        }
    );
    assert_eq!(c.interval_ns, Some(1_000_000_000));
    assert_eq!(c.trace, Some(PathBuf::from("t.json")));
    assert!(!c.signals);
    assert!(parse(&[("PERFGRAPH_SIGNALS", "on")]).0.signals);
    assert_eq!(
        parse(&[("PERFGRAPH_REPORT", "all")]).0.report.sections,
        Some(10)
    );
    assert_eq!(
        parse(&[("PERFGRAPH_VERBOSITY", " 3 ")]).0.verbosity,
        Some(3)
    );
}

#[test]
fn bad_values_warn_once_each_and_keep_defaults() {
    let (c, w) = parse(&[
        ("PERFGRAPH_VERBOSITY", "high"),
        ("PERFGRAPH_TIME_LIMIT", "-1"),
        ("PERFGRAPH_LIVE", "maybe"),
        ("PERFGRAPH_REPORT", "pie,cake"),
        ("PERFGRAPH_SIGNALS", "no"),
    ]);
    assert_eq!(c, Config::default());
    assert_eq!(w.len(), 5);
    assert_eq!(
        w[0],
        "perfgraph: warning: PERFGRAPH_VERBOSITY=\"high\" is not valid (accepted: off, 0, 1, 2, 3); using the default, 1"
    );
    assert!(w.iter().all(|l| !l.contains('\n')));
    assert!(w[3].contains("PERFGRAPH_REPORT=\"pie,cake\" is not valid"));
    assert_eq!(
        w[4],
        "perfgraph: warning: PERFGRAPH_SIGNALS=\"no\" is not valid (accepted: on, off); using the default, on"
    );
    assert_eq!(
        parse(&[("PERFGRAPH_CAPTURE", "yes")]).1,
        [
            "perfgraph: warning: PERFGRAPH_CAPTURE=\"yes\" is not valid (accepted: auto, on, off); using \
             the default, auto"
        ]
    );
}

#[test]
fn the_trace_limit_is_a_file_size() {
    let limit = |v: &str| parse(&[("PERFGRAPH_TRACE_LIMIT", v)]);
    assert_eq!(limit("500M").0.trace_limit, Some(500_000_000));
    assert_eq!(limit("4096").0.trace_limit, Some(4096));
    assert_eq!(limit("64k").0.trace_limit, Some(64_000));
    assert_eq!(limit("2G").0.trace_limit, Some(2_000_000_000));
    assert_eq!(limit("unlimited").0.trace_limit, None);
    assert_eq!(Config::default().trace_limit, None);
    for bad in ["100", "1.5G", "M", "-5M", "99999999999G"] {
        let (c, w) = limit(bad);
        assert_eq!(c.trace_limit, None, "{bad}");
        assert_eq!(
            w,
            [format!(
                "perfgraph: warning: PERFGRAPH_TRACE_LIMIT={bad:?} is not valid (accepted: a file size in \
                 bytes >= 4096, with an optional K, M or G (1000, 1000000, 1000000000), or unlimited); \
                 using the default, unlimited"
            )]
        );
    }
}

#[test]
fn cpu_is_off_all_or_a_warning() {
    assert!(!Config::default().cpu_all);
    assert!(parse(&[("PERFGRAPH_CPU", "all")]).0.cpu_all);
    assert!(!parse(&[("PERFGRAPH_CPU", " off ")]).0.cpu_all);
    let (c, w) = parse(&[("PERFGRAPH_CPU", "on")]);
    assert_eq!(c, Config::default());
    assert_eq!(
        w,
        [
            "perfgraph: warning: PERFGRAPH_CPU=\"on\" is not valid (accepted: off, all); using the \
             default, off"
        ]
    );
    let report = parse(&[("PERFGRAPH_REPORT", "cpu")]).0.report;
    assert!(report.cpu && !report.alloc);
    assert!(parse(&[("PERFGRAPH_REPORT", "all")]).0.report.cpu);
}

#[test]
fn switches_are_off_on_or_a_warning() {
    assert!(!Config::default().switches);
    assert!(parse(&[("PERFGRAPH_SWITCHES", "on")]).0.switches);
    let (c, w) = parse(&[("PERFGRAPH_SWITCHES", "all")]);
    assert_eq!(c, Config::default());
    assert_eq!(
        w,
        [
            "perfgraph: warning: PERFGRAPH_SWITCHES=\"all\" is not valid (accepted: off, on); using \
             the default, off"
        ]
    );
}

#[test]
fn a_trace_sizes_the_rings() {
    assert_eq!(Config::default().ring_capacity(), RING_CAPACITY);
    let (c, _) = parse(&[("PERFGRAPH_TRACE", "t.pftrace")]);
    assert_eq!(c.ring_capacity(), TRACE_RING_CAPACITY);
}

#[test]
fn a_list_with_a_bad_entry_keeps_the_good_ones_and_warns_about_the_bad_one() {
    let (c, w) = parse(&[("PERFGRAPH_REPORT", "graph,bogus, sections=0 ,latency")]);
    assert!(c.report.graph && c.report.latency, "{:?}", c.report);
    assert_eq!(c.report.sections, None);
    assert_eq!(
        w,
        [
            "perfgraph: warning: PERFGRAPH_REPORT=\"graph,bogus, sections=0 ,latency\": \"bogus\" is not \
             valid (accepted: a comma list of graph, branch, sections[=N], latency, threads, async, alloc, \
             cpu, counters, locks, critical, all); it is left out, the rest applies",
            "perfgraph: warning: PERFGRAPH_REPORT=\"graph,bogus, sections=0 ,latency\": \"sections=0\" is \
             not valid (accepted: a comma list of graph, branch, sections[=N], latency, threads, async, \
             alloc, cpu, counters, locks, critical, all); it is left out, the rest applies",
        ]
    );
    let (c, w) = parse(&[("PERFGRAPH_REPORT", "counters")]);
    assert!(c.report.counters && !c.report.graph && w.is_empty());
    assert!(parse(&[("PERFGRAPH_REPORT", "all")]).0.report.counters);
    // `none` is a good entry: nothing selected, nothing to warn about but the typo.
    let (c, w) = parse(&[("PERFGRAPH_REPORT", "none,grpah")]);
    assert!(c.report.is_empty());
    assert_eq!(w.len(), 1);
}

#[test]
fn the_interval_depth_is_a_level_count_from_1_to_64() {
    assert_eq!(parse(&[]).0.interval_depth, 1);
    let (c, w) = parse(&[("PERFGRAPH_INTERVAL_DEPTH", "3")]);
    assert_eq!((c.interval_depth, w.len()), (3, 0));
    for bad in ["0", "65", "two", "-1"] {
        let (c, w) = parse(&[("PERFGRAPH_INTERVAL_DEPTH", bad)]);
        assert_eq!(c.interval_depth, 1, "{bad}");
        assert_eq!(
            w,
            [format!(
                "perfgraph: warning: PERFGRAPH_INTERVAL_DEPTH=\"{bad}\" is not valid (accepted: a whole number \
                 from 1 to 64); using the default, 1"
            )]
        );
    }
}

#[test]
fn the_otlp_settings_need_an_http_url_and_spans_read_every_record() {
    let (c, w) = parse(&[("PERFGRAPH_OTLP", "http://127.0.0.1:4318")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.otlp.as_deref(), Some("http://127.0.0.1:4318"));
    assert_eq!(c.otlp_spans, OtlpSpans::Slow);
    assert_eq!(c.otlp_interval_ns, 10_000_000_000);
    // Slow spans come from the drained records, with the usual rings; every call takes the trace's.
    assert!(c.needs_every_record());
    assert_eq!(c.ring_capacity(), RING_CAPACITY);
    let (c, _) = parse(&[
        ("PERFGRAPH_OTLP", "http://collector:4318/otlp"),
        ("PERFGRAPH_OTLP_SPANS", "all"),
        ("PERFGRAPH_OTLP_INTERVAL", "0.5"),
        ("PERFGRAPH_OTLP_SLOW", "0.1"),
    ]);
    assert_eq!(c.ring_capacity(), TRACE_RING_CAPACITY);
    assert_eq!(
        (c.otlp_interval_ns, c.otlp_slow_ns),
        (500_000_000, Some(100_000_000))
    );
    let (c, _) = parse(&[
        ("PERFGRAPH_OTLP", "http://127.0.0.1:4318"),
        ("PERFGRAPH_OTLP_SPANS", "off"),
    ]);
    assert!(!c.needs_every_record());
    // Spans without a collector are nothing.
    let (c, _) = parse(&[("PERFGRAPH_OTLP_SPANS", "all")]);
    assert!(!c.needs_every_record());
    for (name, bad) in [
        ("PERFGRAPH_OTLP", "https://collector:4318"),
        ("PERFGRAPH_OTLP", "collector:4318"),
        ("PERFGRAPH_OTLP_INTERVAL", "0.01"),
        ("PERFGRAPH_OTLP_SPANS", "some"),
        ("PERFGRAPH_OTLP_SLOW", "0"),
    ] {
        let (c, w) = parse(&[(name, bad)]);
        assert_eq!(w.len(), 1, "{name}={bad}: {w:?}");
        assert_eq!(c, Config::default(), "{name}={bad}");
    }
}
