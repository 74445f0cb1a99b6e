//! The machine and the run, as the record's header gives them.

use std::path::Path;
use std::process::Command;

/// The machine, the code and the moment of one record.
pub struct Machine {
    /// The command that made the record.
    pub command: String,
    /// `date -u +%Y-%m-%d %H:%M`.
    pub date: String,
    /// The commit (`git rev-parse --short=12 HEAD`); empty outside a repository.
    pub commit: String,
    /// Whether tracked files other than the record differ from the commit.
    pub dirty: bool,
    /// The CPU's model name from `/proc/cpuinfo`.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// The clock perfgraph uses (`perfgraph_core::clock_source`).
    pub clock_source: String,
    /// The kernel's current clocksource.
    pub kernel_clocksource: String,
    /// `uname -sr`.
    pub kernel: String,
    /// `rustc --version`.
    pub toolchain: String,
    /// The 1, 5 and 15 minute load averages, space-separated.
    pub load: String,
}

/// The trimmed stdout of `cmd args`, or an empty string if it cannot run.
fn sh(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

impl Machine {
    /// Reads the machine and the run; `out` is the record's own path.
    pub fn read(command: &str, out: &Path) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']))
            })
            .unwrap_or("unknown")
            .to_owned();
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        let kernel_clocksource = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        let commit = sh("git", &["rev-parse", "--short=12", "HEAD"]);
        // The record itself does not count: a previous run's uncommitted record is not a change to the code.
        let exclude = format!(":(exclude){}", out.display());
        let dirty = !sh(
            "git",
            &[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                &exclude,
            ],
        )
        .is_empty();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        Machine {
            command: command.to_owned(),
            date: sh("date", &["-u", "+%Y-%m-%d %H:%M"]),
            commit,
            dirty,
            cpu,
            cores,
            clock_source: perfgraph_core::clock_source().to_owned(),
            kernel_clocksource: kernel_clocksource.trim().to_owned(),
            kernel: sh("uname", &["-sr"]),
            toolchain: sh("rustc", &["--version"]),
            load: load
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}
