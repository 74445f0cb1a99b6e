#!/usr/bin/env bash
# Runs every benchmark and measurement and writes docs/performance.md: a few minutes of measurement, plus
# the first build of the peers. Nothing in that file is edited by hand: change the code, run this again.
#
#   benches/run.sh            # from the repository root (or anywhere: it cds there)
#   benches/run.sh html       # only the HTML page's section (a few minutes): every other section of
#                             # docs/performance.md is left byte for byte as it is
#
# Steps: build the demo instrumented and compiled out; run the peer comparison (benches/peers, one process;
# then again with PEERS_TRACING=chrome, because tracing's subscriber is process-global); run the
# compiled-out bench (benches/compiled-out, its own build so perfgraph-core really lacks `enabled`); then
# `record` measures the demo, the memory per thread and the off-by-verbosity cost in a dozen short peers-bench
# processes with ASLR and a few with it off (to see how far that cost varies across processes and layouts),
# runs the peers bench three times more with PEERS_LAYER_ROUNDS=201 for the `TracingLayer` target
# (perfgraph's layer in place of the no-op one on tracing + `Registry`, against that `Registry` alone and
# against perfgraph's own section, timed side by side in 201 rotated rounds of short batches per process,
# the three processes' rounds pooled: the two Criterion cases alone run
# seconds apart, and the machine's drift between them can be as large as the layer's cost), reads the
# figures of the lifecycle tests run at full size just before, times `perfgraph merge` of 256 files,
# measures the streamed trace (`record --trace-child`: the lossless rate, bytes per call, the cost on
# the recording threads and a 30 s two-thread run: a few minutes, and scratch files of up to 1.5 GB under
# target/perf-record, each removed once measured), and writes the file (the latency histogram's cost is the
# Criterion pair perfgraph/enabled and perfgraph/no_histogram of the main process). PERFGRAPH_*
# variables are cleared so every run uses the defaults. Last, the HTML page (`record --html-only`, the step
# `benches/run.sh html` runs alone): `synthetic_run` (benches/src/bin/synthetic_run.rs) writes runs of
# 1,000, 100,000 and 1,000,000 call paths (the largest is a 1 GB JSON under target/perf-record/html, removed
# once measured), `perfgraph html` writes each one's page three times, and headless Chromium (`chromium`,
# or $CHROMIUM) loads each page three times with `#selftest`; its section says so if Chromium is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/perf-record
mode=${1:-all}
case $mode in
    all | html) ;;
    *) echo "usage: benches/run.sh [html]" >&2; exit 2 ;;
esac
for v in $(env | sed -n 's/^\(PERFGRAPH_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# Other work on the same 2 cores moves every figure (the two-thread ones most). Before each phase, wait
# (at most 5 minutes) for 3 seconds in which the machine is at least 90% idle.
wait_quiet() {
    local deadline=$((SECONDS + 300)) a b idle total
    while ((SECONDS < deadline)); do
        read -ra a < /proc/stat
        sleep 3
        read -ra b < /proc/stat
        idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
        total=0
        for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
        if ((total > 0 && idle * 100 >= total * 90)); then return; fi
        echo "   (machine busy: $((100 - idle * 100 / total))% CPU used; waiting)"
    done
    echo "   (still busy after 5 minutes; measuring anyway)"
}

# The HTML page's section alone, in place of the one in docs/performance.md.
html_step() {
    echo "== the HTML page: synthetic runs of 1,000, 100,000 and 1,000,000 call paths"
    wait_quiet
    target/release/record --html-only docs/performance.md target/release/perfgraph \
        target/release/synthetic_run "$out/html"
}

if [[ $mode == html ]]; then
    echo "== building perfgraph, record and synthetic_run"
    cargo build --release -p perfgraph-cli
    cargo build --release -p perfgraph-benches --bin record --bin synthetic_run
    html_step
    exit
fi
rm -rf "$out"
mkdir -p "$out/criterion"

echo "== building the demo (instrumented and compiled out) and the benches"
cargo build --release -p perfgraph-demo
cp target/release/perfgraph-demo "$out/demo-on"
cargo build --release -p perfgraph-demo --no-default-features
cp target/release/perfgraph-demo "$out/demo-off"
cargo build --release -p perfgraph-benches --bin record --bin synthetic_run
cargo build --release -p perfgraph-cli
peers_bench=$(cd benches/peers && cargo bench --bench peers --no-run 2>&1 | tee /dev/stderr |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p')
peers_bench=$root/benches/peers/$peers_bench
(cd benches/compiled-out && cargo bench --bench compiled_out --no-run)
(cd benches/alloc-peers && cargo build --release)

echo "== peers, floors and perfgraph (one process)"
wait_quiet
(cd benches/peers && CRITERION_HOME="$out/criterion/main" cargo bench --bench peers)
echo "== tracing + Registry + tracing-chrome (its own process)"
wait_quiet
(cd benches/peers && PEERS_TRACING=chrome CRITERION_HOME="$out/criterion/chrome" cargo bench --bench peers)
echo "== perfgraph compiled out (its own build)"
wait_quiet
(cd benches/compiled-out && CRITERION_HOME="$out/criterion/compiled-out" cargo bench --bench compiled_out)

# The lifecycle tests at full size (perfgraph-core/tests/thread_churn.rs and fork.rs): their figure lines
# go to a file `record` reads. A failing test stops the run here, before the record is written.
echo "== lifecycles at full size: 100,000 churned threads (three times), 200 forks"
cargo test --release -p perfgraph-core --test thread_churn --test fork --no-run
wait_quiet
for _ in 1 2 3; do
    THREAD_CHURN_N=100000 cargo test --release -p perfgraph-core --test thread_churn -- --nocapture \
        --test-threads=1
done 2>&1 | tee "$out/lifecycle.txt"
FORK_COUNT=200 cargo test --release -p perfgraph-core --test fork -- --nocapture 2>&1 |
    tee -a "$out/lifecycle.txt"

echo "== demo and memory measurements; writing docs/performance.md"
wait_quiet
target/release/record --criterion "$out/criterion" --demo-on "$out/demo-on" --demo-off "$out/demo-off" \
    --peers-bench "$peers_bench" --out docs/performance.md --command "benches/run.sh" \
    --lifecycle "$out/lifecycle.txt" --perfgraph target/release/perfgraph \
    --alloc-peers benches/alloc-peers/target/release/perfgraph-alloc-peers

html_step
