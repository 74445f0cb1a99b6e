//! Interval statistics (`PERFGRAPH_INTERVAL`), after Preshing's API profiler: every interval, one line per
//! thread and section that ran in it (top-level sections, or down to `PERFGRAPH_INTERVAL_DEPTH`, each under
//! its caller, indented), with the time inside it, the interval's length, the share and the calls; then, per
//! thread, the CPU time it used in the interval (Pikus' point: wall time alone cannot tell computing from
//! waiting). Each line starts with the run's time at the interval's end:
//!
//! ```text
//! [   1.001 s] worker-1 "dlmalloc": 7/1001 ms 0.7% 6481x
//! [   1.001 s] worker-1 CPU: 812/1001 ms 81.1%
//! ```
//!
//! Pure bookkeeping in clock ticks, fed by the background thread: completed calls from the drained records,
//! and at each interval's end the sections still running. A call's time goes to the interval it ran in (a
//! call spanning a boundary is split at it); the call itself counts in the interval where it ends, as
//! Preshing's does. A line is a call path (the sections from the top level down to it), so a section called
//! from two places is two lines, each under its caller.
//!
//! Records arrive in the order calls end, a call after the calls inside it, so a nested call's caller is
//! found after it in the same drain, or among the sections still open on its thread after that drain; a
//! call whose caller is neither (it ended between the drain and that reading) waits for the next drain.

use std::collections::BTreeMap;

use crate::base::clock::{Scale, Ticks};
use crate::base::registry::SectionId;
use crate::local::record::Record;

/// A call path: the sections from the top level down to the call, at most the depth asked for.
pub(crate) type Path = Vec<SectionId>;

/// One line of an interval's statistics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    /// Thread index.
    pub thread: u32,
    /// The call path; its last section is the line's, its length the depth plus one.
    pub path: Path,
    /// Ticks inside the section during the interval.
    pub inside: u64,
    /// Calls that ended in the interval.
    pub calls: u64,
}

impl Line {
    /// The line's section.
    pub(crate) fn section(&self) -> SectionId {
        self.path.last().copied().unwrap_or(0)
    }

    /// Its nesting depth, 0 for a top-level section.
    pub(crate) fn depth(&self) -> usize {
        self.path.len().saturating_sub(1)
    }
}

/// A closed interval: its length and its lines, in order of thread, then call path (a caller before the
/// calls inside it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Interval {
    /// Its end, ticks since the runtime's start.
    pub end: u64,
    /// Length in ticks.
    pub length: u64,
    /// Lines (only threads and call paths that ran).
    pub lines: Vec<Line>,
    /// CPU time each thread used in the interval, ns, in order of thread (only threads that used some).
    pub cpu: Vec<(u32, u64)>,
}

impl Interval {
    /// Per thread that ran top-level sections: `(thread, calls of them that ended, ticks inside them)`, in
    /// order of thread (what the trace's per-thread counter tracks plot).
    pub(crate) fn top_level(&self) -> Vec<(u32, u64, u64)> {
        let mut out: Vec<(u32, u64, u64)> = Vec::new();
        for l in self.lines.iter().filter(|l| l.path.len() == 1) {
            match out.last_mut() {
                Some(last) if last.0 == l.thread => {
                    last.1 += l.calls;
                    last.2 += l.inside;
                }
                _ => out.push((l.thread, l.calls, l.inside)),
            }
        }
        out
    }
}

/// Threads' CPU time at an instant: `(thread, ns since its first section)`.
pub(crate) type Cpu = Vec<(u32, u64)>;

#[derive(Debug, Default, Clone, Copy)]
struct Acc {
    inside: u64,
    calls: u64,
}

/// Sections running at an instant, down to the depth asked for: `(thread, call path, start ticks)`.
pub(crate) type Running = Vec<(u32, Path, u64)>;

/// A thread's open sections after a drain, outermost first: `(section, start ticks)`.
pub(crate) type Open = [(SectionId, u64)];

