//! The control socket as an [`Output`]: looked at between passes, where it answers `status` and `dump`
//! and opens a trace window ([`Window`]), which is then fed what the file's trace is fed.

use std::time::Duration;

use super::window::Window;
use super::{Asked, Server, status};
use crate::base::clock;
use crate::base::config::Config;
use crate::base::control::Request;
use crate::base::sys;
use crate::collector::output::{Every, Look, Output, Sample};
use crate::local::record::Record;
use crate::local::snapshot;
use crate::local::thread::ThreadState;

/// The output: the socket until the exit, a trace window while one is open, and the settings (a `dump`
/// takes a report with them).
pub(crate) struct Listen {
    server: Option<Server>,
    window: Option<Window>,
    /// Requests read, from a `trace` on, waiting for the drain it asked for ([`Look::DrainFirst`]).
    waiting: Vec<Asked>,
    /// The window's time is up (or its client gone): it ends after this pass's drain.
    window_ends: bool,
    config: Config,
}

impl Listen {
    /// The control socket, if the settings want one and it could be opened (else one warning line).
    pub(crate) fn of(config: &Config) -> Option<Listen> {
        if !config.listen {
            return None;
        }
        Some(Listen {
            server: Some(Server::open()?),
            window: None,
            waiting: Vec::new(),
            window_ends: false,
            config: config.clone(),
        })
    }
}

impl Output for Listen {
    /// A trace window loses nothing, as the file's trace.
    fn every_record(&self) -> Every {
        if self.window.is_some() {
            Every::Lossless
        } else {
            Every::No
        }
    }

    fn on_memory(&mut self, sample: &Sample) {
        if let Some(w) = &mut self.window {
            w.on_sample(sample);
        }
    }

    fn before_drain(&mut self, now: u64) {
        self.window_ends = self.window.as_mut().is_some_and(|w| w.due(now));
    }

    fn on_marks(&mut self, thread: &ThreadState, marks: &[Record]) {
        if let Some(w) = &mut self.window {
            w.on_marks(thread, marks);
        }
    }

    fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        if let Some(w) = &mut self.window {
            w.on_records(thread, records);
        }
    }

    /// A window that ended before the drain: its closing event, and the rest to its client as it takes it.
    fn after_drain(&mut self, mono: u64) {
        if !std::mem::take(&mut self.window_ends) {
            return;
        }
        if let Some((peer, rest)) = self.window.take().and_then(|w| w.end(&self.config))
            && let Some(server) = &mut self.server
        {
            server.send(peer, rest, mono);
        }
    }

    fn on_printed(&mut self, ticks: u64, text: &str) {
        if let Some(w) = &mut self.window {
            w.on_printed(ticks, text);
        }
    }

    fn tick(&mut self, _now: u64) -> Option<u64> {
        self.window.as_mut().and_then(Window::tick)
    }

    /// Accepts, reads, writes, and answers the requests read whole; a pass now once a window opened.
    fn poll(&mut self, mono: u64) -> Look {
        let Some(server) = &mut self.server else {
            return Look::Never;
        };
        // After the drain a `trace` asked for, its requests; else what the socket has.
        let mut drained = !self.waiting.is_empty();
        let mut asked = if drained {
            std::mem::take(&mut self.waiting).into_iter()
        } else {
            server.poll(mono).into_iter()
        };
        let mut pass_now = false;
        while let Some(one) = asked.next() {
            let reply = match one.request {
                Request::Status => Ok(status::json()),
                Request::Dump if !server.has_room(0) => Err("busy: replies waiting".to_owned()),
                Request::Dump => {
                    // `ok` at once, then the dump once built (a large one takes a while): a client tells a
                    // process that answers from one that does not (stopped) by its first line.
                    let mut peer = one.peer;
                    if sys::send(peer.stream(), b"ok\n").is_err() {
                        continue;
                    }
                    let body = snapshot::report(&self.config).json().into_bytes();
                    server.send(peer, body, mono);
                    continue;
                }
                Request::Trace { .. } if self.window.is_none() && !drained => {
                    // The rings caught up first: what they lost before the window is not the window's.
                    self.waiting.push(one);
                    self.waiting.extend(asked);
                    return Look::DrainFirst;
                }
                Request::Trace { .. } if self.window.is_some() => {
                    Err("busy: a trace window is being recorded already".to_owned())
                }
                Request::Trace { seconds, perfetto } => {
                    drained = false;
                    self.window = Window::open(one.peer, seconds, perfetto, &self.config);
                    // A pass now: from here the drains are paced by how fast the rings fill.
                    pass_now = true;
                    continue;
                }
            };
            server.reply(one.peer, reply, mono);
        }
        if pass_now {
            return Look::Within(Duration::ZERO);
        }
        Look::Within(server.poll_within(clock::monotonic_ns()))
    }

    /// First thing at exit: no client connects to a process that will not answer.
    fn close(&mut self) {
        if let Some(server) = self.server.take() {
            server.close();
        }
    }

    fn end_at(&mut self, ticks: u64) {
        if let Some(w) = &mut self.window {
            w.end_at(ticks);
        }
    }

    fn finish(&mut self) {
        if let Some(w) = self.window.take() {
            w.finish();
        }
    }
}
