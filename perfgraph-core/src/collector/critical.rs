//! The critical path at exit (`PERFGRAPH_REPORT=critical`): the run's threads kept as a [`Timeline`] from
//! the records the threads drain, read as the trace writer reads them (a section call, a lock's hold, a
//! wait and the hand-over that ended it, a thread's start), and analysed (`report::critical`) once the
//! exit's last drain is in. The same mapping as the trace's, on the trace's clock when there is one, so
//! the table at exit and `perfgraph report --critical-path` on the run's trace give the same answer.
//!
//! What the path needs grows with the run (every call and wait, as a trace does), so the timeline is kept
//! within perfgraph's output budget (`base::budget`): past it, or when the system refuses the memory, the
//! timeline is dropped at once and the table says why, instead of the process growing without bound.

use std::collections::HashMap;
use std::sync::Arc;

use crate::base::budget::{self, Charge, Refused};
use crate::base::{process, registry};
use crate::data::timeline::{Blocked, Call, ThreadLine, Timeline};
use crate::local::locks;
use crate::local::record::{self, Record};
use crate::local::thread::ThreadState;
use crate::local::threads;

/// Bytes taken from the budget at a time.
const STEP: usize = 1 << 20;

/// Bytes counted for a thread's line besides its calls and waits.
const LINE_BYTES: usize = 256;

/// The timeline being kept, in ticks until [`Recorder::finish`].
#[derive(Default)]
pub(crate) struct Recorder {
    timeline: Timeline,
    /// Line by thread index, and each line's thread index.
    lines: HashMap<u32, usize>,
    indices: Vec<u32>,
    /// Whether a line has its thread's own name (from its records).
    named: Vec<bool>,
    /// Hand-overs: the releasing thread's index and the release, the waiting line and its acquisition.
    flows: Vec<(u32, u64, usize, u64)>,
    /// Name ids of sections, and of locks as waited for and as held (`hold: <lock>`).
    sections: HashMap<u32, u32>,
    locks: HashMap<u32, (u32, u32)>,
    /// Records that end later are not the path's (the exit's last drain comes next).
    end_ticks: Option<u64>,
    charge: Charge,
    /// Bytes counted so far (what the vectors may hold at twice their length).
    counted: usize,
    /// Calls, waits and hand-overs kept.
    events: u64,
    /// The budget refused: the events kept by then.
    refused: Option<u64>,
}

/// What [`Recorder::finish`] gives: the timeline in nanoseconds, or why there is none.
pub(crate) type Finished = Result<Timeline, String>;

