//! A Chrome trace perfgraph wrote, read as a [`Timeline`] for the critical path: per thread its section
//! slices and its lock holds as calls (a hold is a call named `hold: <lock>`, so a what-if can shrink
//! it), its `wait: <lock>` slices as blocked intervals (the holder named in the slice's args), and each
//! flow arrow from a release to the acquisition it let in as the wait's waker.
//!
//! Threads are keyed by process and thread id, so a merged trace of many processes keeps them apart; a
//! name two threads share gets the thread id after it (` (tid 7)`), and with many processes the process
//! id too. The main thread of a process runs until the trace's end event, where there is one. A trace is
//! untrusted: whatever it holds gives a timeline or one error line.

use std::collections::HashMap;
use std::io::Read;

use serde_json::Value;

use super::chrome_read::read_events;
use crate::data::timeline::{Blocked, Call, Timeline};

/// A thread while reading: its process and thread ids, and its name if the trace gave one.
#[derive(Default)]
struct Seen {
    key: (u64, u64),
    name: Option<String>,
}

/// The flows' two ends by id: the release (`s`) and the acquisition (`f`), as (thread, ns).
type FlowEnds = (Option<(usize, u64)>, Option<(usize, u64)>);

#[derive(Default)]
struct Reader {
    timeline: Timeline,
    seen: Vec<Seen>,
    by_key: HashMap<(u64, u64), usize>,
    /// Per thread, its waits' holders by name, resolved at the end.
    holders: Vec<(usize, usize, String)>,
    flows: HashMap<(u64, u64), FlowEnds>,
}

/// Reads a Chrome trace perfgraph wrote (or a merge of them) into a settled [`Timeline`].
pub fn read_timeline(reader: impl Read) -> Result<Timeline, String> {
    let mut r = Reader::default();
    read_events(reader, |e| {
        r.event(&e);
        Ok(true)
    })?;
    if r.seen.is_empty() {
        return Err("no thread's slices in the trace: nothing to analyse".into());
    }
    Ok(r.finish())
}

/// Microseconds as written (with nanosecond decimals) to nanoseconds.
fn ns(v: Option<&Value>) -> Option<u64> {
    let us = v?.as_f64()?;
    (us.is_finite() && us >= 0.0).then(|| (us * 1000.0).round() as u64)
}

impl Reader {
    fn event(&mut self, e: &Value) {
        let text = |k: &str| e.get(k).and_then(Value::as_str);
        let id = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
        let key = (id("pid"), id("tid"));
        // The critical path perfgraph wrote at exit is the answer, not the run: it is passed over.
        if text("cat") == Some("critical") {
            return;
        }
        match (text("ph"), text("cat")) {
            (Some("M"), _) if text("name") == Some("thread_name") => {
                let name = e.pointer("/args/name").and_then(Value::as_str);
                let th = self.thread(key);
                self.seen[th].name = name.map(str::to_owned);
            }
            (Some("X"), cat) => {
                let (Some(start), Some(dur)) = (ns(e.get("ts")), ns(e.get("dur"))) else {
                    return;
                };
                let name = text("name").unwrap_or("");
                let th = self.thread(key);
                let end = start.saturating_add(dur);
                self.span(th, start, end);
                let lock = cat == Some("lock");
                if let Some(on) = name.strip_prefix("wait: ").filter(|_| lock) {
                    let on = self.timeline.name(on);
                    let line = &mut self.timeline.threads[th];
                    line.blocked.push(Blocked::new(on, start, end));
                    if let Some(holder) = e.pointer("/args/holder").and_then(Value::as_str) {
                        let k = line.blocked.len() - 1;
                        self.holders.push((th, k, holder.to_owned()));
                    }
                } else if cat.is_none() || lock {
                    let name = self.timeline.name(name);
                    let mut call = Call::new(name, start, end);
                    if let Some(cpu) = e.pointer("/args/self_cpu_ns").and_then(Value::as_u64) {
                        call = call.self_cpu(cpu);
                    }
                    self.timeline.threads[th].calls.push(call);
                }
            }
            (Some(ph @ ("s" | "f")), Some("lock")) => {
                let Some(at) = ns(e.get("ts")) else { return };
                let th = self.thread(key);
                // The arrow's ends are 1 ns inside the slices they bind to (see the writer).
                let at = if ph == "s" {
                    at + 1
                } else {
                    at.saturating_sub(1)
                };
                self.span(th, at, at);
                let ends = self.flows.entry((key.0, id("id"))).or_default();
                if ph == "s" {
                    ends.0 = Some((th, at));
                } else {
                    ends.1 = Some((th, at));
                }
            }
            _ => {}
        }
    }

    /// The thread of `key`, added at its first event.
    fn thread(&mut self, key: (u64, u64)) -> usize {
        if let Some(&th) = self.by_key.get(&key) {
            return th;
        }
        let th = self.timeline.thread("", u64::MAX, 0);
        self.seen.push(Seen { key, name: None });
        self.by_key.insert(key, th);
        th
    }

