//! A trace window (`perfgraph trace`): the trace streamed to a control-socket client for a time, fed
//! what the file's trace is fed, through the trace's own writer to a [`files::Stream`] of the client's
//! socket.

use super::Peer;
use crate::base::clock;
use crate::base::config::{Config, TraceFormat};
use crate::base::sys;
use crate::collector::files;
use crate::collector::output::Sample;
use crate::collector::trace::{Trace, about};
use crate::export::trace::Losses;
use crate::local::record::Record;
use crate::local::thread::ThreadState;
use crate::local::{marks, threads};

/// A trace window, one at a time.
pub(crate) struct Window {
    trace: Trace,
    /// Ticks at which it ends.
    end: u64,
    /// The records each thread had lost to ring overflow when it opened: only those lost since are the
    /// window's.
    dropped_before: Vec<(String, u64)>,
    /// A second descriptor of the client's connection, looked at every pass: a client that has gone (killed,
    /// or stopped by a failed write of its own) ends the window then, not at its end time, which may be a
    /// day away. `None` if it could not be had (out of descriptors): the window then runs its time.
    client: Option<Peer>,
}

impl Window {
    /// Opens a window of `seconds` for `peer`, after its `ok`: from now on every record is drained and
    /// written to it too, with what a trace wants recorded (args, events, counters, locks), until it ends
    /// ([`Window::due`]). `None` if the client is gone already.
    pub(crate) fn open(
        mut peer: Peer,
        seconds: f64,
        perfetto: bool,
        config: &Config,
    ) -> Option<Window> {
        if sys::send(peer.stream(), b"ok\n").is_err() {
            return None;
        }
        let client = peer.watcher().ok();
        let format = if perfetto {
            TraceFormat::Perfetto
        } else {
            TraceFormat::Chrome
        };
        let mut trace = Trace::window(
            files::Stream::socket(peer),
            format,
            config.trace_limit,
            config.trace_compress,
            &about::identity(),
        );
        let end = clock::now().0 + clock::scale().ticks((seconds * 1e9) as u64).0;
        let before = about::ring_dropped(&threads::all());
        // With the file's trace beside it, the window is fed first and copies the text args; the file's
        // takes them.
        trace.takes_texts = config.trace.is_none();
        marks::set_wanted(true);
        Some(Window {
            trace,
            end,
            dropped_before: before,
            client,
        })
    }

    /// Before the drain: if the window's time is up (`now` ticks), it ends at its end time, so the drain
    /// that follows brings every call that ended by then; if its client has gone, it ends now, whether or
    /// not anything was being written to it (nobody is left to read it, and the process would pay for the
    /// window and turn every other `perfgraph trace` away until its end time). Returns whether it did
    /// ([`Window::end`] comes after the drain).
    pub(crate) fn due(&mut self, now: u64) -> bool {
        if now >= self.end {
            self.trace.end_at(self.end);
            true
        } else if self.client.as_ref().is_some_and(Peer::gone) {
            self.end = now;
            self.trace.end_at(now);
            true
        } else {
            false
        }
    }

    /// After the drain that followed [`Window::due`]: the window's closing event, and its client with
    /// what it has not taken yet. Marks are then wanted only by the file's trace, if there is one.
    pub(crate) fn end(self, config: &Config) -> Option<(Peer, Vec<u8>)> {
        marks::set_wanted(config.trace.is_some());
        let threads = threads::all();
        let losses = self.losses(&threads);
        self.trace.finish_window(&threads, losses)
    }

    /// At exit: the client gets the rest within a second (the stream's `finish`); no line on stderr: the
    /// client's trace says what it lacks.
    pub(crate) fn finish(self) {
        let threads = threads::all();
        let losses = self.losses(&threads);
        let _ = self.trace.finish(&threads, losses);
    }

    /// Its losses: the ring overflow since it opened.
    fn losses(&self, threads: &[std::sync::Arc<ThreadState>]) -> Losses {
        let mut losses = about::losses(threads);
        for (name, count) in &mut losses.ring_overflow {
            if let Some((_, then)) = self.dropped_before.iter().find(|(n, _)| n == name) {
                *count = count.saturating_sub(*then);
            }
        }
        losses.ring_overflow.retain(|(_, n)| *n > 0);
        losses
    }

    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        self.trace.on_records(thread, records);
    }

    pub(crate) fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        self.trace.on_marks(thread, marks);
    }

    pub(crate) fn on_sample(&mut self, sample: &Sample) {
        about::on_sample(&mut self.trace, sample);
    }

    pub(crate) fn on_printed(&mut self, ticks: u64, text: &str) {
        self.trace.on_printed(ticks, text);
    }

    /// How long (ns) until the trace wants the next pass, if it does.
    pub(crate) fn tick(&mut self) -> Option<u64> {
        self.trace.tick()
    }

    /// Records that end after `ticks` (or after its own end) are not the window's.
    pub(crate) fn end_at(&mut self, ticks: u64) {
        self.trace.end_at(ticks.min(self.end));
    }
}