impl Recorder {
    /// Records `thread` completed (section calls), in the order they ended.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if self.refused.is_some() || records.is_empty() {
            return;
        }
        if self.try_records(thread, records).is_err() {
            self.give_up();
        }
    }

    fn try_records(&mut self, thread: &ThreadState, records: &[Record]) -> Result<(), Refused> {
        let line = self.line(thread.index, Some(&thread.name))?;
        for r in records {
            // As the trace: a call running at the end is cut there; one that started after it is out.
            let cut = self.end_ticks.filter(|&e| r.end > e && r.start <= e);
            if cut.is_none() && self.after_end(r.end) {
                continue;
            }
            let name = self.section_name(r.section)?;
            let mut call = Call::new(name, r.start, cut.unwrap_or(r.end));
            if let Some(cpu) = r.cpu {
                call = call.self_cpu(cpu.self_cpu_ns);
            }
            self.push_call(line, call)?;
        }
        Ok(())
    }

    /// Marks `thread` pushed: its locks' holds, waits and hand-overs (the rest is not the path's).
    pub(crate) fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        if self.refused.is_some() || marks.is_empty() {
            return;
        }
        let kept: Result<(), Refused> = (|| {
            // As the trace, which names the thread for any mark.
            let line = self.line(thread.index, Some(&thread.name))?;
            let locks = marks
                .iter()
                .filter(|r| matches!(r.depth, record::HOLD | record::WAIT | record::LOCK_FLOW));
            for r in locks {
                if self.after_end(r.end) {
                    continue;
                }
                self.on_lock(line, r)?;
            }
            Ok(())
        })();
        if kept.is_err() {
            self.give_up();
        }
    }

    fn on_lock(&mut self, line: usize, r: &Record) -> Result<(), Refused> {
        // Another thread named in the record: its index + 1, 0 when unknown.
        let other = |word: u64| (word as u32).checked_sub(1);
        let (waited, held) = self.lock_names(r.section)?;
        match r.depth {
            record::HOLD => self.push_call(line, Call::new(held, r.start, r.end)),
            record::WAIT => {
                let mut b = Blocked::new(waited, r.start, r.end);
                if let Some(holder) = other(r.mark_id() & u32::MAX as u64) {
                    // A thread index until `finish` makes it a line.
                    b = b.held_by(holder);
                }
                self.push_event(line, b, (r.start, r.end), |t| &mut t.blocked)
            }
            _ => {
                let Some(from) = other(r.mark_id()) else {
                    return Ok(());
                };
                self.count(2 * size_of::<(u32, u64, usize, u64)>())?;
                self.flows.try_reserve(1).map_err(|_| Refused)?;
                self.flows.push((from, r.start, line, r.end));
                self.events += 1;
                Ok(())
            }
        }
    }

    /// The exit's last drain comes next: records that end after `ticks` are not the path's.
    pub(crate) fn end_at(&mut self, ticks: u64) {
        self.end_ticks = Some(ticks);
    }

    fn after_end(&self, end: u64) -> bool {
        self.end_ticks.is_some_and(|e| end > e)
    }

    /// The timeline, its times turned into nanoseconds by `to_ns` (the trace's clock, or the reports'),
    /// with the calls still open in `threads` ending at the end, settled and its hand-overs joined to the
    /// waits they ended; or the line saying why there is none.
    pub(crate) fn finish(
        mut self,
        threads: &[Arc<ThreadState>],
        to_ns: &dyn Fn(u64) -> u64,
    ) -> Finished {
        if self.refused.is_none() {
            let end = self.end_ticks.unwrap_or(u64::MAX);
            let open: Result<(), Refused> = (|| {
                for t in threads {
                    for f in t.open_frames().into_iter().filter(|f| f.start <= end) {
                        let line = self.line(t.index, Some(&t.name))?;
                        let name = self.section_name(f.section)?;
                        let until = self.end_ticks.unwrap_or(f.start).max(f.start);
                        self.push_call(line, Call::new(name, f.start, until))?;
                    }
                }
                Ok(())
            })();
            if open.is_err() {
                self.give_up();
            }
        }
        if let Some(events) = self.refused {
            return Err(format!(
                "not worked out: the run's calls and waits ({events} kept by then) passed perfgraph's \
                 {} MiB output budget; write a trace (PERFGRAPH_TRACE=run.json) and run `perfgraph \
                 report --critical-path run.json`",
                budget::LIMIT >> 20
            ));
        }
        self.join_others()?;
        let mut t = std::mem::take(&mut self.timeline);
        name_lines(&mut t, &self.indices, &self.named);
        for line in &mut t.threads {
            process::progress();
            for c in &mut line.calls {
                (c.start_ns, c.end_ns) = (to_ns(c.start_ns), to_ns(c.end_ns));
            }
            for b in &mut line.blocked {
                (b.start_ns, b.end_ns) = (to_ns(b.start_ns), to_ns(b.end_ns));
            }
            line.end_ns = to_ns(line.end_ns);
            // A line seen only as another thread's holder has no span: it is empty at the end's instant.
            line.start_ns = match line.start_ns {
                u64::MAX => line.end_ns,
                start => to_ns(start).min(line.end_ns),
            };
        }
        t.settle();
        for &(from, released, to, acquired) in &self.flows {
            if let Some(&from) = self.lines.get(&from) {
                t.attach_flow(from as u32, to_ns(released), to, to_ns(acquired));
            }
        }
        if t.threads.is_empty() {
            return Err("nothing to work out: no thread recorded a section".into());
        }
        Ok(t)
    }

    /// Lines for the threads the waits and hand-overs name (as the trace names them), each wait's holder
    /// turned from a thread index into its line, and each hand-over's ends in the lines' spans.
    fn join_others(&mut self) -> Result<(), String> {
        let too_big = |_| "not worked out: no memory for the threads' lines".to_owned();
        let flows = std::mem::take(&mut self.flows);
        for &(from, released, to, acquired) in &flows {
            let line = self.line(from, None).map_err(too_big)?;
            span(&mut self.timeline.threads[line], released, released);
            span(&mut self.timeline.threads[to], acquired, acquired);
        }
        self.flows = flows;
        for th in 0..self.timeline.threads.len() {
            for k in 0..self.timeline.threads[th].blocked.len() {
                if let Some(index) = self.timeline.threads[th].blocked[k].holder {
                    let line = self.line(index, None).map_err(too_big)?;
                    self.timeline.threads[th].blocked[k].holder = Some(line as u32);
                }
            }
        }
        Ok(())
    }

    /// The line of thread `index`, added at its first event (named later when `name` is `None`).
    fn line(&mut self, index: u32, name: Option<&str>) -> Result<usize, Refused> {
        if let Some(&line) = self.lines.get(&index) {
            if let (Some(name), false) = (name, self.named[line]) {
                self.timeline.threads[line].name = name.to_owned();
                self.named[line] = true;
            }
            return Ok(line);
        }
        self.count(LINE_BYTES + name.map_or(0, str::len))?;
        self.timeline.threads.try_reserve(1).map_err(|_| Refused)?;
        let line = self.timeline.thread(name.unwrap_or(""), u64::MAX, 0);
        self.lines.insert(index, line);
        self.indices.push(index);
        self.named.push(name.is_some());
        Ok(line)
    }

    fn push_call(&mut self, line: usize, call: Call) -> Result<(), Refused> {
        self.push_event(line, call, (call.start_ns, call.end_ns), |t| &mut t.calls)
    }

    /// Keeps `event` (a call or a wait, from `start` to `end`) in the list of `line` that `list` picks,
    /// counted against the budget, and widens the line's span to cover it.
    fn push_event<T>(
        &mut self,
        line: usize,
        event: T,
        (start, end): (u64, u64),
        list: fn(&mut ThreadLine) -> &mut Vec<T>,
    ) -> Result<(), Refused> {
        self.count(2 * size_of::<T>())?;
        let t = &mut self.timeline.threads[line];
        let events = list(t);
        events.try_reserve(1).map_err(|_| Refused)?;
        events.push(event);
        span(t, start, end);
        self.events += 1;
        Ok(())
    }

    fn section_name(&mut self, section: u32) -> Result<u32, Refused> {
        if let Some(&id) = self.sections.get(&section) {
            return Ok(id);
        }
        let name = registry::info(section)
            .map_or_else(|| format!("section-{section}"), |i| i.name.to_owned());
        let id = self.intern(&name)?;
        self.sections.insert(section, id);
        Ok(id)
    }

    /// A lock name's ids as waited for (`<lock>`) and as held (`hold: <lock>`).
    fn lock_names(&mut self, lock: u32) -> Result<(u32, u32), Refused> {
        if let Some(&ids) = self.locks.get(&lock) {
            return Ok(ids);
        }
        let name = locks::name(lock).unwrap_or("lock");
        let ids = (self.intern(name)?, self.intern(&format!("hold: {name}"))?);
        self.locks.insert(lock, ids);
        Ok(ids)
    }

    fn intern(&mut self, name: &str) -> Result<u32, Refused> {
        self.count(64 + 2 * name.len())?;
        Ok(self.timeline.name(name))
    }

    /// Counts `bytes` more, taking them from the budget a step at a time.
    fn count(&mut self, bytes: usize) -> Result<(), Refused> {
        self.counted += bytes;
        if self.counted > self.charge.bytes() {
            self.charge
                .take(STEP.max(self.counted - self.charge.bytes()))?;
        }
        Ok(())
    }

    /// The budget or the system refused: the timeline goes now (its memory back to the budget), and the
    /// table will say why there is no path.
    #[cold]
    fn give_up(&mut self) {
        let events = self.events;
        *self = Recorder {
            refused: Some(events),
            ..Recorder::default()
        };
    }
}

