//! The critical path of a run (ThreadScope's question: which sections, if faster, would make the program
//! finish sooner?), its wait chains, and what-ifs, from a [`Timeline`](crate::data::timeline::Timeline):
//! the threads' calls, the intervals they were blocked, and who woke them.
//!
//! * `walk`: the path, walked back from the end through the recorded wake-ups;
//! * `graph`: slack and what-if, as longest ways through the graph of instants;
//! * `chains`: each wait followed through whoever it waited for, to the section at its root;
//! * `text`: the `Critical Path:` table.
//!
//! Pure functions of the timeline: a trace read back gives the same answer.

mod chains;
mod flat;
mod graph;
pub(crate) mod json;
#[cfg(test)]
mod tests;
mod text;
mod walk;

use std::collections::HashMap;

use crate::base::process;
use crate::data::timeline::Timeline;
use flat::Stacks;

/// Which stretch of time the path explains.
///
/// ```
/// let s = perfgraph_core::critical::Scope::Section("solve".into());
/// assert_ne!(s, perfgraph_core::critical::Scope::Run);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Scope {
    /// The whole run: from its first instant to the end of its main thread (the thread named `main`, else
    /// the one seen last).
    #[default]
    Run,
    /// Each call of the named section, from its start to its end, summed.
    Section(String),
}

/// What to work out.
///
/// ```
/// let mut o = perfgraph_core::critical::Options::default();
/// o.what_if = Some(("assemble".into(), 50.0));
/// assert_eq!(o.chains, 5);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// The stretch the path explains.
    pub scope: Scope,
    /// A section, and by how many percent it is made faster, for a what-if.
    pub what_if: Option<(String, f64)>,
    /// How many wait chains to keep.
    pub chains: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            scope: Scope::Run,
            what_if: None,
            chains: 5,
        }
    }
}

/// The answer: the path's pieces, the sections with their time on it and their slack, the wait chains and
/// the what-if asked for.
///
/// ```
/// use perfgraph_core::critical::{self, Call, Options, Timeline};
///
/// let mut t = Timeline::default();
/// let main = t.thread("main", 0, 100);
/// let solve = t.name("solve");
/// t.threads[main].calls.push(Call::new(solve, 10, 90));
/// let path = critical::analyse(&t, &Options::default()).unwrap();
/// assert_eq!(path.sections[0].name, "solve");
/// assert_eq!(path.sections[0].path_ns, 80);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CriticalPath {
    /// The stretch explained: its start and end (the first call's for a section), and its length (a
    /// section's calls summed).
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// The time explained: the pieces' sum.
    pub length_ns: u64,
    /// The main thread (where the run's path ends), by index.
    pub end_thread: u32,
    /// The path, in time order: contiguous, not overlapping.
    pub pieces: Vec<Piece>,
    /// Per section: time on the path, in all, and slack; most on the path first.
    pub sections: Vec<PathSection>,
    /// The path's time in each kind of piece that is no section's work.
    pub other: OtherTime,
    /// The wait chains that cost the most.
    pub chains: Vec<WaitChain>,
    /// The what-if asked for.
    pub what_if: Option<WhatIf>,
}

/// A stretch of the path, on one thread.
///
/// ```
/// use perfgraph_core::critical::{Piece, PieceKind};
/// let p = Piece { thread: 0, start_ns: 5, end_ns: 9, kind: PieceKind::Running { section: None } };
/// assert_eq!(p.end_ns - p.start_ns, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The thread, by index.
    pub thread: u32,
    /// Its start.
    pub start_ns: u64,
    /// Its end.
    pub end_ns: u64,
    /// What the thread did.
    pub kind: PieceKind,
}

/// What a thread on the path did in a piece.
///
/// ```
/// let k = perfgraph_core::critical::PieceKind::Blocked { on: Some(0) };
/// assert!(matches!(k, perfgraph_core::critical::PieceKind::Blocked { .. }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PieceKind {
    /// Ran, in this innermost section (a name's index), or outside every section.
    Running {
        /// The innermost section.
        section: Option<u32>,
    },
    /// Waited to run again after another thread woke it: from the release, send or notify to the
    /// waiter's return (`on`), or from its start being asked for to its first instant (`None`).
    WakeUp {
        /// What it had waited for.
        on: Option<u32>,
    },
    /// Blocked with no known waker: `blocked (unknown)`.
    Blocked {
        /// What it waited for; `None`: off the CPU inside a section that measured its CPU time (a wait
        /// nothing recorded, or a wait for a core), its share of the call's own time.
        on: Option<u32>,
    },
    /// Before the thread's first recorded instant, with no recorded start: nothing known.
    NotRecorded,
}

