//! The wait chains pane of `perfgraph top`: each thread blocked now in a primitive of
//! `perfgraph_core::sync`, its wait followed through whoever holds what it waits for, to what the last
//! one runs (`L1` held by T1, which waits for `L2` held by T2 in `flush`), the longest wait first (by
//! thread name with `s` on name). What the process's status says of each thread now: a lock's holder is
//! known, a channel's or a condvar's waker is not until it wakes.

use super::model::{Snapshot, Sort, Table, ThreadNow, Ui, matches, short};

/// Links followed at most: past them the chain says so (a chain is as long as the threads, at most).
const MOST_LINKS: usize = 16;

/// The pane's table.
pub fn chains(s: &Snapshot, ui: &Ui) -> Table {
    let mut waiting: Vec<(&ThreadNow, u64)> = s
        .threads
        .iter()
        .filter_map(|t| t.waiting.as_ref().map(|w| (t, w.ns)))
        .collect();
    match ui.sort {
        Sort::Name => waiting.sort_by(|a, b| a.0.name.cmp(&b.0.name)),
        _ => waiting.sort_by_key(|&(t, ns)| (std::cmp::Reverse(ns), t.index)),
    }
    let rows = waiting
        .into_iter()
        .map(|(t, ns)| (t, ns, chain(s, t)))
        .filter(|(t, _, text)| matches(&t.name, &ui.filter) || matches(text, &ui.filter))
        .map(|(t, ns, text)| vec![t.name.clone(), text, short(ns)])
        .collect();
    Table {
        header: vec!["Thread", "Waits for", "Waiting"],
        rows,
        keep: vec![0, 0, 1],
        none: "No thread is waiting in perfgraph_core::sync now.",
    }
}

/// `thread`'s wait, followed: "`on` held by H, which waits for `on2` held by H2 in `section`".
fn chain(s: &Snapshot, thread: &ThreadNow) -> String {
    let by_index = |i: u32| s.threads.iter().find(|t| t.index == i);
    let mut text = String::new();
    let mut seen = vec![thread.index];
    let mut at = thread;
    while let Some(w) = &at.waiting {
        if !text.is_empty() {
            text += ", which waits for ";
        }
        text += &format!("`{}`", w.on);
        let Some(holder) = w.holder else {
            return text;
        };
        let Some(h) = by_index(holder) else {
            return text + &format!(" held by thread {holder}");
        };
        text += &format!(" held by {}", h.name);
        if seen.contains(&h.index) {
            return text + ": a cycle, a deadlock";
        }
        if seen.len() == MOST_LINKS {
            return text + ", …";
        }
        seen.push(h.index);
        at = h;
    }
    match at.running.last() {
        Some((section, _)) => text + &format!(" in `{section}`"),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::super::view::tests_support::waiting_snapshot;
    use super::*;

    #[test]
    fn a_wait_is_followed_to_the_section_at_its_root_and_a_cycle_is_named() {
        let s = waiting_snapshot();
        let t = chains(&s, &Ui::default());
        let rows: Vec<String> = t.rows.iter().map(|r| r.join(" | ")).collect();
        assert_eq!(
            rows,
            [
                "T1 | `L2` held by T2 in `flush` | 250.0 ms",
                "T3 | `L1` held by T1, which waits for `L2` held by T2 in `flush` | 200.0 ms",
                "consumer | `queue` | 3.0 ms",
            ]
        );
        let mut cycle = s.clone();
        cycle.threads[1].waiting.as_mut().unwrap().holder = Some(3);
        let t = chains(&cycle, &Ui::default());
        assert!(
            t.rows[0][1]
                .ends_with("held by T3, which waits for `L1` held by T1: a cycle, a deadlock"),
            "{:?}",
            t.rows
        );
    }
}
