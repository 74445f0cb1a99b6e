//! Model-checks the open-frame table with loom: every interleaving (bounded preemptions) of an owner that
//! opens and closes sections while another thread reads the table. Whatever it catches, a reader must get
//! a consistent prefix of a stack the owner really had: each frame is a call the owner opened at that
//! depth, with the data it wrote (never torn), each frame the parent of the next, and `child_ticks` a value
//! that call really had.
//!
//! This compiles the production `src/local/frames.rs` (and the ring's `Slot` it is built on) itself, with
//! `crate::base::atomics` pointing at loom's atomics.
//! It runs as a normal test (no `--cfg loom` needed); `LOOM_MAX_PREEMPTIONS` defaults to 2 here.

#![allow(dead_code, missing_docs)] // reason: the included modules have items only the runtime uses.

mod loom_model;

#[path = "../src/base/poison.rs"]
mod poison;

mod base {
    pub(crate) mod atomics {
        pub(crate) use loom::sync::atomic;
        pub(crate) const MODEL: bool = true;
    }
    pub(crate) use super::poison;
    /// The ring's slots are built one by one in the model (`MODEL`), never mapped: never called.
    pub(crate) mod sys {
        pub(crate) fn map_zeroed(_len: usize) -> Option<std::ptr::NonNull<u8>> {
            None
        }
        pub(crate) unsafe fn unmap(_ptr: std::ptr::NonNull<u8>, _len: usize) {}
    }
}

#[path = "../src/local/frames.rs"]
mod frames;
#[path = "../src/local/ring.rs"]
mod ring;

/// The production files' own paths to each other (`crate::local::…`).
mod local {
    pub(crate) use super::{frames, ring};
}

use std::collections::HashMap;

use local::frames::{FrameData, FrameTable, Inside, OpenFrame};
use loom::sync::Arc;

fn model(f: impl Fn() + Sync + Send + 'static) {
    loom_model::check(2, f);
}

/// One step of the owner's script: open a section (at this tick), or close the innermost one.
#[derive(Debug, Clone, Copy)]
enum Step {
    Enter(u64),
    Exit(u64),
}

/// What the owner did with one call: where and what it wrote, its parent, the `child_ticks` it went through.
#[derive(Debug, Clone)]
struct Call {
    depth: u32,
    data: FrameData,
    parent: Option<u64>,
    child_ticks: Vec<u64>,
}

/// Distinct words for every call, so a frame mixing two calls' words shows.
fn data(seq: u64, start: u64) -> FrameData {
    FrameData {
        section: 10 + seq as u32,
        start,
        node: 100 + seq as u32,
        mem_start_kb: 1000 + seq as u32,
        flags: 0,
    }
}

/// The owner, doing what `ThreadState::enter`/`close` do to the table: write the frame, publish the depth;
/// on close, read the frame back, publish the lower depth and add the elapsed time to the parent frame.
struct Owner {
    table: Arc<FrameTable>,
    depth: u32,
    enters: u64,
    /// Starts of the frames past the table, innermost last (production's private `deep` frames).
    deep: Vec<u64>,
}

impl Owner {
    fn run(&mut self, script: &[Step]) {
        for step in script {
            match *step {
                Step::Enter(tick) => {
                    let seq = self.enters;
                    // A frame past the table is the owner's private business, as in production.
                    if !self
                        .table
                        .open(self.depth, seq, data(seq, tick), std::ptr::null())
                    {
                        self.deep.push(tick);
                    }
                    self.enters += 1;
                    self.depth += 1;
                    self.table.publish_depth(self.depth);
                }
                Step::Exit(tick) => {
                    let d = self.depth - 1;
                    let start = match self.table.peek(d) {
                        Some((f, _, _, _)) => f.start,
                        None => self.deep.pop().unwrap(),
                    };
                    let elapsed = tick - start;
                    self.depth = d;
                    self.table.publish_depth(d);
                    if d > 0 {
                        self.table.add_child(d - 1, elapsed, 0);
                    }
                }
            }
        }
    }
}

