//! The run as a graph of instants, for slack and what-if. Per thread a node at its start and end, at each
//! blocked interval's start and end, and at each instant it woke another thread; an arc from each node to
//! the next on its thread, weighing the time between them (0 across a blocked interval whose waker is
//! known: that wait lasts as long as its waker makes it), and an arc from each waker's instant to the end
//! of the wait it ended (or the start of the thread it started), weighing the hand-over.
//!
//! The earliest time of a node is its longest way from the start (a thread with no recorded starter
//! starts when it did); on the recorded weights it is at most the node's instant, and equal along the
//! critical path. The latest time is the run's end less the longest way to it. A call's slack is the
//! latest less the earliest time of its end: how much later it could have ended without the run ending
//! later. A what-if shrinks the running time inside one section and takes the longest way again. It keeps
//! the recorded order of every hand-over and ignores that threads share the cores: an estimate.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::flat::{self, Point, Stacks};
use crate::data::timeline::{Timeline, Wake};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    t: u64,
    /// The node whose arc ends here (a waker's instant), or `NONE`.
    cross_in: u32,
    /// The node this one's arc goes to, or `NONE`.
    cross_out: u32,
    /// The time to the next node on the thread is a wait its waker decides: weight 0.
    waiting_next: bool,
}

/// The graph, with each thread's nodes in a run of their own.
#[derive(Debug)]
pub(super) struct Graph {
    nodes: Vec<Node>,
    /// Thread `i`'s nodes are `first[i]..first[i + 1]`.
    first: Vec<usize>,
    /// The nodes in an order where every arc goes forward.
    order: Vec<u32>,
}

/// What a node is, while the graph is built; the order among nodes at one instant on one thread: a
/// start, a wait's end, a wake-up given, a wait's start, an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tag {
    Start,
    WaitEnd(usize),
    Wakes(usize),
    WaitStart(usize),
    End,
}

/// An arc between threads while building: from thread `from` at `at` to `to`'s wait `k` (or its start).
struct Arc {
    from: Wake,
    to: usize,
    wait: Option<usize>,
}

impl Graph {
    pub fn build(tl: &Timeline) -> Graph {
        let n = tl.threads.len();
        let mut arcs: Vec<Arc> = Vec::new();
        // Per thread, per wait: whether its waker is known (an arc ends it).
        let mut known: Vec<Vec<bool>> = Vec::with_capacity(n);
        for (i, line) in tl.threads.iter().enumerate() {
            let valid = |w: &Wake| (w.thread as usize) < n && w.thread as usize != i;
            if let Some(w) = line
                .spawned_by
                .filter(valid)
                .filter(|w| w.at_ns <= line.start_ns)
            {
                arcs.push(Arc {
                    from: w,
                    to: i,
                    wait: None,
                });
            }
            let mut own = vec![false; line.blocked.len()];
            for (k, b) in line.blocked.iter().enumerate() {
                if let Some(w) = b.waker.filter(valid).filter(|w| w.at_ns <= b.end_ns) {
                    own[k] = true;
                    arcs.push(Arc {
                        from: w,
                        to: i,
                        wait: Some(k),
                    });
                }
            }
            known.push(own);
        }
        let mut tags: Vec<Vec<(u64, Tag)>> = vec![Vec::new(); n];
        for (a, arc) in arcs.iter().enumerate() {
            tags[arc.from.thread as usize].push((arc.from.at_ns, Tag::Wakes(a)));
        }
        let mut nodes = Vec::new();
        let mut first = Vec::with_capacity(n + 1);
        // Per arc, the node it leaves from, once placed.
        let mut sources = vec![NONE; arcs.len()];
        let mut wait_ends: Vec<Vec<u32>> = Vec::with_capacity(n);
        let mut starts = Vec::with_capacity(n);
        for (i, line) in tl.threads.iter().enumerate() {
            let own = &mut tags[i];
            own.push((line.start_ns, Tag::Start));
            own.push((line.end_ns.max(line.start_ns), Tag::End));
            for (k, b) in line.blocked.iter().enumerate() {
                own.push((b.start_ns, Tag::WaitStart(k)));
                own.push((b.end_ns, Tag::WaitEnd(k)));
            }
            own.sort_unstable();
            first.push(nodes.len());
            let mut ends_here = vec![NONE; line.blocked.len()];
            let mut known_wait = false;
            for &(t, tag) in own.iter() {
                let index = nodes.len() as u32;
                match tag {
                    Tag::Start => starts.push(index),
                    Tag::WaitStart(k) => known_wait = known[i][k],
                    Tag::WaitEnd(k) => {
                        ends_here[k] = index;
                        known_wait = false;
                    }
                    Tag::Wakes(a) => sources[a] = index,
                    Tag::End => {}
                }
                nodes.push(Node {
                    t,
                    cross_in: NONE,
                    cross_out: NONE,
                    waiting_next: known_wait,
                });
            }
            wait_ends.push(ends_here);
        }
        first.push(nodes.len());
        for (a, arc) in arcs.iter().enumerate() {
            let to = match arc.wait {
                Some(k) => wait_ends[arc.to][k],
                None => starts[arc.to],
            };
            nodes[sources[a] as usize].cross_out = to;
            nodes[to as usize].cross_in = sources[a];
        }
        let mut g = Graph {
            nodes,
            first,
            order: Vec::new(),
        };
        g.order = g.topological();
        g
    }

    fn thread_of(&self, node: usize) -> usize {
        self.first.partition_point(|&f| f <= node) - 1
    }

    fn next_on_thread(&self, node: usize) -> Option<usize> {
        let th = self.thread_of(node);
        (node + 1 < self.first[th + 1]).then_some(node + 1)
    }