/// A section's row: its time on the path, in all, and its slack.
///
/// ```
/// # let path = perfgraph_core::critical::CriticalPath::example();
/// let s = &path.sections[0];
/// assert!(s.path_self_ns <= s.path_ns && s.path_ns <= s.total_ns);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PathSection {
    /// The section's name.
    pub name: String,
    /// Time on the path while it was open on the path's thread (a recursion once).
    pub path_ns: u64,
    /// Time on the path while it was the innermost section.
    pub path_self_ns: u64,
    /// Its time in all, on every thread (a recursion once).
    pub total_ns: u64,
    /// How much later its tightest call could have ended without the run ending later.
    pub slack_ns: u64,
}

/// The path's time that was no section's work.
///
/// ```
/// let o = perfgraph_core::critical::OtherTime::default();
/// assert_eq!(o.blocked_unknown_ns + o.wake_up_ns + o.outside_ns + o.not_recorded_ns, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtherTime {
    /// Blocked with no known waker.
    pub blocked_unknown_ns: u64,
    /// Hand-overs: from a wake-up to the woken thread's return.
    pub wake_up_ns: u64,
    /// Running outside every section.
    pub outside_ns: u64,
    /// Before a thread's first instant, with no recorded start.
    pub not_recorded_ns: u64,
}

/// A wait chain: who waited for whom, and the section the last one ran.
///
/// ```
/// # let path = perfgraph_core::critical::CriticalPath::example();
/// let c = path.chains.iter().find(|c| c.links[0].waiter == "T3").unwrap();
/// assert_eq!(c.text(), "T3 waits for `L1` held by T1, which waits for `L2` held by T2 in `flush`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WaitChain {
    /// The links, from the first waiter.
    pub links: Vec<ChainLink>,
    /// The innermost section of the last holder, in the middle of the time the links overlap.
    pub root: Option<String>,
    /// Waits that followed this chain.
    pub waits: u64,
    /// Their time waited, summed.
    pub total_ns: u64,
}

/// One link of a [`WaitChain`]: `waiter` waited for `on`, held by `holder` when the wait began (a lock), or
/// ended by it (where no holder is known: a channel, a condvar, a join).
///
/// ```
/// # let path = perfgraph_core::critical::CriticalPath::example();
/// let c = path.chains.iter().find(|c| c.links[0].waiter == "T3").unwrap();
/// assert_eq!((c.links[0].on.as_str(), c.links[1].holder.as_str()), ("L1", "T2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChainLink {
    /// The waiting thread's name.
    pub waiter: String,
    /// What it waited for.
    pub on: String,
    /// The thread it waited for.
    pub holder: String,
    /// `holder` held it when the wait began; else `holder` ended the wait.
    pub held: bool,
}

/// A what-if: the run's time with one section's running time shrunk, on the recorded graph.
///
/// ```
/// # let path = perfgraph_core::critical::CriticalPath::example();
/// let w = path.what_if.as_ref().unwrap();
/// assert!(w.predicted_ns <= w.recorded_ns);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WhatIf {
    /// The section.
    pub section: String,
    /// How many percent faster.
    pub percent: f64,
    /// The run's recorded time.
    pub recorded_ns: u64,
    /// Its predicted time.
    pub predicted_ns: u64,
}

/// The critical path of `timeline` (settled: [`Timeline::settle`]), as `options` ask. An error line for an
/// empty timeline, or a section that is not in it.
pub fn analyse(timeline: &Timeline, options: &Options) -> Result<CriticalPath, String> {
    if timeline.threads.is_empty() {
        return Err("no threads in the trace: nothing to analyse".into());
    }
    // Each phase is a pass over the events: at exit (`PERFGRAPH_REPORT=critical`) each counts as the
    // final pass's progress, so a long but moving analysis is never given up.
    let step = process::progress;
    let mut stacks = Stacks::new();
    let points: Vec<Vec<flat::Point>> = timeline
        .threads
        .iter()
        .map(|t| {
            step();
            flat::flatten(&t.calls, &mut stacks)
        })
        .collect();
    let end_thread = main_thread(timeline);
    // The first instant of a thread that did something: a thread seen only by name (a trace's thread
    // with no slice) has no instant to start the run at.
    let run_start = timeline
        .threads
        .iter()
        .filter(|t| !t.calls.is_empty() || !t.blocked.is_empty())
        .map(|t| t.start_ns)
        .min()
        .unwrap_or(timeline.threads[end_thread].start_ns);
    let run_end = timeline.threads[end_thread].end_ns;
    let lines = walk::Lines {
        timeline,
        points: &points,
        stacks: &stacks,
    };
    let mut walked = walk::Walked::default();
    let (start_ns, end_ns) = match &options.scope {
        Scope::Run => {
            walk::walk(&lines, end_thread, run_end, run_start, &mut walked);
            (run_start, run_end)
        }
        Scope::Section(name) => {
            let calls = outermost_calls(timeline, name)?;
            for &(th, a, b) in &calls {
                walk::walk(&lines, th, b, a, &mut walked);
            }
            let start = calls.iter().map(|c| c.1).min().unwrap_or(0);
            (start, calls.iter().map(|c| c.2).max().unwrap_or(0))
        }
    };
    step();
    let g = graph::Graph::build(timeline);
    step();
    let e = g.earliest(&|i| g.recorded(i));
    step();
    let l = g.latest(run_end);
    step();
    let mut sections = section_rows(timeline, &points, &stacks, &walked.credit);
    for s in &mut sections {
        step();
        s.slack_ns = slack_of(timeline, &g, &e, &l, &s.name);
    }
    sections
        .sort_by(|a, b| (b.path_ns, b.total_ns, &a.name).cmp(&(a.path_ns, a.total_ns, &b.name)));
    let what_if = match &options.what_if {
        Some((name, percent)) => {
            let Some(id) = timeline.names.iter().position(|n| n == name) else {
                return Err(format!("what-if: no section named {name:?} in the trace"));
            };
            let fraction = (percent / 100.0).clamp(0.0, 1.0);
            let weight = g.shrunk(&points, &stacks, id as u32, fraction);
            let shrunk = g.earliest(&weight);
            let end = g.thread_end(&shrunk, end_thread);
            Some(WhatIf {
                section: name.clone(),
                percent: *percent,
                recorded_ns: run_end - run_start,
                predicted_ns: end.saturating_sub(run_start),
            })
        }
        None => None,
    };
    step();
    let other = other_time(&walked.pieces);
    let length_ns = walked.pieces.iter().map(|p| p.end_ns - p.start_ns).sum();
    Ok(CriticalPath {
        start_ns,
        end_ns,
        length_ns,
        end_thread: end_thread as u32,
        pieces: walked.pieces,
        sections,
        other,
        chains: chains::chains(timeline, &points, &stacks, options.chains),
        what_if,
    })
}

