//! Wait chains: a wait followed through whoever it waited for. T3 waits for `L1`, held by T1; while it
//! waits, T1 is itself blocked, on `L2` held by T2; T2 is running, in `flush`: the chain's root, where the
//! time really goes. Chains of the same links and root are summed; the ones that cost the most come first.

use std::collections::HashMap;

use super::flat::{Point, Stacks};
use super::{ChainLink, WaitChain};
use crate::data::timeline::{Blocked, Timeline};

/// Links followed at most: a longer chain is cut there.
const MAX_LINKS: usize = 16;
/// A holder's waits looked at, at most, within one wait of the chain (so a trace of many short waits
/// inside long ones costs linear time, not quadratic).
const SCAN: usize = 64;

/// A chain's links as (waiter, what, holder, held) (thread and name indices; whether the holder held it or
/// ended the wait), and the section at its root.
type Key = (Vec<(u32, u32, u32, bool)>, Option<u32>);

/// The `most` chains that waited longest, over every wait with a known holder or waker.
pub(super) fn chains(
    tl: &Timeline,
    points: &[Vec<Point>],
    stacks: &Stacks,
    most: usize,
) -> Vec<WaitChain> {
    let mut sums: HashMap<Key, (u64, u64)> = HashMap::new();
    for (th, line) in tl.threads.iter().enumerate() {
        for b in &line.blocked {
            let Some((links, root)) = follow(tl, points, stacks, th, b) else {
                continue;
            };
            let s = sums.entry((links, root)).or_default();
            s.0 += 1;
            s.1 += b.end_ns - b.start_ns;
        }
    }
    let mut out: Vec<WaitChain> = sums
        .into_iter()
        .map(|((links, root), (waits, total_ns))| WaitChain {
            links: links
                .iter()
                .map(|&(waiter, on, holder, held)| ChainLink {
                    waiter: tl.threads[waiter as usize].name.clone(),
                    on: tl.names[on as usize].clone(),
                    holder: tl.threads[holder as usize].name.clone(),
                    held,
                })
                .collect(),
            root: root.map(|r| tl.names[r as usize].clone()),
            waits,
            total_ns,
        })
        .collect();
    out.sort_by(|a, b| {
        (b.total_ns, b.waits)
            .cmp(&(a.total_ns, a.waits))
            .then_with(|| a.text().cmp(&b.text()))
    });
    out.truncate(most);
    out
}

/// The thread a wait waited for: the holder when it began (`true`), else the thread that ended it.
fn other(tl: &Timeline, th: usize, b: &Blocked) -> Option<(usize, bool)> {
    let (o, held) = match (b.holder, b.waker) {
        (Some(h), _) => (h, true),
        (None, Some(w)) => (w.thread, false),
        (None, None) => return None,
    };
    let o = o as usize;
    (o < tl.threads.len() && o != th).then_some((o, held))
}

/// The links of `th`'s wait `b` as (waiter, what, holder), and the last holder's innermost section in the
/// middle of the time they all overlap.
fn follow(
    tl: &Timeline,
    points: &[Vec<Point>],
    stacks: &Stacks,
    th: usize,
    b: &Blocked,
) -> Option<Key> {
    let (mut holder, held) = other(tl, th, b)?;
    let mut links = vec![(th as u32, b.on, holder as u32, held)];
    let mut window = (b.start_ns, b.end_ns);
    while links.len() < MAX_LINKS {
        let Some(next) = overlapping(&tl.threads[holder].blocked, window) else {
            break;
        };
        let Some((h, held)) = other(tl, holder, next) else {
            break;
        };
        if links.iter().any(|&(w, ..)| w as usize == h) || h == th {
            break;
        }
        links.push((holder as u32, next.on, h as u32, held));
        window = (window.0.max(next.start_ns), window.1.min(next.end_ns));
        holder = h;
    }
    let middle = window.0 + (window.1 - window.0) / 2;
    let p = &points[holder];
    let i = p.partition_point(|p| p.start_ns <= middle);
    let root = i.checked_sub(1).and_then(|i| stacks.innermost(p[i].stack));
    Some((links, root))
}

/// The blocked interval of `blocked` (sorted, not overlapping) that overlaps `window` most, if any does.
fn overlapping(blocked: &[Blocked], window: (u64, u64)) -> Option<&Blocked> {
    let from = blocked.partition_point(|b| b.end_ns <= window.0);
    blocked[from..]
        .iter()
        .take_while(|b| b.start_ns < window.1)
        .take(SCAN)
        .max_by_key(|b| b.end_ns.min(window.1) - b.start_ns.max(window.0))
        .filter(|b| b.end_ns.min(window.1) > b.start_ns.max(window.0))
}
