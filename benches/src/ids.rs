//! The names the benches and `record` share, each written once: the Criterion groups, the case ids, the
//! bench processes of a `benches/run.sh` run, and the peer crates with the versions the record prints.
//! The bench binaries register their cases under these ids; `record` finds the results by them.

/// The Criterion groups every case is measured in ([`crate::bench_cases`], [`crate::bench_cases_cpu`]).
pub mod group {
    /// Wall time, on the Criterion thread.
    pub const ONE_THREAD: &str = "one_thread";
    /// Wall time, two threads at once (the mean per-thread time).
    pub const TWO_THREADS: &str = "two_threads";
    /// Thread CPU time, on the Criterion thread.
    pub const CPU_ONE_THREAD: &str = "cpu_one_thread";
    /// Thread CPU time, two threads at once.
    pub const CPU_TWO_THREADS: &str = "cpu_two_threads";
    /// Every group, in the order the record reads them.
    pub const ALL: [&str; 4] = [ONE_THREAD, TWO_THREADS, CPU_ONE_THREAD, CPU_TWO_THREADS];
}

/// Case ids (Criterion's function id within a group).
pub mod case {
    /// An empty `#[inline(never)]` call: the floor every figure's *added* subtracts.
    pub const EMPTY_CALL: &str = "floor/empty_call";
    /// A pair of `Instant::now()`.
    pub const INSTANT_PAIR: &str = "floor/instant_pair";
    /// A pair of perfgraph's raw clock reads.
    pub const RAW_CLOCK_PAIR: &str = "floor/raw_clock_pair";
    /// perfgraph recording a `#[timed]` leaf.
    pub const PERFGRAPH_ENABLED: &str = "perfgraph/enabled";
    /// The same leaf on a call path made without a latency histogram (the bench hook
    /// `__test_hooks::without_latency_histograms`): next to [`PERFGRAPH_ENABLED`], the histogram's cost.
    pub const PERFGRAPH_NO_HISTOGRAM: &str = "perfgraph/no_histogram";
    /// The same leaf with the verbosity off.
    pub const PERFGRAPH_DISABLED_BY_VERBOSITY: &str = "perfgraph/disabled_by_verbosity";
    /// A leaf with a live message and dots.
    pub const PERFGRAPH_LIVE_MESSAGE: &str = "perfgraph/live_message";
    /// Three nested sections per call.
    pub const PERFGRAPH_NESTED_3_DEEP: &str = "perfgraph/nested_3_deep";
    /// One poll of a timed future (`time_future!`) that stays pending: enter + exit of its section per poll.
    pub const PERFGRAPH_FUTURE_POLL: &str = "perfgraph/future_poll";
    /// A `#[timed]` leaf recording two integer args, no output wanting them (no trace): their check only.
    pub const PERFGRAPH_ARGS: &str = "perfgraph/args_2_ints";
    /// The same leaf, its args recorded as a trace wants them (`__test_hooks::record_as_if_tracing`).
    pub const PERFGRAPH_ARGS_TRACED: &str = "perfgraph/args_2_ints_traced";
    /// An `event!` with one integer arg, recorded as a trace wants it.
    pub const PERFGRAPH_EVENT_TRACED: &str = "perfgraph/event_traced";
    /// A `counter!` sample (no trace: the thread's counter table).
    pub const PERFGRAPH_COUNTER: &str = "perfgraph/counter";
    /// An uncontended lock and unlock of std's `Mutex`: the baseline of [`PERFGRAPH_MUTEX`].
    pub const STD_MUTEX: &str = "floor/std_mutex";
    /// An uncontended lock and unlock of `perfgraph_core::sync::Mutex` (no trace).
    pub const PERFGRAPH_MUTEX: &str = "perfgraph/mutex";
    /// A `#[timed]` leaf with perfgraph-core built without `enabled` (`benches/compiled-out`).
    pub const PERFGRAPH_COMPILED_OUT_TIMED: &str = "perfgraph/compiled_out_timed";
    /// A `time_section!` leaf with perfgraph-core built without `enabled` (`benches/compiled-out`).
    pub const PERFGRAPH_COMPILED_OUT_SECTION: &str = "perfgraph/compiled_out_section";
    /// puffin, scopes on.
    pub const PUFFIN_ON: &str = "puffin/on";
    /// puffin, scopes off.
    pub const PUFFIN_OFF: &str = "puffin/off";
    /// fastrace with a root span per batch.
    pub const FASTRACE_ROOT_SPAN: &str = "fastrace/root_span";
    /// fastrace without a root span (nothing collected).
    pub const FASTRACE_NO_ROOT: &str = "fastrace/no_root";
    /// One poll of a pending `#[fastrace::trace] async fn` under a root span.
    pub const FASTRACE_FUTURE_POLL: &str = "fastrace/future_poll";
    /// tracing with a global `Registry` and a no-op layer.
    pub const TRACING_REGISTRY_NOOP_LAYER: &str = "tracing/registry_noop_layer";
    /// tracing with a `Registry` and a no-op layer as a scoped dispatcher (entered per batch): the baseline
    /// of [`TRACING_SCOPED_PERFGRAPH_LAYER`] (the no-op layer makes the `Registry` free closed spans).
    pub const TRACING_SCOPED_REGISTRY: &str = "tracing/scoped_registry";
    /// The same with perfgraph's `TracingLayer` in place of the no-op layer, as users install it: the
    /// difference is the layer's cost.
    pub const TRACING_SCOPED_PERFGRAPH_LAYER: &str = "tracing/scoped_registry_perfgraph_layer";
    /// tracing with a global `Registry` and tracing-chrome (its own process).
    pub const TRACING_REGISTRY_CHROME: &str = "tracing/registry_chrome";
    /// time-graph, collection on.
    pub const TIME_GRAPH_ON: &str = "time_graph/on";
    /// time-graph, collection off.
    pub const TIME_GRAPH_OFF: &str = "time_graph/off";
    /// hotpath with its guard alive.
    pub const HOTPATH_ON: &str = "hotpath/on";
    /// One poll of a pending `#[hotpath::measure] async fn`, its guard alive.
    pub const HOTPATH_FUTURE_POLL: &str = "hotpath/future_poll";
    /// coarse-prof.
    pub const COARSE_PROF_ON: &str = "coarse_prof/on";
}

