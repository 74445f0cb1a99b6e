//! `fork()` after the runtime started. The child has one thread, the one that forked: the background
//! thread, the capture's forwarder and the signal watcher exist only in the parent. So the child:
//!
//! * collects nothing and waits for nothing at exit ([`process::mark_forked_child`]: its exit handler
//!   returns at once), prints no live line and writes no report or file (its paths would overwrite the
//!   parent's files);
//! * records into what it inherited (the parent's threads as they were at the fork, and its own), which
//!   `report()`, `combined()` and `threads()` in the child show, and which nothing writes out;
//! * leaves the capture (`PERFGRAPH_CAPTURE`) to the parent: its fds 1 and 2 still lead into the program's
//!   stream, which the parent's forwarder forwards; the child's `suspend`, `stderr()` and warnings write to
//!   fd 2 as they are, without the terminal's lock;
//! * forgets a signal's final pass that was under way in the parent (its signal handlers already let the
//!   default action happen in any process but the one that installed them).
//! * closes the parent's control socket and its clients' connections (`collector::net::listen`): a client
//!   waiting for the parent's answer is not kept waiting by the child, and the child does not listen;
//! * has no trace sync thread (`collector::trace::fsync`) and never finishes the parent's trace, so it syncs and
//!   renames nothing: that thread holds no lock of ours, so there is nothing of it to release here.
//!
//! Locks: a lock held by another thread at the fork stays held for good in the child, and so does a
//! one-time start under way: [`prepare`] first waits for the runtime's start if another thread is running
//! it (a fork before perfgraph was ever called, racing its first call, is not covered). The locks the child
//! may still take after a fork (the section registry and its skipped list, the thread names, the thread
//! list, the ring pool, the latency blocks' pool, the trace's instant messages, the panic list) are short and never held while user code
//! runs; the only nesting is the thread list's around the two pools' (a state made or freed under the
//! list's lock takes or gives a ring, then latency blocks). [`prepare`] takes them all, in that order, before the fork, and both sides release them after it. The clock's calibration takes no
//! lock (`base::clock`). The terminal's lock, the capture's and the exit's are never taken in the child
//! (the terminal's is not taken in [`prepare`] either: it is held while `suspend` runs user code, which may
//! itself fork, and while a stalled stderr is waited for).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{MutexGuard, OnceLock};

use super::exit;
use super::live::panic;
use super::terminal;
use super::terminal::capture;
use crate::base::registry::{self, SectionId};
use crate::base::{process, sys};
use crate::local::{latency, marks, ring, threads};

/// The locks [`prepare`] took, in the order it took them.
struct Held {
    _registry: (
        MutexGuard<'static, u32>,
        MutexGuard<'static, Vec<SectionId>>,
    ),
    _names: MutexGuard<'static, BTreeMap<String, u32>>,
    _threads: MutexGuard<'static, threads::Threads>,
    _pool: MutexGuard<'static, ring::Pool>,
    _latency: MutexGuard<'static, latency::Pool>,
    _marks: MutexGuard<'static, Option<std::collections::HashMap<u64, String>>>,
    _panics: MutexGuard<'static, Vec<(u32, u64)>>,
    _locks: MutexGuard<'static, Option<crate::local::locks::Table>>,
}

thread_local! {
    /// What the forking thread holds across the fork (the same thread runs all three handlers).
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// What [`prepare`] calls first: waits for the runtime's start to finish on another thread (entry's `start`).
static WAIT_FOR_START: OnceLock<fn()> = OnceLock::new();

/// Registers the handlers (once, at the first call of the runtime's start, before the start itself).
/// `wait_for_start` returns once no other thread is starting the runtime.
pub(crate) fn install(wait_for_start: fn()) {
    let _ = WAIT_FOR_START.set(wait_for_start);
    sys::at_fork(prepare, release, in_child);
}

/// Before the fork, in the forking thread: waits for a start under way elsewhere (the child would inherit
/// it half done, and wait for it for good), then takes every lock the child may need.
extern "C" fn prepare() {
    let _ = std::panic::catch_unwind(|| {
        // Inside `suspend` this thread may hold the terminal, which a start under way may be waiting for.
        if !terminal::inside()
            && let Some(wait) = WAIT_FOR_START.get()
        {
            wait();
        }
        let held = Held {
            _registry: registry::hold_for_fork(),
            _names: threads::hold_names_for_fork(),
            _threads: threads::hold_for_fork(),
            _pool: ring::hold_pool_for_fork(),
            _latency: latency::hold_pool_for_fork(),
            _marks: marks::hold_for_fork(),
            _locks: crate::local::locks::hold_for_fork(),
            _panics: panic::hold_for_fork(),
        };
        // During the thread's teardown there is nowhere to keep them: then none are held.
        let _ = HELD.try_with(|h| *h.borrow_mut() = Some(held));
    });
}

/// After the fork, in the parent and in the child: releases what [`prepare`] took.
extern "C" fn release() {
    let _ = std::panic::catch_unwind(|| {
        let _ = HELD.try_with(|h| h.borrow_mut().take());
    });
}

/// After the fork, in the child: releases the locks, then forgets the parent's threads and outputs.
extern "C" fn in_child() {
    release();
    process::mark_forked_child();
    capture::forget_in_child();
    exit::forget_in_child();
    // The parent's control socket and its clients are the parent's.
    super::sockets::close_in_child();
    // The parent's experiments are the parent's (and their lock may be held by a thread not here).
    crate::local::causal::set_on(false);
    // The parent's open live line is not the child's to end (the SIGABRT handler reads this).
    terminal::MID_LINE.store(false, std::sync::atomic::Ordering::Relaxed);
}
