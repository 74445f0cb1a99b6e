//! A run as threads on one time line, what the critical-path analysis reads (`report::critical`): per
//! thread its section calls, the intervals it was blocked, and for each blocked interval the wake-up edge
//! that ended it when one was recorded (who released the lock, sent the item, notified the condvar, ended
//! the joined thread, and when). The trace readers build it from a trace perfgraph wrote; tests build it
//! by hand.
//!
//! Times are nanoseconds on the trace's clock. Names (sections, locks, channels) are interned:
//! [`Timeline::name`] gives each its index in [`Timeline::names`].

use std::collections::HashMap;

/// Threads on one time line, and the names their calls and waits use.
///
/// ```
/// use perfgraph_core::critical::{Call, Timeline};
///
/// let mut t = Timeline::default();
/// let main = t.thread("main", 0, 100);
/// let solve = t.name("solve");
/// t.threads[main].calls.push(Call::new(solve, 10, 90));
/// assert_eq!(t.names[solve as usize], "solve");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Timeline {
    /// Section and primitive names, by index.
    pub names: Vec<String>,
    /// The threads, by index (the edges name them so).
    pub threads: Vec<ThreadLine>,
    index: HashMap<String, u32>,
}

/// One thread: when it was seen, its calls and its blocked intervals.
///
/// ```
/// let mut t = perfgraph_core::critical::Timeline::default();
/// let i = t.thread("worker", 5, 50);
/// assert_eq!((t.threads[i].name.as_str(), t.threads[i].end_ns), ("worker", 50));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ThreadLine {
    /// The thread's name.
    pub name: String,
    /// Its first recorded instant.
    pub start_ns: u64,
    /// Its last recorded instant.
    pub end_ns: u64,
    /// Its section calls, nested as they ran (a call inside another lies within it).
    pub calls: Vec<Call>,
    /// The intervals it was blocked, not overlapping.
    pub blocked: Vec<Blocked>,
    /// The thread that started it, and when, where that was recorded (`sync::spawn`).
    pub spawned_by: Option<Wake>,
}

/// A section call.
///
/// ```
/// let c = perfgraph_core::critical::Call::new(0, 1, 4).self_cpu(2);
/// assert_eq!((c.end_ns - c.start_ns, c.self_cpu_ns), (3, Some(2)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Call {
    /// The section's name ([`Timeline::names`]).
    pub name: u32,
    /// When it began.
    pub start_ns: u64,
    /// When it ended.
    pub end_ns: u64,
    /// Its CPU time outside the calls inside it, where it was measured (the `cpu` option,
    /// `PERFGRAPH_CPU=all`): the rest of its own time it was off the CPU, blocked on something perfgraph
    /// did not record (or waiting for a core).
    pub self_cpu_ns: Option<u64>,
}

impl Call {
    /// A call of name `name` from `start_ns` to `end_ns`, its CPU time not measured.
    pub fn new(name: u32, start_ns: u64, end_ns: u64) -> Call {
        Call {
            name,
            start_ns,
            end_ns: end_ns.max(start_ns),
            self_cpu_ns: None,
        }
    }

    /// The same, with `ns` of CPU time of its own.
    pub fn self_cpu(self, ns: u64) -> Call {
        Call {
            self_cpu_ns: Some(ns),
            ..self
        }
    }
}

/// An interval a thread was blocked: waiting for a lock, a condvar, a channel, a barrier, a thread.
///
/// ```
/// use perfgraph_core::critical::{Blocked, Wake};
///
/// // Waited 10..30 for lock 0, held by thread 1, which released it at 29.
/// let b = Blocked::new(0, 10, 30).held_by(1).woken_by(Wake { thread: 1, at_ns: 29 });
/// assert_eq!(b.waker.unwrap().at_ns, 29);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Blocked {
    /// What it waited for ([`Timeline::names`]): the lock's, channel's, condvar's name.
    pub on: u32,
    /// When the wait began.
    pub start_ns: u64,
    /// When it ended (the lock acquired, the item received, the thread joined).
    pub end_ns: u64,
    /// The thread holding what it waited for when the wait began, where known (a lock's holder).
    pub holder: Option<u32>,
    /// Who ended the wait, and when, where recorded; `None`: `blocked (unknown)`.
    pub waker: Option<Wake>,
}

/// The other end of a wake-up edge: a thread, and the instant it released, sent, notified or ended.
///
/// ```
/// let w = perfgraph_core::critical::Wake { thread: 2, at_ns: 40 };
/// assert_eq!(w.thread, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// The thread's index in [`Timeline::threads`].
    pub thread: u32,
    /// The instant.
    pub at_ns: u64,
}

impl Timeline {
    /// The index of `name` in [`names`](Timeline::names), added at its first use.
    pub fn name(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }

    /// Adds a thread seen from `start_ns` to `end_ns`; returns its index.
    pub fn thread(&mut self, name: &str, start_ns: u64, end_ns: u64) -> usize {
        self.threads.push(ThreadLine {
            name: name.to_owned(),
            start_ns,
            end_ns,
            ..ThreadLine::default()
        });
        self.threads.len() - 1
    }

    /// Puts each thread's calls and blocked intervals in time order (a call before the calls inside it),
    /// and clips what strays: a call beyond its parent, a blocked interval overlapping the one before it,
    /// anything outside the thread's span (which grows to hold them). Readers call it once they are done.
    pub fn settle(&mut self) {
        for t in &mut self.threads {
            t.calls
                .sort_by_key(|c| (c.start_ns, std::cmp::Reverse(c.end_ns)));
            t.blocked.sort_by_key(|b| (b.start_ns, b.end_ns));
            let mut last_end = 0;
            for b in &mut t.blocked {
                b.start_ns = b.start_ns.max(last_end);
                b.end_ns = b.end_ns.max(b.start_ns);
                last_end = b.end_ns;
            }
            let first = t.calls.iter().map(|c| c.start_ns);
            let first = first.chain(t.blocked.iter().map(|b| b.start_ns)).min();
            let last = t.calls.iter().map(|c| c.end_ns);
            let last = last.chain(t.blocked.iter().map(|b| b.end_ns)).max();
            t.start_ns = first.map_or(t.start_ns, |f| f.min(t.start_ns));
            t.end_ns = last.map_or(t.end_ns, |l| l.max(t.end_ns));
            clip_nesting(&mut t.calls);
        }
    }

    /// A wake-up edge: thread `from` released, sent, notified or ended at `released_ns`, and thread `to`
    /// went on at `acquired_ns`. It becomes the waker of `to`'s wait that ended there (within 2 ns, the
    /// clock's rounding); with none, an edge into the thread's first instant is its start
    /// (`sync::spawn`); else it is dropped. After [`settle`](Timeline::settle): both readers (a trace's
    /// flows, the records at exit) call it the same way, so they give the same timeline.
    ///
    /// ```
    /// use perfgraph_core::critical::{Blocked, Timeline};
    ///
    /// let mut t = Timeline::default();
    /// let (a, b) = (t.thread("a", 0, 50), t.thread("b", 0, 50));
    /// let l = t.name("L");
    /// t.threads[b].blocked.push(Blocked::new(l, 10, 30));
    /// t.settle();
    /// t.attach_flow(a as u32, 29, b, 30);
    /// assert_eq!(t.threads[b].blocked[0].waker.unwrap().at_ns, 29);
    /// ```
    pub fn attach_flow(&mut self, from: u32, released_ns: u64, to: usize, acquired_ns: u64) {
        let Some(line) = self.threads.get_mut(to) else {
            return;
        };
        let k = line.blocked.partition_point(|b| b.end_ns + 2 < acquired_ns);
        match line
            .blocked
            .get_mut(k)
            .filter(|b| b.end_ns <= acquired_ns + 2)
        {
            Some(b) => {
                let at_ns = released_ns.min(b.end_ns);
                b.waker = Some(Wake {
                    thread: from,
                    at_ns,
                });
            }
            None if acquired_ns <= line.start_ns + 2 => {
                let at_ns = released_ns.min(line.start_ns);
                line.spawned_by = Some(Wake {
                    thread: from,
                    at_ns,
                });
            }
            None => {}
        }
    }

    /// Events in all: calls, blocked intervals, edges (what the analysis's cost grows with).
    pub fn events(&self) -> usize {
        self.threads
            .iter()
            .map(|t| t.calls.len() + t.blocked.len() * 2)
            .sum()
    }
}

impl Blocked {
    /// A wait for `on` from `start_ns` to `end_ns`, holder and waker unknown.
    pub fn new(on: u32, start_ns: u64, end_ns: u64) -> Blocked {
        Blocked {
            on,
            start_ns,
            end_ns: end_ns.max(start_ns),
            holder: None,
            waker: None,
        }
    }

    /// The same, held by thread `holder` when it began.
    pub fn held_by(self, holder: u32) -> Blocked {
        Blocked {
            holder: Some(holder),
            ..self
        }
    }

    /// The same, ended by `waker`.
    pub fn woken_by(self, waker: Wake) -> Blocked {
        Blocked {
            waker: Some(waker),
            ..self
        }
    }
}

/// Calls sorted by start (outer first): each ends by its parent's end.
fn clip_nesting(calls: &mut [Call]) {
    let mut open: Vec<u64> = Vec::new();
    for c in calls.iter_mut() {
        while open.last().is_some_and(|&end| end <= c.start_ns) {
            open.pop();
        }
        if let Some(&parent_end) = open.last() {
            c.end_ns = c.end_ns.min(parent_end);
        }
        open.push(c.end_ns);
    }
}