    fn span(&mut self, th: usize, start: u64, end: u64) {
        let line = &mut self.timeline.threads[th];
        line.start_ns = line.start_ns.min(start);
        line.end_ns = line.end_ns.max(end);
    }

    fn finish(mut self) -> Timeline {
        self.name_threads();
        let mut by_name: HashMap<(u64, &str), Option<usize>> = HashMap::new();
        for (th, s) in self.seen.iter().enumerate() {
            let name = s.name.as_deref().unwrap_or("");
            by_name
                .entry((s.key.0, name))
                .and_modify(|v| *v = None)
                .or_insert(Some(th));
        }
        for (th, k, holder) in &self.holders {
            let pid = self.seen[*th].key.0;
            if let Some(Some(h)) = by_name.get(&(pid, holder.as_str())) {
                self.timeline.threads[*th].blocked[*k].holder = Some(*h as u32);
            }
        }
        let mut t = self.timeline;
        for line in &mut t.threads {
            line.start_ns = line.start_ns.min(line.end_ns);
        }
        t.settle();
        // In the order they were written (a flow's id), as the records at exit come: where two edges
        // end one wait, the later one is its waker in both.
        let mut flows: Vec<_> = self.flows.into_iter().collect();
        flows.sort_unstable_by_key(|&(key, _)| key);
        for (_, ends) in flows {
            if let (Some((from, released)), Some((to, acquired))) = ends {
                t.attach_flow(from as u32, released, to, acquired);
            }
        }
        t
    }

    /// Each thread's name: as the trace gave it, else `thread <tid>`; a name two threads share gets the
    /// thread id after it, and with many processes, the process id.
    fn name_threads(&mut self) {
        let many_processes = self.seen.iter().any(|s| s.key.0 != self.seen[0].key.0);
        let mut count: HashMap<(u64, String), usize> = HashMap::new();
        for s in &self.seen {
            let name = s.name.clone().unwrap_or_default();
            *count.entry((s.key.0, name)).or_default() += 1;
        }
        for (th, s) in self.seen.iter().enumerate() {
            let (pid, tid) = s.key;
            let mut name = s.name.clone().unwrap_or_else(|| format!("thread {tid}"));
            if count[&(pid, s.name.clone().unwrap_or_default())] > 1 {
                name += &format!(" (tid {tid})");
            }
            if many_processes {
                name += &format!(" [pid {pid}]");
            }
            self.timeline.threads[th].name = name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_timeline;

    #[test]
    fn a_wait_gets_its_holder_and_its_waker_from_the_flow() {
        let trace = r#"[
{"args":{"name":"main"},"name":"thread_name","ph":"M","pid":9,"tid":1},
{"args":{"name":"b"},"name":"thread_name","ph":"M","pid":9,"tid":2},
{"name":"work","ph":"X","ts":1.000,"dur":99.000,"pid":9,"tid":2},
{"name":"hold: L","cat":"lock","ph":"X","ts":10.000,"dur":40.000,"pid":9,"tid":2,"args":{}},
{"name":"wait: L","cat":"lock","ph":"X","ts":20.000,"dur":30.010,"pid":9,"tid":1,"args":{"holder":"b"}},
{"name":"L","cat":"lock","ph":"s","id":1,"ts":49.999,"pid":9,"tid":2},
{"name":"L","cat":"lock","ph":"f","id":1,"ts":50.011,"bp":"e","pid":9,"tid":1},
{"args":{"complete":true},"name":"perfgraph trace end","ph":"i","pid":9,"s":"g","tid":0,"ts":200.0}
]"#;
        let t = read_timeline(trace.as_bytes()).unwrap();
        let main = &t.threads[t.threads.iter().position(|l| l.name == "main").unwrap()];
        assert_eq!(main.end_ns, 50_010);
        let b = main.blocked[0];
        assert_eq!((b.start_ns, b.end_ns), (20_000, 50_010));
        let waker = b.waker.unwrap();
        assert_eq!(t.threads[waker.thread as usize].name, "b");
        assert_eq!(waker.at_ns, 50_000);
        assert_eq!(b.holder, Some(waker.thread));
        let held: Vec<&str> = t.threads[waker.thread as usize]
            .calls
            .iter()
            .map(|c| t.names[c.name as usize].as_str())
            .collect();
        assert_eq!(held, ["work", "hold: L"]);
    }

    #[test]
    fn what_is_not_a_trace_is_one_error_line() {
        for bad in ["", "{", "[]", "[{\"ph\":\"X\"}]", "7"] {
            let e = read_timeline(bad.as_bytes()).unwrap_err();
            assert!(!e.contains('\n'), "{bad:?}: {e}");
        }
    }
}
