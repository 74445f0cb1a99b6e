//! The streamed trace's data on disk, not only in the page cache, at least every [`SYNC_INTERVAL`]: a
//! thread of its own calls `fdatasync` on the trace file on a timer, so the background thread, which
//! drains the rings and writes the file, never waits for the disk. Its first sync is at once, with its
//! directory's: the file took its name as the run started, and the header and that name go to disk then.
//! A power cut then loses at most the last [`SYNC_INTERVAL`] and the
//! [`FLUSH_INTERVAL`](super::FLUSH_INTERVAL) before it; with the page rule (`export::pages`) and
//! page-granular writeback, what is left holds whole events.
//!
//! The thread holds its own descriptor of the file and no lock of ours, so a `fork()` has nothing to
//! release: the child has no such thread (only the forking thread crosses a fork) and never finishes the
//! parent's trace, so it syncs nothing.

use std::fs::File;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};

/// How often the trace file is synced to disk while the program runs.
pub const SYNC_INTERVAL: Duration = Duration::from_secs(1);

/// The sync thread; [`Syncer::stop`] ends it.
pub(crate) struct Syncer {
    /// Dropped to stop the thread (it waits on the other end with a timeout).
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Syncer {
    /// Starts syncing `file` (a descriptor of its own of the trace file) at once and then every
    /// [`SYNC_INTERVAL`], and `dir` (the directory that holds its name) at once; `None` when no thread can
    /// be started (the file and the directory are then synced only at the end).
    pub(crate) fn start(file: File, dir: Option<File>) -> Option<Syncer> {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let thread = std::thread::Builder::new()
            .name("perfgraph-sync".into())
            .spawn(move || {
                // The header, then the name the file took (`files::Stream::take_name`).
                let _ = file.sync_data();
                if let Some(dir) = dir {
                    let _ = dir.sync_all();
                }
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(SYNC_INTERVAL) {
                    // An error (EIO) is the next write's or the final fsync's to report.
                    let _ = file.sync_data();
                }
            })
            .ok()?;
        Some(Syncer { stop, thread })
    }

    /// Stops the thread, after the sync under way if any.
    pub(crate) fn stop(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_thread_stops_at_once() {
        let path = std::env::temp_dir().join(format!("perfgraph-sync-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let dir = std::fs::File::open(std::env::temp_dir()).ok();
        let syncer = super::Syncer::start(file, dir).unwrap();
        let start = std::time::Instant::now();
        syncer.stop();
        // A hang catcher: it stops without waiting for the interval.
        assert!(start.elapsed() < super::SYNC_INTERVAL * 10);
        let _ = std::fs::remove_file(path);
    }
}
