//! The walk back from an end: the path that decided when it came. On a thread, running time is on the
//! path; a blocked interval whose waker is known sends the path to the waker at the instant it woke this
//! thread (the hand-over between them is the `wake-up` piece); one with no known waker stays on the
//! thread, as `blocked (unknown)`: never counted as work, never skipped. At a thread's first instant the
//! path goes to the thread that started it, where that was recorded, else the rest is `not recorded`.
//!
//! The pieces are contiguous and do not overlap, so they sum to the time walked. Each step goes back in
//! time or to another thread at the same instant; an edge is taken at most once, so a cycle of edges at
//! one instant (only a broken trace has one) ends too.

use std::collections::HashMap;
use std::collections::HashSet;

use super::flat::{self, Point, Stacks};
use super::{Piece, PieceKind};
use crate::data::timeline::{Timeline, Wake};

/// What one walk gives: its pieces (in time order) and, per section, the path's time in it: inclusive
/// (the section open on the path's thread) and self (innermost).
#[derive(Debug, Default)]
pub(super) struct Walked {
    pub pieces: Vec<Piece>,
    pub credit: HashMap<u32, (u64, u64)>,
}

/// The thread data the walk reads.
pub(super) struct Lines<'a> {
    pub timeline: &'a Timeline,
    pub points: &'a [Vec<Point>],
    pub stacks: &'a Stacks,
}

impl Lines<'_> {
    /// `w`, if it names another thread of the timeline at or before `limit`.
    fn edge(&self, w: Option<Wake>, from: usize, limit: u64) -> Option<Wake> {
        w.filter(|w| {
            (w.thread as usize) < self.timeline.threads.len()
                && w.thread as usize != from
                && w.at_ns <= limit
        })
    }
}

/// Walks back from `thread` at `end_ns` to `start_ns`, adding to `out`.
pub(super) fn walk(lines: &Lines, thread: usize, end_ns: u64, start_ns: u64, out: &mut Walked) {
    let mut back: Vec<Piece> = Vec::new();
    let mut taken: HashSet<(usize, usize)> = HashSet::new();
    let (mut th, mut t) = (thread, end_ns);
    while t > start_ns {
        let line = &lines.timeline.threads[th];
        let k = line.blocked.partition_point(|b| b.start_ns < t);
        let prev = k.checked_sub(1).map(|k| (k, line.blocked[k]));
        let ran_from = match prev {
            Some((_, b)) => b.end_ns,
            None => line.start_ns,
        }
        .clamp(start_ns, t);
        running(lines, th, ran_from, t, &mut back, &mut out.credit);
        t = ran_from;
        if t <= start_ns {
            break;
        }
        let (kind, next) = match prev {
            None => match lines.edge(line.spawned_by, th, t) {
                Some(w) if taken.insert((th, usize::MAX)) => (PieceKind::WakeUp { on: None }, w),
                _ => {
                    let w = Wake {
                        thread: th as u32,
                        at_ns: start_ns,
                    };
                    (PieceKind::NotRecorded, w)
                }
            },
            Some((k, b)) => match lines.edge(b.waker, th, t) {
                Some(w) if taken.insert((th, k)) => (PieceKind::WakeUp { on: Some(b.on) }, w),
                _ => {
                    let w = Wake {
                        thread: th as u32,
                        at_ns: b.start_ns,
                    };
                    (PieceKind::Blocked { on: Some(b.on) }, w)
                }
            },
        };
        let from = next.at_ns.max(start_ns);
        push(&mut back, th as u32, from, t, kind);
        th = next.thread as usize;
        t = from;
    }
    back.reverse();
    out.pieces.extend(back);
}

/// The running stretch `[from, to)` of `th`, as pieces per innermost section, credited to its sections.
fn running(
    lines: &Lines,
    th: usize,
    from: u64,
    to: u64,
    back: &mut Vec<Piece>,
    credit: &mut HashMap<u32, (u64, u64)>,
) {
    let stretches = flat::stretches(&lines.points[th], from, to);
    for &(a, b, stack, off) in stretches.iter().rev() {
        // The innermost call's share off the CPU: `blocked (unknown)`, at the stretch's end (where in
        // the stretch it fell is not known; how much is).
        let ran_until = b - ((b - a) as u128 * off as u128 / 1000) as u64;
        push(
            back,
            th as u32,
            ran_until,
            b,
            PieceKind::Blocked { on: None },
        );
        let section = lines.stacks.innermost(stack);
        for name in lines.stacks.distinct(stack) {
            let c = credit.entry(name).or_default();
            c.0 += ran_until - a;
            if Some(name) == section {
                c.1 += ran_until - a;
            }
        }
        push(
            back,
            th as u32,
            a,
            ran_until,
            PieceKind::Running { section },
        );
    }
}

/// Adds `[start, end)` before the pieces so far (`back` holds them latest first), joined to the one it
/// meets when of the same thread and kind.
fn push(back: &mut Vec<Piece>, thread: u32, start_ns: u64, end_ns: u64, kind: PieceKind) {
    if end_ns <= start_ns {
        return;
    }
    if let Some(last) = back.last_mut()
        && last.thread == thread
        && last.kind == kind
        && last.start_ns == end_ns
    {
        last.start_ns = start_ns;
        return;
    }
    back.push(Piece {
        thread,
        start_ns,
        end_ns,
        kind,
    });
}