/// The interval being accumulated.
///
/// Invariant: `acc` holds only time at or after `start` (ticks); time of a call before `start` was counted
/// in earlier intervals, from the running-sections snapshot taken when they closed.
///
/// Closing takes two steps around the background thread's drain, so no call falls between them: at the
/// end instant, [`begin_close`](Intervals::begin_close) takes the sections running then; the drain that
/// follows brings every call that ended before it, whether before or after that instant; then
/// [`finish_close`](Intervals::finish_close). A call in both (it ended between the snapshot and the drain) is
/// counted once, from its record.
#[derive(Debug)]
pub(crate) struct Intervals {
    start: u64,
    /// How many levels of sections the lines go down to (1: top-level only).
    depth: usize,
    acc: BTreeMap<(u32, Path), Acc>,
    /// Set by `begin_close`: the interval's end and what ran then (less what has since come as a record).
    closing: Option<(u64, Running)>,
    /// Calls drained while closing that ended after the end: time and calls for the next interval.
    next: BTreeMap<(u32, Path), Acc>,
    /// Nested calls whose caller was not found yet, per thread (see the module docs): bounded by the
    /// calls that end in the instant between a drain and the reading after it.
    waiting: BTreeMap<u32, Vec<Record>>,
    /// Each live thread's CPU time at the last close (ns); a thread not in it starts from 0 (its first
    /// section). Only the threads of the last reading: its size follows the live threads.
    cpu_at_start: BTreeMap<u32, u64>,
    /// Set by `begin_close`: the CPU time each thread used in the interval being closed.
    cpu_used: Vec<(u32, u64)>,
    /// Final CPU times of threads that ended (and left the live list) since the last close.
    ended: Cpu,
}

impl Intervals {
    /// Starts the first interval at `start` (ticks), its lines going down `depth` levels (at least 1).
    pub(crate) fn new(start: u64, depth: u32) -> Intervals {
        Intervals {
            start,
            depth: depth.max(1) as usize,
            acc: BTreeMap::new(),
            closing: None,
            next: BTreeMap::new(),
            waiting: BTreeMap::new(),
            cpu_at_start: BTreeMap::new(),
            cpu_used: Vec::new(),
            ended: Vec::new(),
        }
    }

    /// Start of the current interval, ticks.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// How many levels the lines go down to.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Adds `thread`'s completed calls (in the order they ended), down to the depth asked for; `open` is
    /// what the thread had open right after the drain that brought them, outermost first (only read when
    /// the lines go deeper than the top level).
    pub(crate) fn on_records(&mut self, thread: u32, records: &[Record], open: &Open) {
        if self.depth == 1 {
            for r in records.iter().filter(|r| r.depth == 0) {
                self.add(thread, vec![r.section], r);
            }
            return;
        }
        let mut batch = self.waiting.remove(&thread).unwrap_or_default();
        batch.extend(
            records
                .iter()
                .filter(|r| (r.depth as usize) < self.depth)
                .copied(),
        );
        // Backwards: a caller before the calls inside it. `callers` holds the chain of records enclosing
        // the one at hand, with their paths.
        let mut callers: Vec<(&Record, Path)> = Vec::new();
        let mut paths: Vec<Option<Path>> = vec![None; batch.len()];
        for (i, r) in batch.iter().enumerate().rev() {
            while callers
                .last()
                .is_some_and(|(c, _)| c.depth >= r.depth || c.start > r.start || c.end < r.end)
            {
                callers.pop();
            }
            let d = r.depth as usize;
            let caller: Option<Path> = match callers.last() {
                _ if d == 0 => Some(Vec::new()),
                Some((c, path)) if c.depth as usize + 1 == d => Some(path.clone()),
                _ => open
                    .get(..d)
                    .filter(|o| o.last().is_some_and(|&(_, start)| start <= r.start))
                    .map(|o| o.iter().map(|&(section, _)| section).collect()),
            };
            if let Some(mut path) = caller {
                path.push(r.section);
                callers.push((r, path.clone()));
                paths[i] = Some(path);
            }
        }
        let mut waiting = Vec::new();
        for (r, path) in batch.iter().zip(paths) {
            match path {
                Some(path) => self.add(thread, path, r),
                // Its caller's record comes with a later drain; a call from an interval already closed
                // can no longer be placed, and is left out.
                None if r.end >= self.start => waiting.push(*r),
                None => {}
            }
        }
        if !waiting.is_empty() {
            self.waiting.insert(thread, waiting);
        }
    }

