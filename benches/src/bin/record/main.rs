//! Writes `docs/performance.md` from a run of `benches/run.sh`: the Criterion results of the three bench
//! processes (peers, tracing-chrome, compiled out), plus what it measures itself on the demo binaries (print
//! thread CPU time, the fine-grained loop on / off / compiled out, whole-process time) and in child
//! processes of its own (resident memory per recording thread). Every figure in the file comes from this run.
//!
//! `record --criterion DIR --demo-on BIN --demo-off BIN --peers-bench BIN --out FILE --command TEXT
//! [--lifecycle FILE] [--perfgraph BIN] [--alloc-peers BIN]` (`FILE`: the saved output of the full-size
//! lifecycle tests, see `measure::lifecycle`; `--perfgraph`: the release `perfgraph` command, whose `merge`
//! it times; `--alloc-peers`: the release `benches/alloc-peers` binary, which it runs)
//! (`record --rss-child MODE N` and `record --trace-child RATE SECONDS N` are the children it runs for the
//! memory and trace figures; `record --trace-only FILE SCRATCH` measures the trace figures alone and
//! replaces their section of FILE; `record --lifecycle-only FILE SAVED` renders the lifecycle section of FILE
//! again from the saved output of the full-size tests; `record --html-only FILE PERFGRAPH SYNTHETIC SCRATCH`
//! measures the HTML page on synthetic runs (`measure::html`: `PERFGRAPH` the release `perfgraph`,
//! `SYNTHETIC` the `synthetic_run` bin, files under SCRATCH) and replaces that section of FILE alone, as
//! `benches/run.sh html` does; `record --heap` measures and prints only the section on exact heap
//! accounting, `record --cpu` the one on CPU time per section, `record --listen` the one on the control socket
//! (`record --listen-child MODE SECONDS` is its idle child, `record --metrics-child SECONDS` the one with
//! 100 sections it scrapes), and `record --layer BIN` the `TracingLayer`
//! target's rounds of the peers bench BIN, to look at them without a whole run.)
//!
//! [`measure`] gathers every figure into a [`measure::Record`] of plain data; [`render`] turns that into the
//! markdown, touching nothing else.

mod measure;
mod render;

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--heap") => print!("{}", render::heap_section(&measure::heap::Heap::measure())),
        Some("--cpu") => print!(
            "{}",
            render::cpu_section(&measure::cpu::CpuClock::measure())
        ),
        Some("--listen") => print!(
            "{}",
            render::listen_section(&measure::listen::Listen::measure())
        ),
        Some("--metrics-child") => {
            measure::listen::metrics_child(args[1].parse().expect("seconds"));
        }
        Some("--listen-child") => {
            measure::listen::child(&args[1], args[2].parse().expect("seconds"));
        }
        Some("--layer") => {
            // `record --layer BIN`: the `TracingLayer` rounds of the peers bench BIN, alone.
            let rounds = measure::layer::LayerRounds::measure(std::path::Path::new(&args[1]));
            print!("{}", render::layer_section(rounds.as_ref()));
        }
        Some("--rss-child") => {
            measure::rss::child(&args[1], args[2].parse().expect("thread count"));
        }
        Some("--trace-child") => measure::trace::child(
            &args[1],
            args[2].parse().expect("seconds"),
            args[3].parse().expect("thread count"),
        ),
        Some("--lifecycle-only") => lifecycle_only(&args),
        Some("--html-only") => html_only(&args),
        Some("--trace-only") => trace_only(&args),
        _ => full_record(&args),
    }
}

/// `record --lifecycle-only FILE LIFECYCLE`: the lifecycle section of FILE made again from the saved test
/// output LIFECYCLE (what `run.sh` saved), the rest of FILE left as the last full run wrote it.
fn lifecycle_only(args: &[String]) {
    let (file, saved) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let figures = measure::lifecycle::Lifecycle::read(Some(&saved));
    let doc = std::fs::read_to_string(&file).expect("read the record");
    std::fs::write(&file, render::lifecycle::replace(&doc, &figures)).expect("write the record");
    eprintln!("wrote the lifecycle section of {}", file.display());
}

/// `record --html-only FILE PERFGRAPH SYNTHETIC SCRATCH`: the HTML page's section of FILE measured again,
/// every other section left byte for byte as it was.
fn html_only(args: &[String]) {
    let file = PathBuf::from(&args[1]);
    let figures = measure::html::measure(&measure::html::HtmlInputs {
        perfgraph: std::path::Path::new(&args[2]),
        synthetic: std::path::Path::new(&args[3]),
        scratch: std::path::Path::new(&args[4]),
        out: &file,
        command: "benches/run.sh html",
    });
    let doc = std::fs::read_to_string(&file).expect("read the record");
    std::fs::write(&file, render::html::replace(&doc, &figures)).expect("write the record");
    eprintln!("wrote the HTML page section of {}", file.display());
}

/// `record --trace-only FILE SCRATCH`: measures the trace figures alone and puts their section in FILE in
/// place of the one there (the rest of FILE is left as the last full run wrote it).
fn trace_only(args: &[String]) {
    let (file, scratch) = (PathBuf::from(&args[1]), PathBuf::from(&args[2]));
    let figures = measure::trace::measure(&scratch);
    let doc = std::fs::read_to_string(&file).expect("read the record");
    std::fs::write(&file, render::trace::replace(&doc, &figures)).expect("write the record");
    eprintln!("wrote the trace section of {}", file.display());
}

/// The whole record: every figure measured with the inputs the options name, written to `--out`.
fn full_record(args: &[String]) {
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| panic!("missing {name}"))
    };
    let optional = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    };
    let inputs = measure::Inputs {
        criterion: PathBuf::from(opt("--criterion")),
        demo_on: PathBuf::from(opt("--demo-on")),
        demo_off: PathBuf::from(opt("--demo-off")),
        peers_bench: PathBuf::from(opt("--peers-bench")),
        out: PathBuf::from(opt("--out")),
        command: opt("--command"),
        lifecycle: optional("--lifecycle"),
        perfgraph: optional("--perfgraph"),
        alloc_peers: optional("--alloc-peers"),
    };
    let record = measure::record(&inputs);
    std::fs::write(&inputs.out, render::render(&record)).expect("write the record");
    eprintln!("wrote {}", inputs.out.display());
}
