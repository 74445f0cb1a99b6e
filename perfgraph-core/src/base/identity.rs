//! Which process this is, for files written by many processes of one job: its pid, its rank (from the
//! launcher's environment), its host, and a wall-clock anchor for the runtime's time zero. It also expands
//! the `{pid}`, `{rank}` and `{host}` placeholders of output paths.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The launchers' rank variables, in the order they are read: Open MPI, MPICH/Intel MPI (PMI), PMIx,
/// Slurm's `srun`, and the plain `RANK` of torchrun and friends.
pub const RANK_VARIABLES: [&str; 5] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "RANK",
];

/// The rank that `lookup` (a variable's value by name) gives: the first of [`RANK_VARIABLES`] that is set
/// to a whole number; `None` without one.
pub fn rank_from(lookup: impl Fn(&str) -> Option<String>) -> Option<u32> {
    RANK_VARIABLES
        .iter()
        .find_map(|v| lookup(v).and_then(|s| s.trim().parse::<u32>().ok()))
}

/// The rank a launcher set (read from the environment once), `None` without a launcher.
pub fn launcher_rank() -> Option<u32> {
    static RANK: OnceLock<Option<u32>> = OnceLock::new();
    *RANK.get_or_init(|| rank_from(|v| std::env::var(v).ok()))
}

/// This process's rank: the launcher's, else 0.
pub fn rank() -> u32 {
    launcher_rank().unwrap_or(0)
}

/// This machine's host name (read once; `localhost` if it cannot be read).
pub fn host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| super::sys::host_name().unwrap_or_else(|| "localhost".to_owned()))
}

/// Wall-clock time of the runtime's time zero, ns since the Unix epoch; 0 before the runtime's start.
static START_UNIX_NS: AtomicU64 = AtomicU64::new(0);

/// Records the wall-clock time of the runtime's time zero (the runtime's start, once, right after the
/// clock's start).
pub fn set_start_unix_ns(ns: u64) {
    START_UNIX_NS.store(ns, Ordering::Relaxed);
}

/// Wall-clock time of the runtime's time zero, ns since the Unix epoch.
pub fn start_unix_ns() -> u64 {
    START_UNIX_NS.load(Ordering::Relaxed)
}

/// Now, ns since the Unix epoch (0 if the clock is before it).
pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// `path` with `{pid}`, `{rank}` and `{host}` replaced (any other text, braces included, kept as it is).
/// The host name is made safe as one path component by [`component`], so it cannot add or climb a
/// directory.
pub fn expand(path: &Path, pid: u32, rank: u32, host: &str) -> PathBuf {
    let Some(s) = path.to_str() else {
        return path.to_path_buf();
    };
    if !s.contains('{') {
        return path.to_path_buf();
    }
    PathBuf::from(
        s.replace("{pid}", &pid.to_string())
            .replace("{rank}", &rank.to_string())
            .replace("{host}", &component(host)),
    )
}

/// `value` made safe to stand as (part of) one path component: a `/` or a control character becomes `_`,
/// and a value that is exactly `.` or `..` becomes `_` or `__`, so it can neither add a directory, climb
/// one, nor put a line break or an escape sequence into a file name.
pub fn component(value: &str) -> String {
    if value == "." || value == ".." {
        return "_".repeat(value.len());
    }
    value
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_rank_comes_from_the_first_launcher_variable_set() {
        assert_eq!(rank_from(env(&[])), None);
        assert_eq!(rank_from(env(&[("RANK", "7")])), Some(7));
        assert_eq!(
            rank_from(env(&[("RANK", "7"), ("SLURM_PROCID", "3")])),
            Some(3)
        );
        assert_eq!(
            rank_from(env(&[("PMI_RANK", "2"), ("OMPI_COMM_WORLD_RANK", "1")])),
            Some(1)
        );
        // A value that is not a rank is passed over.
        assert_eq!(
            rank_from(env(&[("PMIX_RANK", "x"), ("RANK", "5")])),
            Some(5)
        );
    }

    #[test]
    fn placeholders_expand_and_nothing_else_changes() {
        let p = expand(
            Path::new("out/{host}/run.{rank}.{pid}.{x}.json"),
            42,
            3,
            "n/1",
        );
        assert_eq!(p, Path::new("out/n_1/run.3.42.{x}.json"));
    }

    #[test]
    fn a_host_name_cannot_climb_a_directory_or_break_a_line() {
        let at = |host| expand(Path::new("logs/{host}/run.json"), 1, 0, host);
        assert_eq!(at(".."), Path::new("logs/__/run.json"));
        assert_eq!(at("."), Path::new("logs/_/run.json"));
        assert_eq!(at("a\nb\x1b[2J"), Path::new("logs/a_b_[2J/run.json"));
        assert_eq!(
            at("..."),
            Path::new("logs/.../run.json"),
            "not a climb: kept"
        );
        assert_eq!(at("node.cluster"), Path::new("logs/node.cluster/run.json"));
    }
}
