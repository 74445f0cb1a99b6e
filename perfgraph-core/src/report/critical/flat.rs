//! A thread's nested calls flattened: at each instant, the stack of sections open (outermost first), as
//! change points. What lets a stretch of the path be given to its sections: the innermost as self time,
//! every section on the stack (once, however deep a recursion) as its inclusive time. Where the innermost
//! call measured its CPU time, the share of its own time it spent off the CPU goes with the point: that
//! share of a stretch is `blocked (unknown)`, not work.

use std::collections::HashMap;

use crate::data::timeline::Call;

/// The distinct stacks of section names, by index; 0 is the empty stack (outside every section).
#[derive(Debug)]
pub(super) struct Stacks {
    list: Vec<Vec<u32>>,
    index: HashMap<Vec<u32>, u32>,
}

/// A change point: from `start_ns` on (to the next point), `stack` is open, its innermost call off the CPU
/// `off` thousandths of its own time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Point {
    pub start_ns: u64,
    pub stack: u32,
    pub off: u16,
}

impl Stacks {
    pub fn new() -> Stacks {
        let mut index = HashMap::new();
        index.insert(Vec::new(), 0);
        Stacks {
            list: vec![Vec::new()],
            index,
        }
    }

    fn intern(&mut self, names: &[u32]) -> u32 {
        if let Some(&i) = self.index.get(names) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(names.to_vec());
        self.index.insert(names.to_vec(), i);
        i
    }

    /// The innermost section of `stack`, if any.
    pub fn innermost(&self, stack: u32) -> Option<u32> {
        self.list[stack as usize].last().copied()
    }

    /// Each distinct name of `stack`, once.
    pub fn distinct(&self, stack: u32) -> impl Iterator<Item = u32> + '_ {
        let names = &self.list[stack as usize];
        names
            .iter()
            .enumerate()
            .filter(move |(i, n)| !names[..*i].contains(n))
            .map(|(_, n)| *n)
    }
}

/// The change points of `calls` (sorted by start, outer first, nested): a point at each call's start and
/// end. The first point is at the first call's start; before it, and after the last point's stack ends,
/// the stack is empty.
pub(super) fn flatten(calls: &[Call], stacks: &mut Stacks) -> Vec<Point> {
    let off = off_cpu(calls);
    let mut points: Vec<Point> = Vec::with_capacity(calls.len() * 2);
    // Open calls: (end, name, off-CPU thousandths).
    let mut open: Vec<(u64, u32, u16)> = Vec::new();
    let mut names: Vec<u32> = Vec::new();
    let push = |points: &mut Vec<Point>, at: u64, stack: u32, off: u16| match points.last_mut() {
        Some(p) if p.start_ns == at => {
            p.stack = stack;
            p.off = off;
        }
        Some(p) if p.stack == stack && p.off == off => {}
        _ => points.push(Point {
            start_ns: at,
            stack,
            off,
        }),
    };
    let close_until = |at: u64,
                       open: &mut Vec<(u64, u32, u16)>,
                       names: &mut Vec<u32>,
                       points: &mut Vec<Point>,
                       stacks: &mut Stacks| {
        while let Some(&(end, _, _)) = open.last() {
            if end > at {
                break;
            }
            open.pop();
            names.pop();
            let s = stacks.intern(names);
            push(points, end, s, open.last().map_or(0, |o| o.2));
        }
    };
    for (c, &off) in calls.iter().zip(&off) {
        close_until(c.start_ns, &mut open, &mut names, &mut points, stacks);
        open.push((c.end_ns, c.name, off));
        names.push(c.name);
        let s = stacks.intern(&names);
        push(&mut points, c.start_ns, s, off);
    }
    close_until(u64::MAX, &mut open, &mut names, &mut points, stacks);
    points
}

/// Per call (sorted, nested), the thousandths of its own time (outside the calls inside it) it was off
/// the CPU, where it measured its CPU time; else 0.
fn off_cpu(calls: &[Call]) -> Vec<u16> {
    let mut inner = vec![0u64; calls.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        while open.last().is_some_and(|&j| calls[j].end_ns <= c.start_ns) {
            open.pop();
        }
        if let Some(&parent) = open.last() {
            inner[parent] += c.end_ns - c.start_ns;
        }
        open.push(i);
    }
    calls
        .iter()
        .zip(inner)
        .map(|(c, inner)| {
            let own = (c.end_ns - c.start_ns).saturating_sub(inner);
            match c.self_cpu_ns {
                Some(cpu) if own > 0 => {
                    (own.saturating_sub(cpu) as u128 * 1000 / own as u128) as u16
                }
                _ => 0,
            }
        })
        .collect()
}