    /// An order in which every arc goes forward: ready nodes by time; where only a cycle at one instant
    /// is left (a broken trace), its earliest node goes first as if the arc into it were not there.
    fn topological(&self) -> Vec<u32> {
        let n = self.nodes.len();
        // Arcs into each node not yet taken: from the node before it on its thread, and from a waker.
        let mut waiting: Vec<u8> = (0..n)
            .map(|i| {
                let first = self.first[self.thread_of(i)] == i;
                u8::from(!first) + u8::from(self.nodes[i].cross_in != NONE)
            })
            .collect();
        let mut by_time: Vec<u32> = (0..n as u32).collect();
        by_time.sort_unstable_by_key(|&i| (self.nodes[i as usize].t, i));
        let mut next_forced = 0;
        let mut done = vec![false; n];
        let mut ready: BinaryHeap<Reverse<(u64, u32)>> = (0..n)
            .filter(|&i| waiting[i] == 0)
            .map(|i| Reverse((self.nodes[i].t, i as u32)))
            .collect();
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let i = match ready.pop() {
                Some(Reverse((_, i))) => i as usize,
                None => {
                    while done[by_time[next_forced] as usize] {
                        next_forced += 1;
                    }
                    by_time[next_forced] as usize
                }
            };
            if done[i] {
                continue;
            }
            done[i] = true;
            order.push(i as u32);
            let succ = [self.next_on_thread(i), cross(self.nodes[i].cross_out)];
            for s in succ.into_iter().flatten() {
                waiting[s] = waiting[s].saturating_sub(1);
                if waiting[s] == 0 && !done[s] {
                    ready.push(Reverse((self.nodes[s].t, s as u32)));
                }
            }
        }
        order
    }

    /// Each node's earliest time, the weight of its arc to the next node on its thread being
    /// `weight(node)` (the recorded time less any shrink).
    pub fn earliest(&self, weight: &dyn Fn(usize) -> u64) -> Vec<u64> {
        let mut e: Vec<u64> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let first = self.first[self.thread_of(i)] == i;
                if first && n.cross_in == NONE { n.t } else { 0 }
            })
            .collect();
        for &i in &self.order {
            let i = i as usize;
            if let Some(s) = self.next_on_thread(i) {
                e[s] = e[s].max(e[i] + weight(i));
            }
            if let Some(s) = cross(self.nodes[i].cross_out) {
                e[s] = e[s].max(e[i] + self.cross_weight(i, s));
            }
        }
        e
    }

    /// Each node's latest time for the run to end at `end_ns`, on the recorded weights.
    pub fn latest(&self, end_ns: u64) -> Vec<u64> {
        let mut l = vec![u64::MAX; self.nodes.len()];
        for &i in self.order.iter().rev() {
            let i = i as usize;
            let mut v = match self.next_on_thread(i) {
                Some(s) => l[s].saturating_sub(self.recorded(i)),
                None => end_ns.max(self.nodes[i].t),
            };
            if let Some(s) = cross(self.nodes[i].cross_out) {
                v = v.min(l[s].saturating_sub(self.cross_weight(i, s)));
            }
            l[i] = v;
        }
        l
    }

    /// The recorded weight of the arc from `i` to the next node on its thread.
    pub fn recorded(&self, i: usize) -> u64 {
        match self.next_on_thread(i) {
            Some(s) if !self.nodes[i].waiting_next => self.nodes[s].t - self.nodes[i].t,
            _ => 0,
        }
    }

    fn cross_weight(&self, from: usize, to: usize) -> u64 {
        self.nodes[to].t.saturating_sub(self.nodes[from].t)
    }

    /// The slack at instant `at` of thread `th`: latest less earliest time there (see the module docs);
    /// at an instant with nodes, the first of them (a call's end comes before what its thread does next).
    pub fn slack(&self, e: &[u64], l: &[u64], th: usize, at: u64) -> u64 {
        let range = self.first[th]..self.first[th + 1];
        let k = self.nodes[range.clone()].partition_point(|n| n.t < at);
        let i = range.start + k;
        if i < range.end && self.nodes[i].t == at || k == 0 {
            return l[i.min(range.end - 1)].saturating_sub(e[i.min(range.end - 1)]);
        }
        match self.next_on_thread(i - 1) {
            Some(s) => l[s].saturating_sub(e[i - 1] + self.recorded(i - 1)),
            None => l[i - 1].saturating_sub(e[i - 1]),
        }
    }

    /// The earliest time of thread `th`'s last node.
    pub fn thread_end(&self, e: &[u64], th: usize) -> u64 {
        e[self.first[th + 1] - 1]
    }

    /// The weights of a what-if: the recorded ones less `fraction` of the running time inside section
    /// `name` (per thread, its change points).
    pub fn shrunk<'a>(
        &'a self,
        points: &'a [Vec<Point>],
        stacks: &'a Stacks,
        name: u32,
        fraction: f64,
    ) -> impl Fn(usize) -> u64 + 'a {
        let prefixes: Vec<Vec<u64>> = points
            .iter()
            .map(|p| flat::prefix_in(p, stacks, name))
            .collect();
        move |i| {
            let w = self.recorded(i);
            if w == 0 {
                return 0;
            }
            let th = self.thread_of(i);
            let (a, b) = (self.nodes[i].t, self.nodes[i].t + w);
            let p = &points[th];
            let inside = flat::time_in(p, stacks, name, &prefixes[th], b)
                - flat::time_in(p, stacks, name, &prefixes[th], a);
            w - ((inside as f64 * fraction).round() as u64).min(w)
        }
    }
}

fn cross(i: u32) -> Option<usize> {
    (i != NONE).then_some(i as usize)
}
