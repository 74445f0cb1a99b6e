//! What a trace (the file's or a window's) takes from beside the records: who writes it, what it lacks
//! that is not its to know, and each memory sample with what is read beside it.

use std::sync::Arc;

use super::Trace;
use crate::base::{identity, process, sys};
use crate::collector::output::Sample;
use crate::export::trace::{Identity, Losses};
use crate::local::ring;
use crate::local::thread::ThreadState;
use crate::local::threads;

/// Who writes the trace: the process's identity, which the trace's header carries.
pub(crate) fn identity() -> Identity {
    Identity {
        pid: sys::process_id(),
        rank: identity::rank(),
        host: identity::host().to_owned(),
        start_unix_ns: identity::start_unix_ns(),
        program: process::program_name().to_owned(),
    }
}

/// What the traces lack that is not theirs to know: ring overflow, threads without a ring.
pub(crate) fn losses(threads: &[Arc<ThreadState>]) -> Losses {
    Losses {
        ring_overflow: ring_dropped(threads),
        unmapped_ring_threads: ring::unmapped(),
        ..Losses::default()
    }
}

/// A resident-memory sample; the trace samples each thread's CPU time with it, and the process's heap
/// when the counting allocator counts.
pub(crate) fn on_sample(trace: &mut Trace, sample: &Sample) {
    trace.on_memory(sample.ticks, sample.bytes);
    if let Some(heap) = sample.heap() {
        trace.on_heap(sample.ticks, heap);
    }
    trace.on_cpu(sample.ticks, sample.threads());
}

/// Threads that lost records to ring overflow, with how many: `(name, count)`; the live ones in `threads`,
/// then the folded ones by group.
pub(crate) fn ring_dropped(threads: &[Arc<ThreadState>]) -> Vec<(String, u64)> {
    let (_, retired) = threads::view();
    threads
        .iter()
        .map(|t| {
            // Relaxed: written by this (the background) thread only.
            let dropped = t.dropped.load(std::sync::atomic::Ordering::Relaxed);
            (t.name.clone(), dropped)
        })
        .chain(retired.iter().map(|g| (g.shown_name(), g.dropped)))
        .filter(|(_, n)| *n > 0)
        .collect()
}