/// The thread named `main`, else the one seen last.
fn main_thread(tl: &Timeline) -> usize {
    if let Some(i) = tl.threads.iter().position(|t| t.name == "main") {
        return i;
    }
    (0..tl.threads.len())
        .max_by_key(|&i| (tl.threads[i].end_ns, std::cmp::Reverse(i)))
        .unwrap_or(0)
}

/// The calls of section `name` not inside another of its calls on their thread: (thread, start, end).
fn outermost_calls(tl: &Timeline, name: &str) -> Result<Vec<(usize, u64, u64)>, String> {
    let Some(id) = tl.names.iter().position(|n| n == name) else {
        return Err(format!("no section named {name:?} in the trace"));
    };
    let mut out = Vec::new();
    for (th, line) in tl.threads.iter().enumerate() {
        let mut open_until = 0;
        for c in line.calls.iter().filter(|c| c.name as usize == id) {
            if c.start_ns >= open_until {
                out.push((th, c.start_ns, c.end_ns));
                open_until = c.end_ns;
            }
        }
    }
    if out.is_empty() {
        return Err(format!("section {name:?} has no calls in the trace"));
    }
    Ok(out)
}

/// A row per section that has time: its path time from `credit`, its total from every thread.
fn section_rows(
    tl: &Timeline,
    points: &[Vec<flat::Point>],
    stacks: &Stacks,
    credit: &HashMap<u32, (u64, u64)>,
) -> Vec<PathSection> {
    let mut total: HashMap<u32, u64> = HashMap::new();
    for p in points {
        for w in p.windows(2) {
            for name in stacks.distinct(w[0].stack) {
                *total.entry(name).or_default() += w[1].start_ns - w[0].start_ns;
            }
        }
    }
    total
        .into_iter()
        .map(|(name, total_ns)| {
            let (path_ns, path_self_ns) = credit.get(&name).copied().unwrap_or_default();
            PathSection {
                name: tl.names[name as usize].clone(),
                path_ns,
                path_self_ns,
                total_ns,
                slack_ns: 0,
            }
        })
        .collect()
}

/// The least slack of the ends of section `name`'s calls.
fn slack_of(tl: &Timeline, g: &graph::Graph, e: &[u64], l: &[u64], name: &str) -> u64 {
    let Some(id) = tl.names.iter().position(|n| n == name) else {
        return 0;
    };
    tl.threads
        .iter()
        .enumerate()
        .flat_map(|(th, line)| {
            line.calls
                .iter()
                .filter(move |c| c.name as usize == id)
                .map(move |c| g.slack(e, l, th, c.end_ns))
        })
        .min()
        .unwrap_or(0)
}

fn other_time(pieces: &[Piece]) -> OtherTime {
    let mut o = OtherTime::default();
    for p in pieces {
        let d = p.end_ns - p.start_ns;
        match p.kind {
            PieceKind::Running { section: None } => o.outside_ns += d,
            PieceKind::Running { .. } => {}
            PieceKind::WakeUp { .. } => o.wake_up_ns += d,
            PieceKind::Blocked { .. } => o.blocked_unknown_ns += d,
            PieceKind::NotRecorded => o.not_recorded_ns += d,
        }
    }
    o
}
