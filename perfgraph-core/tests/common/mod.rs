//! Helpers shared by the integration tests.
#![allow(dead_code)] // reason: each test binary uses a different subset.

use std::time::{Duration, Instant};

/// Waits until the background thread has completed `n` more passes (each drains every ring once). The bound
/// only catches a hang; it is not a timing assertion.
pub fn wait_passes(n: u64) {
    perfgraph_core::__private::pause_draining(false);
    let target = perfgraph_core::__private::passes() + n + 1;
    let deadline = Instant::now() + Duration::from_secs(30);
    while perfgraph_core::__private::passes() < target {
        assert!(
            Instant::now() < deadline,
            "background thread made no progress in 30 s"
        );
        std::thread::yield_now();
    }
}

/// The snapshot of the thread named `name`.
pub fn thread_named(name: &str) -> perfgraph_core::ThreadSnapshot {
    perfgraph_core::threads()
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no thread named {name}"))
}