/// The bench processes of one `benches/run.sh` run: each writes its Criterion results under
/// `<criterion home>/<process>` (run.sh sets `CRITERION_HOME` to these names).
pub mod process {
    /// `benches/peers`: floors, perfgraph and every peer but tracing-chrome.
    pub const MAIN: &str = "main";
    /// `benches/peers` again with `PEERS_TRACING=chrome`.
    pub const CHROME: &str = "chrome";
    /// `benches/compiled-out`.
    pub const COMPILED_OUT: &str = "compiled-out";
    /// Every process, in the order the record reads them.
    pub const ALL: [&str; 3] = [MAIN, CHROME, COMPILED_OUT];
}

/// A peer crate as the record names it: `{name} {version}`.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    /// The crate's name.
    pub name: &'static str,
    /// The version requirement `benches/peers/Cargo.toml` gives it (a test checks they agree).
    pub version: &'static str,
}

/// The peers the record prints, with their versions.
pub mod peer {
    use super::Peer;

    /// puffin.
    pub const PUFFIN: Peer = Peer {
        name: "puffin",
        version: "0.20",
    };
    /// fastrace.
    pub const FASTRACE: Peer = Peer {
        name: "fastrace",
        version: "0.7",
    };
    /// tracing.
    pub const TRACING: Peer = Peer {
        name: "tracing",
        version: "0.1",
    };
    /// time-graph.
    pub const TIME_GRAPH: Peer = Peer {
        name: "time-graph",
        version: "0.3",
    };
    /// hotpath.
    pub const HOTPATH: Peer = Peer {
        name: "hotpath",
        version: "0.30",
    };
    /// coarse-prof.
    pub const COARSE_PROF: Peer = Peer {
        name: "coarse-prof",
        version: "0.2",
    };
    /// Every peer.
    pub const ALL: [Peer; 6] = [PUFFIN, FASTRACE, TRACING, TIME_GRAPH, HOTPATH, COARSE_PROF];
}

#[cfg(test)]
mod tests {
    use super::peer;

    /// The version requirement of dependency `name` in a Cargo.toml: `name = "v"` or
    /// `name = { version = "v", … }`.
    fn requirement<'a>(manifest: &'a str, name: &str) -> Option<&'a str> {
        manifest.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            if key.trim() != name {
                return None;
            }
            let value = value.trim();
            let value = match value.strip_prefix('{') {
                Some(table) => table
                    .split_once("version")?
                    .1
                    .trim_start()
                    .strip_prefix('=')?,
                None => value,
            };
            value.trim_start().strip_prefix('"')?.split('"').next()
        })
    }

    #[test]
    fn requirement_reads_both_forms() {
        let manifest = "a = \"0.1\"\nb = { version = \"0.7\", features = [\"x\"] }\n";
        assert_eq!(requirement(manifest, "a"), Some("0.1"));
        assert_eq!(requirement(manifest, "b"), Some("0.7"));
        assert_eq!(requirement(manifest, "c"), None);
    }

    /// The record prints these versions; the peers bench is built with the ones in its Cargo.toml.
    #[test]
    fn peer_versions_match_the_peers_manifest() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/Cargo.toml");
        let manifest = std::fs::read_to_string(path).expect("benches/peers/Cargo.toml");
        for p in peer::ALL {
            assert_eq!(
                requirement(&manifest, p.name),
                Some(p.version),
                "{}",
                p.name
            );
        }
    }
}
