//! The tracks' uuids: the process's, each thread's, the fixed counter and live print tracks, and those
//! made per thread, counter or future, each kept apart from the others by its bits; and the thread id
//! shown for a thread.

pub(super) fn process_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0000
}

pub(super) fn thread_uuid(pid: u32, index: u32) -> u64 {
    (pid as u64) << 32 | index as u64
}

pub(super) fn memory_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0001
}

pub(super) fn marker_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0002
}

pub(super) fn heap_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0003
}

/// The `critical path` track (`PERFGRAPH_REPORT=critical`).
pub(super) fn path_uuid(pid: u32) -> u64 {
    (pid as u64) << 32 | 0x8000_0004
}

/// The track of the `n`th counter (in order of first value): a fixed track of the process, numbered
/// above the other fixed ones.
pub(super) fn counter_uuid(pid: u32, n: u32) -> u64 {
    (pid as u64) << 32 | (0x8000_0100 + n as u64)
}

/// The interval statistics' two tracks of thread `index` (calls per second, share in sections): thread
/// tracks with bit 61, and 61 and 60, set (as the CPU track has bit 62).
pub(super) fn interval_uuids(pid: u32, index: u32) -> (u64, u64) {
    let t = thread_uuid(pid, index);
    (t | 1 << 61, t | 1 << 61 | 1 << 60)
}

pub(super) fn cpu_uuid(pid: u32, index: u32) -> u64 {
    // Thread tracks take the low half's values below 2^31, the fixed tracks 2^31 and up: CPU tracks are
    // thread tracks with bit 62 set.
    thread_uuid(pid, index) | 1 << 62
}

/// The track of the future `id`: a hash of it and the pid (splitmix64), bit 63 set so it meets no other
/// track's uuid.
pub(super) fn future_uuid(pid: u32, id: u64) -> u64 {
    let mut z = id ^ ((pid as u64) << 32).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1 << 63
}

/// The thread id shown for thread `index` (as in the Chrome trace).
pub(super) fn tid(index: u32) -> u64 {
    index as u64 + 1
}
