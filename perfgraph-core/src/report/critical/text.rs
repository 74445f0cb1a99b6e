//! The `Critical Path:` table and the lines under it: the wait chains and the what-if.

use super::{ChainLink, CriticalPath, PieceKind, WaitChain};
use crate::data::timeline::{Blocked, Call, Timeline, Wake};
use crate::report::table::{self, Cell};
use crate::report::{seconds, shown};

impl PieceKind {
    /// What a piece of this kind is called on the trace's `critical path` track, its names (sections,
    /// locks) from `names`.
    pub(crate) fn title(self, names: &[String]) -> String {
        let name = |i: u32| names.get(i as usize).map_or("?", String::as_str);
        match self {
            PieceKind::Running { section: Some(s) } => name(s).to_owned(),
            PieceKind::Running { section: None } => "(outside sections)".into(),
            PieceKind::WakeUp { on: Some(l) } => format!("wake-up: {}", name(l)),
            PieceKind::WakeUp { on: None } => "wake-up: start".into(),
            PieceKind::Blocked { on: Some(l) } => format!("blocked (unknown): {}", name(l)),
            PieceKind::Blocked { on: None } => "blocked (unknown): off the CPU".into(),
            PieceKind::NotRecorded => "(not recorded)".into(),
        }
    }
}

impl CriticalPath {
    /// The `Critical Path:` table (without its heading): a row per section with time on the path or off
    /// it, then the path's time that was no section's work, then the wait chains and the what-if.
    pub fn table(&self) -> String {
        let pct = |ns: u64| {
            if self.length_ns == 0 {
                0.0
            } else {
                ns as f64 * 100.0 / self.length_ns as f64
            }
        };
        let mut rows: Vec<Vec<Cell>> = self
            .sections
            .iter()
            .map(|s| {
                vec![
                    Cell::Text(shown(&s.name)),
                    Cell::Fixed(seconds(s.path_ns), 3),
                    Cell::Percent(pct(s.path_ns)),
                    Cell::Fixed(seconds(s.path_self_ns), 3),
                    Cell::Fixed(seconds(s.total_ns), 3),
                    Cell::Fixed(seconds(s.slack_ns), 3),
                ]
            })
            .collect();
        let o = &self.other;
        for (name, ns) in [
            ("(blocked (unknown))", o.blocked_unknown_ns),
            ("(wake-up)", o.wake_up_ns),
            ("(outside sections)", o.outside_ns),
            ("(not recorded)", o.not_recorded_ns),
        ] {
            if ns > 0 {
                let blank = || Cell::Text(String::new());
                rows.push(vec![
                    Cell::Text(name.into()),
                    Cell::Fixed(seconds(ns), 3),
                    Cell::Percent(pct(ns)),
                    Cell::Fixed(seconds(ns), 3),
                    blank(),
                    blank(),
                ]);
            }
        }
        let mut out = format!(
            "Path: {:.3} s, {} pieces on {} threads.\n",
            seconds(self.length_ns),
            self.pieces.len(),
            self.threads_on_path(),
        );
        out += &table::render(
            &[
                "Section",
                "Path(s)",
                "Path(%)",
                "Path self(s)",
                "Total(s)",
                "Slack(s)",
            ],
            &rows,
        );
        if !self.chains.is_empty() {
            out += "Wait chains, longest first:\n";
            for c in &self.chains {
                out += &format!(
                    "  {:.3} s in {} waits: {}\n",
                    seconds(c.total_ns),
                    c.waits,
                    c.text()
                );
            }
        }
        if let Some(w) = &self.what_if {
            let change = if w.recorded_ns == 0 {
                0.0
            } else {
                (w.predicted_ns as f64 / w.recorded_ns as f64 - 1.0) * 100.0
            };
            out += &format!(
                "What if `{}` were {}% faster: {:.3} s instead of {:.3} s ({change:+.1}%). An estimate on the \
                 recorded graph: each hand-over keeps its order, and threads are taken to have a core each.\n",
                shown(&w.section),
                w.percent,
                seconds(w.predicted_ns),
                seconds(w.recorded_ns),
            );
        }
        out
    }

    pub(super) fn threads_on_path(&self) -> usize {
        let mut threads: Vec<u32> = self.pieces.iter().map(|p| p.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        threads.len()
    }

    /// The nested-contention example the docs use: T3 waits for `L1` held by T1, which waits for `L2`
    /// held by T2 in `flush`; with a what-if on `flush`.
    #[doc(hidden)]
    pub fn example() -> CriticalPath {
        let (t, _) = example_timeline();
        let o = super::Options {
            what_if: Some(("flush".into(), 50.0)),
            ..super::Options::default()
        };
        super::analyse(&t, &o).expect("the example analyses")
    }
}

/// T1, T2, T3 and `main`: T2 holds `L2` in `flush` 0..100; T1 holds `L1` from 5 and waits for `L2` 10..100;
/// T3 waits for `L1` 20..110. Returns the timeline and the thread indices (T1, T2, T3).
pub(super) fn example_timeline() -> (Timeline, [u32; 3]) {
    let mut t = Timeline::default();
    let main = t.thread("main", 0, 130) as u32;
    let t1 = t.thread("T1", 0, 120) as u32;
    let t2 = t.thread("T2", 0, 105) as u32;
    let t3 = t.thread("T3", 0, 125) as u32;
    let (l1, l2) = (t.name("L1"), t.name("L2"));
    let (flush, update, read) = (t.name("flush"), t.name("update"), t.name("read"));
    let call = Call::new;
    t.threads[t2 as usize].calls.push(call(flush, 0, 100));
    t.threads[t1 as usize].calls.push(call(update, 5, 108));
    t.threads[t3 as usize].calls.push(call(read, 110, 120));
    t.threads[t1 as usize]
        .blocked
        .push(Blocked::new(l2, 10, 101).held_by(t2).woken_by(Wake {
            thread: t2,
            at_ns: 100,
        }));
    t.threads[t3 as usize]
        .blocked
        .push(Blocked::new(l1, 20, 110).held_by(t1).woken_by(Wake {
            thread: t1,
            at_ns: 108,
        }));
    let join = t.name("join T3");
    t.threads[main as usize]
        .blocked
        .push(Blocked::new(join, 1, 126).woken_by(Wake {
            thread: t3,
            at_ns: 125,
        }));
    t.settle();
    (t, [t1, t2, t3])
}

impl WaitChain {
    /// The chain as a sentence: "T3 waits for `L1` held by T1, which waits for `L2` held by T2 in
    /// `flush`" (`ended by` where the thread named ended the wait, no holder being known).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (i, link) in self.links.iter().enumerate() {
            let ChainLink {
                waiter,
                on,
                holder,
                held,
            } = link;
            if i == 0 {
                out += &shown(waiter);
            } else {
                out += ", which";
            }
            let how = if *held { "held by" } else { "ended by" };
            out += &format!(" waits for `{}` {how} {}", shown(on), shown(holder));
        }
        if let Some(root) = &self.root {
            out += &format!(" in `{}`", shown(root));
        }
        out
    }
}