    /// Adds the call `r` of `thread` at `path`.
    fn add(&mut self, thread: u32, path: Path, r: &Record) {
        let Some((end, running)) = &mut self.closing else {
            let a = self.acc.entry((thread, path)).or_default();
            a.inside += r.end.saturating_sub(r.start.max(self.start));
            a.calls += 1;
            return;
        };
        // Its record replaces the estimate the snapshot would give.
        if let Some(i) = running
            .iter()
            .position(|(t, p, start)| (*t, p, *start) == (thread, &path, r.start))
        {
            running.swap_remove(i);
        }
        let end = *end;
        let a = self.acc.entry((thread, path.clone())).or_default();
        a.inside += r.end.min(end).saturating_sub(r.start.max(self.start));
        if r.end > end {
            let n = self.next.entry((thread, path)).or_default();
            n.inside += r.end - r.start.max(end);
            n.calls += 1;
        } else {
            a.calls += 1;
        }
    }

    /// Ends the interval at `end` (ticks), given the sections running then (down to the depth asked for)
    /// and the threads' CPU time then; the records drained next still count, split at `end`. Then call
    /// [`finish_close`](Intervals::finish_close).
    pub(crate) fn begin_close(&mut self, end: u64, running: Running, cpu: Cpu) {
        self.closing = Some((end, running));
        // A thread both live and ended (kept live for good: sections left open) counts once.
        let mut now: BTreeMap<u32, u64> = BTreeMap::new();
        for (thread, ns) in cpu.into_iter().chain(std::mem::take(&mut self.ended)) {
            let kept = now.entry(thread).or_default();
            *kept = (*kept).max(ns);
        }
        self.cpu_used = now
            .iter()
            .map(|(&thread, &ns)| {
                let before = self.cpu_at_start.get(&thread).copied().unwrap_or(0);
                (thread, ns.saturating_sub(before))
            })
            .filter(|&(_, used)| used > 0)
            .collect();
        self.cpu_at_start = now;
    }

    /// Thread `thread` ended with `cpu_ns` of CPU time: it counts at the next close, though the thread is
    /// no longer among the live ones then.
    pub(crate) fn thread_ended(&mut self, thread: u32, cpu_ns: u64) {
        self.ended.push((thread, cpu_ns));
        // Its calls' callers all came with its last drain.
        self.waiting.remove(&thread);
    }

    /// Whether [`begin_close`](Intervals::begin_close) was called and the interval awaits `finish_close`.
    pub(crate) fn closing(&self) -> bool {
        self.closing.is_some()
    }

    /// Adds the time of the sections still running at the end, returns the interval and starts the next
    /// one at the end. `None` if no close was begun.
    pub(crate) fn finish_close(&mut self) -> Option<Interval> {
        let (end, running) = self.closing.take()?;
        for (thread, path, start) in running {
            let a = self.acc.entry((thread, path)).or_default();
            a.inside += end.saturating_sub(start.max(self.start));
        }
        let lines = std::mem::replace(&mut self.acc, std::mem::take(&mut self.next))
            .into_iter()
            .filter(|(_, a)| a.inside > 0 || a.calls > 0)
            .map(|((thread, path), a)| Line {
                thread,
                path,
                inside: a.inside,
                calls: a.calls,
            })
            .collect();
        let length = end.saturating_sub(self.start);
        self.start = end;
        let cpu = std::mem::take(&mut self.cpu_used);
        Some(Interval {
            end,
            length,
            lines,
            cpu,
        })
    }

    /// Closes the interval at `now` in one step, when every call that ended before `now` is already in:
    /// `begin_close` and `finish_close` with no drain between.
    pub(crate) fn close(&mut self, now: u64, running: Running, cpu: Cpu) -> Interval {
        self.begin_close(now, running, cpu);
        self.finish_close().expect("a close was just begun")
    }
}

