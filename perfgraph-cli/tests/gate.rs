//! The CI gate end to end: `perfgraph record` runs `examples/gate` (a solver step whose `residual` a knob
//! makes k% slower) into bundles, and `perfgraph diff` on them must flag k = 5 and only `residual` (and
//! `solve`, its caller, only as far as its inclusive time implies), with an interval that holds k, and
//! pass k = 0; comparisons of the program with itself, with a CPU burner on half of them, rarely fail.
//! The bundle's manifest, the exit statuses, bad bundles and `history` too.
//!
//! The comparisons use `--metric cpu` (each section's CPU time): the suite passes with both cores busy,
//! and wall time on a machine that busy is not what a gate should be asked to tell apart at 5%. Sizes:
//! 3 power trials and 4 A/A comparisons by default; 10 and 20 with `TESTS_FULL=1`, as the issue asks.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{example, full, scratch};

const CLI: &str = env!("CARGO_BIN_EXE_perfgraph");

/// The tests here take turns: each records programs whose times it then compares, and the A/A test runs
/// a CPU burner of its own; run at once, on two cores with the suite's two burners, they would be each
/// other's noise, several processes a core.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn cli(dir: &Path, args: &[&str]) -> Output {
    Command::new(CLI)
        .args(args)
        .current_dir(dir)
        .env_remove("PERFGRAPH_REPORT")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Records `runs` of `gate base` (baseline) against `gate head` into `dir/name`.
fn record(dir: &Path, name: &str, runs: usize, base: u32, head: u32, metric: &str) -> Output {
    record_in(dir, name, runs, base, head, metric, &[])
}

/// [`record`], with the environment `vars` for the program.
fn record_in(
    dir: &Path,
    name: &str,
    runs: usize,
    base: u32,
    head: u32,
    metric: &str,
    vars: &[(&str, &str)],
) -> Output {
    let gate = example("gate");
    let gate = gate.to_str().unwrap();
    let (n, b, h) = (runs.to_string(), base.to_string(), head.to_string());
    let o = Command::new(CLI)
        .args([
            "record",
            "-n",
            &n,
            "--metric",
            metric,
            "-o",
            name,
            "--baseline",
            gate,
            &b,
            "--",
            gate,
            &h,
        ])
        .current_dir(dir)
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    o
}

/// A row of the gated diff's table: (change %, interval low %, interval high %, mark).
fn row(table: &str, section: &str) -> (f64, f64, f64, String) {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(section))
        .unwrap_or_else(|| panic!("no row {section}:\n{table}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let pct = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap();
    // Section, base, head, change, low, "to", high, p, [mark]
    (
        pct(w[3]),
        pct(w[4]),
        pct(w[6]),
        w.get(8).map_or(String::new(), |m| (*m).to_owned()),
    )
}

#[test]
fn record_writes_a_bundle_with_its_manifest_interleaved() {
    let _turn = turn();
    let dir = scratch("gate", "manifest");
    record(&dir, "b", 4, 0, 5, "wall");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b/manifest.json")).unwrap())
            .unwrap();
    let runs = m["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    assert_eq!(m["metric"], "wall");
    // The commit is the repository's that holds the program (the example, under the target
    // directory: in the checkout or not), else the working directory's (the scratch directory).
    let in_git = [
        example("gate").parent().unwrap().to_path_buf(),
        dir.to_path_buf(),
    ]
    .iter()
    .any(|d| {
        Command::new("git")
            .arg("-C")
            .arg(d)
            .args(["rev-parse", "--verify", "-q", "HEAD"])
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    });
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["order"], i + 1);
        // Each round runs one of each, in either order.
        let pair = &runs[i / 2 * 2..i / 2 * 2 + 2];
        assert_ne!(pair[0]["side"], pair[1]["side"], "{pair:?}");
        assert_eq!(r["exit"], 0);
        let file = r["files"][0]["path"].as_str().unwrap();
        assert!(dir.join("b").join(file).is_file(), "{file}");
        assert!(r["rustc"].as_str().unwrap().starts_with("rustc version"));
        assert!(!r["cpu_model"].as_str().unwrap().is_empty());
        assert_eq!(r["load_average"].as_array().unwrap().len(), 3);
        assert!(r["wall_ns"].as_u64().unwrap() > 0);
        assert_eq!(r["git_commit"].is_string(), in_git, "{r}");
        if i > 0 {
            assert!(r["start_unix_ns"].as_u64() > runs[i - 1]["start_unix_ns"].as_u64());
        }
    }
    // The program's standard error is kept, its output dropped.
    assert!(dir.join("b/runs/head-001.stderr").is_file());
    // A bundle is made new.
    let again = cli(&dir, &["record", "-n", "1", "-o", "b", "--", "true"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again).1.contains("exists"), "{:?}", text(&again));
}