/// Widens `line`'s span to hold `start..end`.
fn span(line: &mut ThreadLine, start: u64, end: u64) {
    line.start_ns = line.start_ns.min(start);
    line.end_ns = line.end_ns.max(end);
}

/// Names each line as the trace does: its thread's name (a line seen only through another's wait, by the
/// live list, else `thread-<index>`); a name two lines share gets the trace's thread id after it.
fn name_lines(t: &mut Timeline, indices: &[u32], named: &[bool]) {
    let live = threads::all();
    for (line, &index) in indices.iter().enumerate() {
        if !named[line] {
            t.threads[line].name = live
                .iter()
                .find(|s| s.index == index)
                .map_or_else(|| format!("thread-{index}"), |s| s.name.clone());
        }
    }
    let mut count: HashMap<String, usize> = HashMap::new();
    for line in &t.threads {
        *count.entry(line.name.clone()).or_default() += 1;
    }
    for (line, &index) in indices.iter().enumerate() {
        let name = &mut t.threads[line].name;
        if count[name.as_str()] > 1 {
            // The trace's thread id of thread `index` (`export::chrome`).
            *name += &format!(" (tid {})", index as u64 + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(section: u32, start: u64, end: u64) -> Record {
        Record {
            depth: 0,
            ..Record::mark(section, start, end, 0, 0)
        }
    }

    #[test]
    fn records_become_the_timeline_the_trace_would_give() {
        let t = ThreadState::detached();
        let mut r = Recorder::default();
        r.on_records(&t, &[call(0, 10, 90)]);
        // Waited 20..60 for lock 0 held by thread 4000, which handed it over at 59; held it 60..70.
        r.on_marks(
            &t,
            &[
                Record::mark(0, 20, 60, record::WAIT, 4001),
                Record::mark(0, 59, 60, record::LOCK_FLOW, 4001),
                Record::mark(0, 60, 70, record::HOLD, 0),
            ],
        );
        // After the end: left out; across it: cut there.
        r.end_at(100);
        r.on_records(&t, &[call(0, 101, 120), call(0, 95, 130)]);
        let tl = r.finish(&[], &|ticks| ticks * 2).unwrap();
        let me = tl
            .threads
            .iter()
            .position(|l| l.name == "(measurement)")
            .unwrap();
        let other = tl
            .threads
            .iter()
            .position(|l| l.name == "thread-4000")
            .unwrap();
        let line = &tl.threads[me];
        let spans: Vec<(u64, u64)> = line.calls.iter().map(|c| (c.start_ns, c.end_ns)).collect();
        assert_eq!(spans, [(20, 180), (120, 140), (190, 200)]);
        assert!(tl.names[line.calls[1].name as usize].starts_with("hold: "));
        let b = line.blocked[0];
        assert_eq!((b.start_ns, b.end_ns), (40, 120));
        assert_eq!(b.holder, Some(other as u32));
        let w = b.waker.unwrap();
        assert_eq!((w.thread, w.at_ns), (other as u32, 118));
        assert_eq!((line.start_ns, line.end_ns), (20, 200));
    }

    #[test]
    fn a_refused_timeline_is_dropped_and_says_why() {
        let t = ThreadState::detached();
        let mut r = Recorder::default();
        r.on_records(&t, &[call(0, 10, 90)]);
        r.give_up();
        // Nothing more is kept.
        r.on_records(&t, &[call(0, 10, 90)]);
        assert!(r.timeline.threads.is_empty() && r.charge.bytes() == 0);
        let e = r.finish(&[], &|t| t).unwrap_err();
        assert!(e.contains("64 MiB output budget"), "{e}");
        assert!(e.contains("1 kept by then"), "{e}");
        assert!(
            e.contains("perfgraph report --critical-path run.json"),
            "{e}"
        );
    }
}