/// Formats an interval, one line each: `[<time> s] <thread> <indent>"<section>": <inside>/<interval> ms
/// <share>% <calls>x` (Preshing's format, with the thread's name for his thread id, the run's time at the
/// interval's end first, two spaces of indent per level below the top), each thread's lines followed by
/// its `[<time> s] <thread> CPU: <cpu>/<interval> ms <share>%`. `names` gives a thread's and a section's
/// name; `scale` converts.
pub(crate) fn format(
    interval: &Interval,
    scale: Scale,
    thread_name: impl Fn(u32) -> String,
    section_name: impl Fn(SectionId) -> String,
) -> String {
    let ms = |ticks: u64| scale.delta_ns(Ticks(ticks)) as f64 / 1e6;
    let at = format!("[{:8.3} s]", scale.to_ns(Ticks(interval.end)) as f64 / 1e9);
    let length_ms = ms(interval.length);
    let share = |part_ms: f64| {
        if length_ms > 0.0 {
            100.0 * part_ms / length_ms
        } else {
            0.0
        }
    };
    let mut out = String::new();
    let mut cpu = interval.cpu.iter().peekable();
    let mut cpu_lines_before = |thread: Option<u32>, out: &mut String| {
        while let Some(&&(t, ns)) = cpu.peek() {
            if thread.is_some_and(|thread| t >= thread) {
                break;
            }
            let cpu_ms = ns as f64 / 1e6;
            out.push_str(&format!(
                "{at} {} CPU: {cpu_ms:.0}/{length_ms:.0} ms {:.1}%\n",
                thread_name(t),
                share(cpu_ms)
            ));
            cpu.next();
        }
    };
    for (i, l) in interval.lines.iter().enumerate() {
        // A thread's CPU line comes after its last section line (and those of threads before it).
        if i == 0 || interval.lines[i - 1].thread != l.thread {
            cpu_lines_before(Some(l.thread), &mut out);
        }
        let inside_ms = ms(l.inside);
        out.push_str(&format!(
            "{at} {} {:indent$}\"{}\": {inside_ms:.0}/{length_ms:.0} ms {:.1}% {}x\n",
            thread_name(l.thread),
            "",
            section_name(l.section()),
            share(inside_ms),
            l.calls,
            indent = 2 * l.depth(),
        ));
        if interval
            .lines
            .get(i + 1)
            .is_none_or(|n| n.thread != l.thread)
        {
            cpu_lines_before(Some(l.thread + 1), &mut out);
        }
    }
    cpu_lines_before(None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(start: u64, end: u64, section: SectionId, depth: u32) -> Record {
        Record::timed(start, end, section, depth)
    }

    /// Ticks of 1 µs; intervals of one second.
    #[test]
    fn preshing_lines_split_calls_at_interval_boundaries() {
        let names = |t: u32| ["main", "worker-1", "io"][t as usize].to_owned();
        let sections = |s: SectionId| ["?", "dlmalloc", "solve", "inner"][s as usize].to_owned();
        let mut iv = Intervals::new(0, 1);
        let mut transcript = String::new();
        // worker-1: 6481 short calls, 7 ms in all; a nested call does not count.
        let calls: Vec<Record> = (0..6481u64)
            .map(|i| rec(i * 100, i * 100 + if i < 7 { 1000 } else { 0 }, 1, 0))
            .chain([rec(10, 20, 3, 1)])
            .collect();
        iv.on_records(1, &calls, &[]);
        // main: `solve` runs from 0.4 s and is still running at the boundary. CPU: main 350 ms, worker-1
        // 812 ms.
        let first = format(
            &iv.close(
                1_001_000,
                vec![(0, vec![2], 400_000)],
                vec![(1, 812_000_000), (0, 350_000_000)],
            ),
            Scale::fixed(Ticks(0), 1000.0),
            names,
            sections,
        );
        // The issue's example line, exactly, after the run's time at the interval's end.
        assert!(
            first.contains(
                "[   1.001 s] worker-1 \"dlmalloc\": 7/1001 ms 0.7% 6481x\n\
                 [   1.001 s] worker-1 CPU: 812/1001 ms 81.1%\n"
            ),
            "{first}"
        );
        transcript.push_str(&first);
        // It ends at 1.5 s: only the part after the boundary counts now, and the call counts here.
        iv.on_records(0, &[rec(400_000, 1_500_000, 2, 0)], &[]);
        transcript.push_str("--\n");
        // CPU: main 550 ms more; worker-1 none (no line), and a thread with no section line.
        transcript.push_str(&format(
            &iv.close(
                2_001_000,
                vec![],
                vec![(0, 900_000_000), (1, 812_000_000), (2, 3_000_000)],
            ),
            Scale::fixed(Ticks(0), 1000.0),
            names,
            sections,
        ));
        // Nothing ran: no lines.
        let idle = iv.close(3_001_000, vec![], vec![(0, 900_000_000)]);
        assert_eq!((idle.lines, idle.cpu), (vec![], vec![]));
        insta::assert_snapshot!("interval_lines", transcript);
    }

    /// A thread that ended (and left the live list) counts its CPU time in the interval it ended in, once
    /// even if it is also still read among the live threads; it is forgotten after that.
    #[test]
    fn an_ended_threads_cpu_time_counts_once_in_its_last_interval() {
        let mut iv = Intervals::new(0, 1);
        assert_eq!(
            iv.close(1_000, vec![], vec![(0, 10), (1, 20)]).cpu,
            [(0, 10), (1, 20)]
        );
        iv.thread_ended(1, 50);
        iv.thread_ended(2, 7);
        // Thread 2 lived and ended within the interval; thread 1 is read live too (an older figure).
        assert_eq!(
            iv.close(2_000, vec![], vec![(0, 15), (1, 40)]).cpu,
            [(0, 5), (1, 30), (2, 7)]
        );
        assert_eq!(iv.close(3_000, vec![], vec![(0, 15)]).cpu, []);
        assert_eq!(iv.cpu_at_start.len(), 1, "ended threads are forgotten");
    }

    /// A call that ends between the interval's end (the running snapshot) and the drain that closes it is
    /// counted once, split at the end: its time before goes to this interval, the rest and the call to the
    /// next. One that ended before the end counts here whole.
    #[test]
    fn a_call_ending_while_the_interval_closes_is_counted_once() {
        let mut iv = Intervals::new(0, 1);
        iv.begin_close(1_000, vec![(0, vec![2], 400), (1, vec![1], 900)], vec![]);
        assert!(iv.closing());
        // Drained after the snapshot: thread 0's call ended at 1,200 (after the end), thread 1's at 950.
        iv.on_records(0, &[rec(400, 1_200, 2, 0), rec(300, 350, 3, 0)], &[]);
        iv.on_records(1, &[rec(900, 950, 1, 0)], &[]);
        let first = iv.finish_close().unwrap();
        assert!(!iv.closing());
        assert_eq!(first.length, 1_000);
        assert_eq!(
            first.lines,
            vec![
                Line {
                    thread: 0,
                    path: vec![2],
                    inside: 600,
                    calls: 0
                },
                Line {
                    thread: 0,
                    path: vec![3],
                    inside: 50,
                    calls: 1
                },
                Line {
                    thread: 1,
                    path: vec![1],
                    inside: 50,
                    calls: 1
                },
            ]
        );
        let second = iv.close(2_000, vec![], vec![]);
        assert_eq!(
            second.lines,
            vec![Line {
                thread: 0,
                path: vec![2],
                inside: 200,
                calls: 1
            }]
        );
    }

    /// `PERFGRAPH_INTERVAL_DEPTH=3`: nested calls on lines of their own under their callers, found after
    /// them in the same drain or among the sections still open; one whose caller ended between the drain
    /// and the reading of the open sections waits for the next drain; deeper calls are left out.
    #[test]
    fn nested_lines_go_under_their_callers_down_to_the_depth() {
        let names = |_: u32| "main".to_owned();
        let sections = |s: SectionId| {
            [
                "?", "?", "solve", "?", "assemble", "residual", "kernel", "deep",
            ][s as usize]
                .to_owned()
        };
        let mut iv = Intervals::new(0, 3);
        let open = [(2, 100_000)];
        iv.on_records(
            0,
            &[
                rec(200_000, 210_000, 6, 2),
                rec(190_000, 300_000, 5, 1),
                rec(300_000, 350_000, 4, 1),
                rec(400_000, 400_500, 7, 3),
                rec(400_000, 450_000, 5, 1),
            ],
            &open,
        );
        // Its caller (`residual` from 0.59 s) ended after the drain: neither in it nor open any more.
        iv.on_records(0, &[rec(600_000, 610_000, 6, 2)], &open);
        iv.on_records(0, &[rec(590_000, 700_000, 5, 1)], &open);
        let closed = iv.close(1_001_000, vec![(0, vec![2], 100_000)], vec![]);
        assert_eq!(closed.top_level(), [(0, 0, 901_000)]);
        let text = format(&closed, Scale::fixed(Ticks(0), 1000.0), names, sections);
        insta::assert_snapshot!(text, @r#"
        [   1.001 s] main "solve": 901/1001 ms 90.0% 0x
        [   1.001 s] main   "assemble": 50/1001 ms 5.0% 1x
        [   1.001 s] main   "residual": 270/1001 ms 27.0% 3x
        [   1.001 s] main     "kernel": 20/1001 ms 2.0% 2x
        "#);
    }
}