#[test]
fn record_forwards_the_exit_status_and_says_when_the_runs_disagree() {
    let _turn = turn();
    let dir = scratch("gate", "status");
    let o = cli(
        &dir,
        &["record", "-n", "2", "-o", "x", "--", "sh", "-c", "exit 3"],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("2 of the runs wrote no report"), "{err}");
    let script =
        "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; [ $n = 1 ] && exit 5; exit 0";
    let o = cli(
        &dir,
        &["record", "-n", "3", "-o", "y", "--", "sh", "-c", script],
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("exit statuses disagree (2 exited 0, 1 exited 5); exiting with 5"),
        "{err}"
    );
    let o = cli(
        &dir,
        &["record", "-n", "1", "-o", "z", "--", "/no/such/program"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .starts_with("perfgraph: /no/such/program: cannot run"),
        "{:?}",
        text(&o)
    );
}

/// The power trials: k = 5 flagged in at least 9 of 10 (2 of 3 by default), only `residual` and
/// `solve` as far as implied, the interval holding 5% as often (each misses 5% of the time by design);
/// k = 0 passes; at full size k = 2 and 10 once each, their intervals holding k, 10 flagged.
///
/// The sections wait (`GATE_WORK=sleep`) rather than compute: on this test's 2-core VM a fixed loop's
/// CPU time moves between two speeds some 1.6 times apart from one run to the next (docs/history.md, "The
/// CI gate"), which 10 runs cannot see through at 5%, and the gate then rightly says `undecided`. What
/// this test proves is the machinery end to end (interleaving, samples, intervals, Holm, the verdicts,
/// the exit codes); the statistics' power and calibration under noise are the seeded simulations of
/// `gate::stats`'s unit tests.
#[test]
fn a_section_made_5_percent_slower_is_flagged_with_an_interval_that_holds_it_and_0_passes() {
    let _turn = turn();
    let dir = scratch("gate", "power");
    let trials = if full() { 10 } else { 3 };
    let mut cases: Vec<u32> = vec![5; trials];
    cases.push(0);
    if full() {
        cases.extend([2, 10]);
    }
    let (mut flagged, mut held) = (0, 0);
    for (t, &k) in cases.iter().enumerate() {
        let name = format!("k{k}-{t}");
        // residual waits 150 ms, so that 5% of it (7.5 ms) is more than a wake-up is late under load: with
        // both cores busy, a fifth of the runs woke 2.5 to 4.8 ms late, and at 30 ms those late base runs
        // outran the head's, which no test of 10 runs a side tells from no change (docs/history.md).
        let env = [("GATE_WORK", "sleep"), ("GATE_RESIDUAL", "5")];
        // The 10 runs a side at full size; 5 by default, where a clean separation still shows
        // (2 / C(10, 5) = 0.008, under 0.05 / 4 rows).
        record_in(&dir, &name, if full() { 10 } else { 5 }, 0, k, "wall", &env);
        let o = cli(&dir, &["diff", &name]);
        let (table, _) = text(&o);
        let (change, low, high, mark) = row(&table, "residual");
        eprintln!("k = {k}: residual {change:+.1}% [{low:+.1}, {high:+.1}] {mark}");
        for other in ["assemble", "update"] {
            assert_ne!(row(&table, other).3, "REGRESSED", "{table}");
        }
        // `solve` holds the three: k% of five sevenths; flagged only with an interval that holds it.
        let (_, slow, shigh, smark) = row(&table, "solve");
        let implied = f64::from(k) * 5.0 / 7.0;
        if smark == "REGRESSED" {
            assert!(slow <= implied + 0.2 && implied - 0.2 <= shigh, "{table}");
        }
        // The knob adds k% to the wait asked for; a wait overshoots by a fixed tenth of a millisecond or
        // so, which makes the section's change a little less than k (4.97% for k = 5): within 0.3.
        let holds = low <= f64::from(k) + 0.3 && f64::from(k) - 0.3 <= high;
        match k {
            5 => {
                flagged += usize::from(o.status.code() == Some(1) && mark == "REGRESSED");
                held += usize::from(holds);
            }
            0 => {
                assert_eq!(o.status.code(), Some(0), "{table}");
                assert!(
                    table.contains("No regression beyond the noise (1%)."),
                    "{table}"
                );
            }
            10 => {
                assert_eq!(
                    (o.status.code(), mark.as_str()),
                    (Some(1), "REGRESSED"),
                    "{table}"
                );
                assert!(holds, "{table}");
            }
            _ => assert!(holds, "{table}"),
        }
    }
    // At full size the bound, 9 of 10. By default 2 of 3: under two burners a trial was
    // flagged in 37 of 40 (docs/history.md), so asking all 3 would fail about one run in five.
    let needed = if full() { 9 } else { 2 };
    assert!(flagged >= needed, "flagged {flagged} of {trials}");
    assert!(held >= needed, "the interval held 5% in {held} of {trials}");
}

/// The program compared with itself, 5 runs a side, a CPU burner (`yes`) running through every other
/// comparison. The bound is 5 failures in all over 100 simulated comparisons and 20 real ones;
/// the simulation (`gate/tests.rs`) had 1, so at most 4 of the 20 here (at most 1 of the default 4).
/// Measured: 0 of 20, idle and under two more burners (docs/history.md).
#[test]
fn the_program_compared_with_itself_rarely_fails_with_or_without_a_burner() {
    let _turn = turn();
    let dir = scratch("gate", "aa");
    let comparisons = if full() { 20 } else { 4 };
    let mut failed = 0;
    for c in 0..comparisons {
        let mut burner =
            (c % 2 == 1).then(|| Command::new("yes").stdout(Stdio::null()).spawn().unwrap());
        let name = format!("aa-{c}");
        // Sections of some 5 ms of CPU each: as noisy here as longer ones (the CPU's two speeds), and
        // the 200 runs at full size stay under 15 s.
        record_in(&dir, &name, 5, 0, 0, "cpu", &[("GATE_ROUNDS", "300000")]);
        if let Some(b) = &mut burner {
            b.kill().unwrap();
            b.wait().unwrap();
        }
        let o = cli(&dir, &["diff", &name]);
        eprintln!(
            "comparison {c}{}: exit {:?}",
            if burner.is_some() { " (burner)" } else { "" },
            o.status.code()
        );
        if o.status.code() == Some(1) {
            failed += 1;
            eprintln!("comparison {c} failed:\n{}", text(&o).0);
        }
        assert!(matches!(o.status.code(), Some(0 | 1 | 3)), "{:?}", text(&o));
    }
    let allowed = if full() { 4 } else { 1 };
    assert!(failed <= allowed, "{failed} of {comparisons} failed");
}

#[test]
fn instructions_under_callgrind_decide_with_two_runs_a_side_and_flag_the_section() {
    let _turn = turn();
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("note: instructions_under_callgrind did not run: valgrind is not installed");
        return;
    }
    let dir = scratch("gate", "instr");
    // Callgrind runs the program some 20 times slower: 2 runs a side of a small step (counts are exact).
    record_in(
        &dir,
        "i",
        2,
        0,
        10,
        "instructions",
        &[("GATE_ROUNDS", "100000")],
    );
    let o = cli(&dir, &["diff", "i"]);
    let (table, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{table}");
    let (change, low, high, mark) = row(&table, "residual");
    assert_eq!(mark, "REGRESSED", "{table}");
    // Counts vary by a few hundred instructions between runs (the threads' interleaving): the counts
    // decide, with an interval of every head run over every base run.
    assert!(
        (9.0..=11.0).contains(&change) && low <= change && change <= high && high - low <= 0.2,
        "{table}"
    );
    assert!(
        table.contains("counted") && table.contains("were decided by their counts"),
        "{table}"
    );
    assert_ne!(row(&table, "assemble").3, "REGRESSED", "{table}");
}

#[test]
fn bad_bundles_get_one_line_and_exit_2() {
    let _turn = turn();
    let dir = scratch("gate", "bad");
    record(&dir, "good", 2, 0, 0, "wall");
    let one_line = |args: &[&str], says: &str| {
        let o = cli(&dir, args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    };
    std::fs::create_dir(dir.join("empty")).unwrap();
    one_line(&["diff", "empty"], "is not a bundle of `perfgraph record`");
    let manifest = std::fs::read_to_string(dir.join("good/manifest.json")).unwrap();
    for (name, text, says) in [
        ("cut", &manifest[..manifest.len() / 2], "not JSON"),
        (
            "escape",
            &manifest.replacen("runs/", "../", 1),
            "not a path inside the bundle",
        ),
        (
            "version",
            &manifest.replace("\"perfgraph_bundle\": 1", "\"perfgraph_bundle\": 9"),
            "format 9",
        ),
    ] {
        std::fs::create_dir(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("manifest.json"), text).unwrap();
        one_line(&["diff", name], says);
    }
    std::fs::create_dir(dir.join("gone")).unwrap();
    std::fs::write(dir.join("gone/manifest.json"), &manifest).unwrap();
    one_line(&["diff", "gone"], "no such file");
    // A bundle with no baseline alone.
    let o = cli(
        &dir,
        &[
            "record",
            "-n",
            "2",
            "-o",
            "solo",
            "--",
            example("gate").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    one_line(&["diff", "solo"], "a bundle with no baseline");
    // Against another bundle, it compares (each side its command's runs).
    let o = cli(&dir, &["diff", "solo", "good"]);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{:?}", text(&o));
}

#[test]
fn history_finds_the_commit_where_a_section_changed_and_draws_it() {
    let _turn = turn();
    let dir = scratch("gate", "history");
    let sleep = [("GATE_WORK", "sleep")];
    record_in(&dir, "fast", 3, 0, 0, "wall", &sleep);
    record_in(&dir, "slow", 3, 0, 20, "wall", &sleep);
    for c in 0..16 {
        let bundle = if c < 9 { "fast" } else { "slow" };
        let commit = format!("{c:02}{}", "a".repeat(38));
        let o = cli(&dir, &["history", "add", bundle, "--commit", &commit]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    }
    let o = cli(&dir, &["history", "--plot", "h.svg"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The same two bundles, added again and again: `residual`'s series steps by 20% at commit 9.
    let line = out
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("residual"))
        .unwrap_or_else(|| panic!("{out}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(w[0], "09aaaaaaaaaa", "{out}");
    let change: f64 = w[4].trim_end_matches('%').parse().unwrap();
    // 20% asked; a median of 3 runs on a busy machine may be a few ms off either way.
    assert!((10.0..40.0).contains(&change), "{out}");
    let svg = std::fs::read_to_string(dir.join("h.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("residual"), "{svg}");
    // A store that is not one: one line, exit 2.
    std::fs::write(
        dir.join(".perfgraph/history/history.jsonl"),
        "{\"commit\": 1}\n",
    )
    .unwrap();
    let o = cli(&dir, &["history"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o).1.lines().count(), 1, "{:?}", text(&o));
}

#[test]
fn a_progress_bar_on_a_terminal_and_none_elsewhere() {
    let _turn = turn();
    let dir = scratch("gate", "bar");
    // On a pipe: no bar.
    let o = cli(&dir, &["record", "-n", "2", "-o", "pipe", "--", "true"]);
    assert!(
        !text(&o).1.contains("perfgraph record: ["),
        "{:?}",
        text(&o)
    );
    // On a pseudo-terminal (util-linux's `script` gives the command one): the bar, redrawn in place with
    // the runs done, then erased before the closing lines.
    let line = format!("{CLI} record -n 3 -o tty -- true");
    let Ok(o) = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(&*dir)
        .stdin(Stdio::null())
        .output()
    else {
        eprintln!(
            "note: a_progress_bar_on_a_terminal did not run: no `script` (util-linux) to give a terminal"
        );
        return;
    };
    let out = String::from_utf8_lossy(&o.stdout);
    for done in 0..3 {
        assert!(
            out.contains("\rperfgraph record: [")
                && out.contains(&format!("] {done}/3 runs\x1b[K")),
            "{out:?}"
        );
    }
    assert!(
        out.contains("\r\x1b[Kperfgraph: 3 runs (3 of the command)"),
        "{out:?}"
    );
}
