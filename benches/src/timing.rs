//! Timing one operation in a plain loop, outside Criterion: what `record` measures in its own process (the
//! counting allocator, one exact memory read, one thread-CPU-clock read) and `alloc-peers` beside hotpath.

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::time::Instant;

/// ns per call of `f`, called `n` times in a row.
#[inline(always)]
pub fn ns_per_call(n: u64, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

/// ns per `alloc` + `dealloc` pair of 64 bytes through `a`, `pairs` times.
pub fn alloc_pair_ns<A: GlobalAlloc + ?Sized>(a: &A, pairs: u64) -> f64 {
    let layout = Layout::from_size_align(64, 8).expect("a valid layout");
    ns_per_call(pairs, || {
        // SAFETY: a non-zero-sized layout.
        let p = black_box(unsafe { a.alloc(layout) });
        // SAFETY: `p` came from `a` with `layout`, and is freed once.
        unsafe { a.dealloc(p, layout) };
    })
}
