//! The perfgraph background thread's CPU time, read from `/proc/self/task` (Linux).

use std::time::Duration;

/// CPU time of the thread named `perfgraph` so far: `schedstat`'s nanoseconds on CPU where the kernel has
/// it, else `stat`'s user + system ticks (at the usual 100 per second).
pub fn perfgraph_thread_cpu() -> Option<Duration> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    for task in tasks.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != "perfgraph" {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        {
            return Some(Duration::from_nanos(ns));
        }
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        let after_comm = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        // Fields 14 and 15 of stat (utime, stime) are at indices 11 and 12 counting from field 3 (the state).
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        return Some(Duration::from_millis(ticks * 10));
    }
    None
}