/// The stretches of `[from, to)` under each stack, in time order: `(start, end, stack, off)`.
pub(super) fn stretches(points: &[Point], from: u64, to: u64) -> Vec<(u64, u64, u32, u16)> {
    let mut out = Vec::new();
    if from >= to {
        return out;
    }
    // The last point at or before `from`.
    let i = points.partition_point(|p| p.start_ns <= from);
    let (mut stack, mut off) = match i {
        0 => (0, 0),
        _ => (points[i - 1].stack, points[i - 1].off),
    };
    let mut at = from;
    for p in &points[i..] {
        if p.start_ns >= to {
            break;
        }
        if p.start_ns > at {
            out.push((at, p.start_ns, stack, off));
            at = p.start_ns;
        }
        (stack, off) = (p.stack, p.off);
    }
    out.push((at, to, stack, off));
    out
}

/// Per thread, the time spent inside section `name` up to each change point (inclusive time, a recursion
/// counted once): `time_in(points, prefix, at)` reads it at any instant.
pub(super) fn prefix_in(points: &[Point], stacks: &Stacks, name: u32) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(points.len());
    let mut sum = 0u64;
    for (i, p) in points.iter().enumerate() {
        prefix.push(sum);
        let inside = stacks.list[p.stack as usize].contains(&name);
        if inside && let Some(next) = points.get(i + 1) {
            sum += next.start_ns - p.start_ns;
        }
    }
    prefix
}

/// Time inside the section of `prefix` (see [`prefix_in`]) from the thread's start to `at`.
pub(super) fn time_in(
    points: &[Point],
    stacks: &Stacks,
    name: u32,
    prefix: &[u64],
    at: u64,
) -> u64 {
    let i = points.partition_point(|p| p.start_ns <= at);
    if i == 0 {
        return 0;
    }
    let p = points[i - 1];
    let inside = stacks.list[p.stack as usize].contains(&name);
    prefix[i - 1] + if inside { at - p.start_ns } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: u32, start_ns: u64, end_ns: u64) -> Call {
        Call::new(name, start_ns, end_ns)
    }

    #[test]
    fn nested_calls_flatten_to_their_stacks() {
        let mut stacks = Stacks::new();
        // a 0..100 { b 10..20, b 30..40 { a 32..35 } }, c 100..110
        let calls = [
            call(0, 0, 100),
            call(1, 10, 20),
            call(1, 30, 40),
            call(0, 32, 35),
            call(2, 100, 110),
        ];
        let points = flatten(&calls, &mut stacks);
        let shown: Vec<(u64, Vec<u32>)> = points
            .iter()
            .map(|p| (p.start_ns, stacks.list[p.stack as usize].clone()))
            .collect();
        assert_eq!(
            shown,
            [
                (0, vec![0]),
                (10, vec![0, 1]),
                (20, vec![0]),
                (30, vec![0, 1]),
                (32, vec![0, 1, 0]),
                (35, vec![0, 1]),
                (40, vec![0]),
                (100, vec![2]),
                (110, vec![]),
            ]
        );
        let s = stretches(&points, 5, 33);
        let inner: Vec<(u64, u64, Option<u32>)> = s
            .iter()
            .map(|&(a, b, st, _)| (a, b, stacks.innermost(st)))
            .collect();
        assert_eq!(
            inner,
            [
                (5, 10, Some(0)),
                (10, 20, Some(1)),
                (20, 30, Some(0)),
                (30, 32, Some(1)),
                (32, 33, Some(0))
            ]
        );
        // Inclusive time in `a`, the recursion once: 0..100 is 100.
        let prefix = prefix_in(&points, &stacks, 0);
        assert_eq!(time_in(&points, &stacks, 0, &prefix, 105), 100);
        assert_eq!(time_in(&points, &stacks, 0, &prefix, 33), 33);
        let prefix_b = prefix_in(&points, &stacks, 1);
        assert_eq!(time_in(&points, &stacks, 1, &prefix_b, 1_000), 20);
        let distinct: Vec<u32> = stacks.distinct(points[4].stack).collect();
        assert_eq!(distinct, [0, 1]);
    }

    #[test]
    fn a_call_that_measured_its_cpu_carries_its_off_cpu_share() {
        let mut stacks = Stacks::new();
        // a 0..100 with 30 of CPU of its own; b 20..40 inside it, all on the CPU.
        let calls = [call(0, 0, 100).self_cpu(30), call(1, 20, 40).self_cpu(20)];
        let points = flatten(&calls, &mut stacks);
        let offs: Vec<(u64, u16)> = points.iter().map(|p| (p.start_ns, p.off)).collect();
        // a's own time is 80, 50 of it off the CPU: 625 thousandths.
        assert_eq!(offs, [(0, 625), (20, 0), (40, 625), (100, 0)]);
    }
}
