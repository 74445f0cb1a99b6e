//! What a bundle's manifest says about each run besides its report: the program's commit and compiler, the
//! machine's CPU and load, the time. Each is best effort: what cannot be found is `null`, never an error.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The executable `program` names: itself when it has a `/`, else the first match on `PATH`.
pub fn executable(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The commit (and whether its tree has uncommitted changes) of the git repository that holds `program`'s
/// executable, else of the working directory's; `None` outside any (or without git).
pub fn git_commit(program: &str) -> Option<(String, bool)> {
    let exe_dir = executable(program)
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let dirs = exe_dir.into_iter().chain(std::env::current_dir().ok());
    for dir in dirs {
        let Some(commit) = git(&dir, &["rev-parse", "--verify", "-q", "HEAD"]) else {
            continue;
        };
        let commit = commit.trim().to_owned();
        if commit.len() < 7 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let dirty = git(&dir, &["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|s| !s.trim().is_empty());
        return Some((commit, dirty));
    }
    None
}

/// `git -C dir ARGS`'s standard output, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The compiler named in `program`'s executable (rustc writes `rustc version X` into its `.comment`
/// section), read as a stream: the first 512 MiB at most.
pub fn rustc(program: &str) -> Option<String> {
    const NEEDLE: &[u8] = b"rustc version ";
    const MAX: u64 = 512 << 20;
    let file = std::fs::File::open(executable(program)?).ok()?;
    let mut reader = file.take(MAX);
    let mut buf = vec![0u8; 1 << 16];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = reader.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        carry.extend_from_slice(&buf[..n]);
        if let Some(at) = carry.windows(NEEDLE.len()).position(|w| w == NEEDLE) {
            // The version runs to the NUL that ends the string (it may lie in the next block).
            let mut text: Vec<u8> = carry[at..].to_vec();
            while !text.contains(&0) && text.len() < 256 {
                let n = reader.read(&mut buf).ok()?;
                if n == 0 {
                    break;
                }
                text.extend_from_slice(&buf[..n]);
            }
            let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
            let s = String::from_utf8_lossy(&text[..end.min(256)]);
            return Some(s.trim().to_owned());
        }
        // Keep what could be the start of the needle cut by the block's end.
        let keep = carry.len().saturating_sub(NEEDLE.len() - 1);
        carry.drain(..keep);
    }
}

/// The CPU's model name (`/proc/cpuinfo`).
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`); zeros where unreadable.
pub fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut out = [0.0; 3];
    for (o, w) in out.iter_mut().zip(text.split_whitespace()) {
        *o = w.parse().unwrap_or(0.0);
    }
    out
}

/// Now, ns since the Unix epoch.
pub fn now_unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_test_binary_names_its_compiler_and_the_machine_its_cpu() {
        let me = std::env::current_exe().unwrap();
        let v = rustc(me.to_str().unwrap()).expect("rustc writes its version into .comment");
        assert!(v.starts_with("rustc version 1."), "{v}");
        assert!(cpu_model().is_some_and(|m| !m.is_empty()));
        assert!(load_average().iter().all(|l| *l >= 0.0));
        assert!(executable("sh").is_some());
    }
}