/// Plays the script without a reader: every call, by sequence number.
fn calls(script: &[Step]) -> HashMap<u64, Call> {
    let mut calls: HashMap<u64, Call> = HashMap::new();
    let mut stack: Vec<(u64, u64)> = Vec::new(); // (seq, start)
    let mut enters = 0;
    for step in script {
        match *step {
            Step::Enter(tick) => {
                calls.insert(
                    enters,
                    Call {
                        depth: stack.len() as u32,
                        data: data(enters, tick),
                        parent: stack.last().map(|&(s, _)| s),
                        child_ticks: vec![0],
                    },
                );
                stack.push((enters, tick));
                enters += 1;
            }
            Step::Exit(tick) => {
                let (_, start) = stack.pop().expect("script closes only what it opened");
                if let Some(&(parent, _)) = stack.last() {
                    let ticks = &mut calls.get_mut(&parent).unwrap().child_ticks;
                    ticks.push(ticks.last().unwrap() + tick - start);
                }
            }
        }
    }
    calls
}

fn check(read: &[OpenFrame], calls: &HashMap<u64, Call>) {
    for (d, f) in read.iter().enumerate() {
        let call = calls
            .get(&f.seq)
            .unwrap_or_else(|| panic!("no such call: {f:?}"));
        assert_eq!(f.depth, d as u32, "frames out of place: {read:?}");
        assert_eq!(call.depth, f.depth, "call read at another depth: {f:?}");
        let seen = FrameData {
            section: f.section,
            start: f.start,
            node: f.node,
            mem_start_kb: f.mem_start_kb,
            flags: 0,
        };
        assert_eq!(seen, call.data, "torn frame: {read:?}");
        assert!(
            call.child_ticks.contains(&f.child_ticks),
            "child_ticks {} of another call: {read:?}",
            f.child_ticks
        );
        let parent = d.checked_sub(1).map(|p| read[p].seq);
        assert_eq!(parent, call.parent, "not a stack the owner had: {read:?}");
    }
}

fn owner_and_reader(public: usize, script: &'static [Step], reads: usize) {
    let expected = std::sync::Arc::new(calls(script));
    model(move || {
        let table = Arc::new(FrameTable::new(public));
        let owner = {
            let table = Arc::clone(&table);
            loom::thread::spawn(move || {
                Owner {
                    table,
                    depth: 0,
                    enters: 0,
                    deep: Vec::new(),
                }
                .run(script)
            })
        };
        for _ in 0..reads {
            let (mut read, inside) = table.read_inside();
            // The frame the second depth load cut off is the innermost one's child all the same.
            if let Inside::Closed(child) = inside {
                read.push(child);
            }
            check(&read, &expected);
        }
        owner.join().unwrap();
        assert!(table.read().is_empty(), "everything closed");
    });
}

use Step::{Enter, Exit};

/// Two stacks, one after the other, each of a parent with a child that ends: a reader that mixes the
/// first stack's parent with the second's child, or a frame's time with another call's, is caught.
#[test]
fn a_reader_sees_a_stack_the_owner_had() {
    const SCRIPT: &[Step] = &[
        Enter(1),
        Enter(2),
        Exit(3),
        Exit(4),
        Enter(5),
        Enter(6),
        Exit(8),
        Exit(9),
    ];
    owner_and_reader(2, SCRIPT, 1);
}

/// The owner goes deeper than the table, and the frame there ends: the reader gets the public frames only,
/// each with a `child_ticks` the call really had.
#[test]
fn frames_past_the_table_stay_private() {
    const SCRIPT: &[Step] = &[Enter(1), Enter(2), Enter(3), Exit(4), Exit(6), Exit(9)];
    owner_and_reader(2, SCRIPT, 1);
}
