//! The trace (`PERFGRAPH_TRACE`), streamed to its file while the program runs.
//!
//! The background thread hands every drained record here; each becomes a call event in the format the
//! path chose ([`TraceFormat`]: Perfetto protobuf for `.pftrace` / `.perfetto-trace`, Chrome JSON otherwise),
//! appended to a buffer that goes to the file every [`FLUSH_INTERVAL`] or [`FLUSH_BYTES`], whichever comes
//! first. Memory held for the trace is that buffer and a few bytes per thread, section and nesting depth
//! (and 48 bytes a second for [`TickMap`]), whatever the run's length.
//!
//! Every event is placed by the page rule ([`pages`]: none crosses a 4 KB page boundary of the file, so a
//! kill or a power cut leaves whole events); Perfetto packets gather in `raw` first and are packed into the
//! buffer by [`compress`], deflated in bundles or not. A regular file is synced to disk by [`fsync`] as soon
//! as it takes its name, then every second, and once more at the end.
//!
//! `PERFGRAPH_TRACE_LIMIT` caps the file's size: once the next call would take the file past it, calls are
//! counted and not written, and the closing event (which may take it a few hundred bytes past) says how
//! many. A full disk stops the trace the same way, with one warning line; the file is cut back to its last
//! whole write, never behind its header (written first, alone). A disk too full for the header itself
//! leaves no file, and a previous one at that name as it was, with one line. The file is opened by
//! [`files::Stream`]: a regular file is created under a temporary name,
//! and takes the name asked for (replacing what had it in one `rename`) as soon as the header is in it, at
//! the start; a run that is killed leaves it there. It is complete exactly when its last event is the
//! closing one.

pub(crate) mod about;
mod compress;
mod events;
mod fsync;
mod tick_map;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::files;
use super::terminal::screen;
use crate::base::clock;
use crate::base::config::{TraceCompress, TraceFormat};
use crate::export::chrome::Chrome;
use crate::export::pages;
use crate::export::perfetto::Perfetto;
use crate::export::trace::{Call, Encoder, Identity, Losses, Summary};
use crate::local::thread::ThreadState;
use tick_map::TickMap;

/// Longest the file lags behind what was drained: the buffer is written at least this often.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// The buffer is written as soon as it holds this much.
pub const FLUSH_BYTES: usize = 1 << 20;

/// The streamed trace, owned by the background thread.
pub(crate) struct Trace {
    path: PathBuf,
    /// `None` once the file could not be opened or written (`error` says why).
    file: Option<files::Stream>,
    /// Syncs a regular file to disk every [`fsync::SYNC_INTERVAL`], stopped before the file is finished.
    syncer: Option<fsync::Syncer>,
    /// The one line to print at exit when the file could not be opened or written.
    error: Option<String>,
    format: Box<dyn Encoder>,
    /// Events not yet written, placed by the page rule.
    buffer: Vec<u8>,
    /// Perfetto: packets not yet packed into `buffer` (by `packer`, deflated or not).
    raw: Vec<u8>,
    packer: compress::Packer,
    /// `PERFGRAPH_TRACE_LIMIT`.
    limit: Option<u64>,
    /// The file reached its limit: calls are counted in `past_limit`, not written.
    stopped: bool,
    past_limit: u64,
    /// Calls that ran across the trace's end (began before it, ended after): written cut at the end,
    /// unfinished, as the calls still open then are.
    cut_at_end: u64,
    /// The disk filled: calls are counted in `unwritten`, not written.
    disk_full: bool,
    /// The warning on a full disk was printed (it is printed once).
    warned_full: bool,
    /// Calls not written: the disk was full, or a pipe's reader did not keep up.
    unwritten: u64,
    /// Calls written (or in the buffer).
    calls: u64,
    /// Calls in the buffer.
    buffered: u64,
    /// By thread index: whether the thread's name is in the trace.
    named: Vec<bool>,
    /// Flows written so far (locks handed over): the next one's id.
    flows: u64,
    /// The threads the last interval's counter tracks had a value for.
    interval_threads: Vec<u32>,
    /// Lock names by id, as looked up (bounded by the distinct names).
    lock_names: Vec<Option<String>>,
    /// The names of the last threads named, newest last: a lock's wait names its holder, which may have
    /// exited and left the live list since. At most [`RECENT_NAMES`].
    recent_names: std::collections::VecDeque<(u32, String)>,
    map: TickMap,
    /// Monotonic ns of the last write to the file.
    flushed_ns: u64,
    /// The last memory figure written (a sample that does not move is not written again) and the latest.
    memory: (Option<u64>, Option<(u64, u64)>),
    /// The last heap figure written (the same rule).
    heap: Option<u64>,
    /// By thread index: the last CPU sample `(trace ns, CPU ns since its first section)`.
    cpu: Vec<Option<(u64, u64)>>,
    /// Ticks at which the trace ends (set at exit, before the last drain): records ending later are after
    /// it, and not written.
    end_ticks: Option<u64>,
    /// Ticks at which a trace window (`perfgraph trace`) starts: records that ended before are not in it.
    start_ticks: u64,
    /// Whether this trace takes the text args and messages it writes (the last trace fed does), or only
    /// copies them, for another trace to take.
    pub(crate) takes_texts: bool,
}

/// Thread names the trace keeps for the locks' holders (see `Trace::recent_names`).
const RECENT_NAMES: usize = 1024;

impl Trace {
    /// Opens the trace file at `path` (its placeholders already filled in) and writes its header, which
    /// says who wrote it.
    pub(crate) fn open(
        path: &Path,
        limit: Option<u64>,
        compression: TraceCompress,
        who: &Identity,
    ) -> Trace {
        let file = files::Stream::open("PERFGRAPH_TRACE", path);
        Trace::start(
            path,
            file,
            TraceFormat::of_path(path),
            limit,
            compression,
            who,
        )
    }

    /// A trace window (`perfgraph trace`): the calls that end from now on, written to a control-socket
    /// client's `stream` in `format`, until [`end_at`](Self::end_at).
    #[cfg(feature = "listen")]
    pub(crate) fn window(
        stream: files::Stream,
        format: TraceFormat,
        limit: Option<u64>,
        compression: TraceCompress,
        who: &Identity,
    ) -> Trace {
        let mut trace = Trace::start(
            Path::new("(perfgraph trace)"),
            Ok(stream),
            format,
            limit,
            compression,
            who,
        );
        trace.start_ticks = clock::now().0;
        trace
    }

    fn start(
        path: &Path,
        file: Result<files::Stream, String>,
        format: TraceFormat,
        limit: Option<u64>,
        compression: TraceCompress,
        who: &Identity,
    ) -> Trace {
        let mut buffer = Vec::with_capacity(FLUSH_BYTES + 64 * 1024);
        let format: Box<dyn Encoder> = match format {
            TraceFormat::Perfetto => Box::new(Perfetto::header(&mut buffer, who)),
            TraceFormat::Chrome => Box::new(Chrome::header(&mut buffer, who)),
        };
        let (file, error) = match file {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(e)),
        };
        // The header is the first event, at offset 0.
        let (min, pad) = format.padding();
        pages::seal(&mut buffer, 0, 0, min, pad);
        let mut trace = Trace {
            path: path.to_owned(),
            file,
            syncer: None,
            error,
            format,
            buffer,
            raw: Vec::new(),
            packer: compress::Packer::new(compression),
            limit,
            stopped: false,
            past_limit: 0,
            cut_at_end: 0,
            disk_full: false,
            warned_full: false,
            unwritten: 0,
            calls: 0,
            buffered: 0,
            named: Vec::new(),
            flows: 0,
            interval_threads: Vec::new(),
            lock_names: Vec::new(),
            recent_names: std::collections::VecDeque::new(),
            map: TickMap::new(),
            flushed_ns: clock::monotonic_ns(),
            memory: (None, None),
            heap: None,
            cpu: Vec::new(),
            end_ticks: None,
            start_ticks: 0,
            takes_texts: true,
        };
        // The header goes into the file, which then takes its name: from now on a run that is killed
        // leaves its trace, readable up to its last write, under the name asked for.
        trace.flush();
        if let Some(file) = &mut trace.file
            && let Err(e) = file.take_name()
        {
            trace.error = Some(e);
            trace.file = None;
        }
        trace.syncer = trace
            .file
            .as_ref()
            .and_then(files::Stream::sync_handles)
            .and_then(|(file, dir)| fsync::Syncer::start(file, dir));
        trace
    }

    /// The file offset the buffer's first byte goes to: the one place the trace knows where it is in
    /// its file (the page rule places every event by it).
    fn offset(&self) -> u64 {
        self.file.as_ref().map_or(0, |f| f.written)
    }

    /// Appends one event (`write` gives it to the format), moved to the next page if it would cross a
    /// page boundary of the file ([`pages`]). Perfetto packets go to `raw` first, and are packed into the
    /// buffer, by the page rule too, as they gather.
    #[inline]
    fn emit(&mut self, write: impl FnOnce(&mut dyn Encoder, &mut Vec<u8>)) {
        if self.format.packs() {
            write(self.format.as_mut(), &mut self.raw);
            if self.raw.len() >= compress::PACK_BYTES {
                self.pack(false);
            }
            return;
        }
        let start = self.buffer.len();
        write(self.format.as_mut(), &mut self.buffer);
        let (min, pad) = self.format.padding();
        let base = self.offset();
        pages::seal(&mut self.buffer, base, start, min, pad);
    }

    /// Moves the packets gathered in `raw` into the buffer (all of them, or only full bundles' worth).
    fn pack(&mut self, all: bool) {
        let base = self.offset();
        self.packer.pack(&mut self.raw, &mut self.buffer, base, all);
    }

    /// Whether the next event still fits under the limit.
    fn fits(&mut self) -> bool {
        self.fits_with(0)
    }

    /// Whether the next event, `extra` bytes longer than an event without args may be, still fits under
    /// the limit.
    fn fits_with(&mut self, extra: u64) -> bool {
        if self.disk_full {
            return false;
        }
        if !self.stopped
            && let Some(limit) = self.limit
        {
            let size = self.offset() + (self.buffer.len() + self.raw.len()) as u64;
            // An event that does not fit in the rest of its page starts the next one (the page rule), the
            // gap padded: count that gap too, or an event placed after it ends past the limit (a trace
            // limited to 4,096 bytes once held 4,258).
            let room = pages::room(size) as u64;
            let at = if room < 256 { size + room } else { size };
            // Room for one more call event.
            self.stopped = at + 256 + extra > limit;
        }
        !self.stopped
    }

    /// Whether one more call or mark goes into the file; if not, it is counted where the end says why:
    /// unwritten (the disk is full) or past the limit.
    fn admit(&mut self) -> bool {
        self.admit_with(0)
    }

    /// As [`admit`](Self::admit), for an event `extra` bytes longer than one without args may be.
    fn admit_with(&mut self, extra: u64) -> bool {
        if self.disk_full {
            self.unwritten += 1;
            false
        } else if !self.fits_with(extra) {
            self.past_limit += 1;
            false
        } else {
            true
        }
    }

    /// At the end of a pass: writes the buffer if [`FLUSH_INTERVAL`] passed since the last write, and
    /// takes the newest calibration now and then. Returns how long (ns) the background thread may sleep
    /// before the next write is due.
    pub(crate) fn tick(&mut self) -> Option<u64> {
        self.map.follow();
        // A trace window's client gets what it takes of the backlog at every pass, not only at the next
        // write; one that has gone gets nothing more.
        if let Some(file) = &mut self.file
            && file.pump().is_err()
        {
            self.file = None;
        }
        let interval = FLUSH_INTERVAL.as_nanos() as u64;
        let since = clock::monotonic_ns().saturating_sub(self.flushed_ns);
        if since >= interval {
            self.flush();
            return Some(interval);
        }
        if self.buffer.is_empty() && self.raw.is_empty() {
            None
        } else {
            Some(interval - since)
        }
    }

    /// Writes the buffer to the file. A full disk stops the trace with one warning line, a reader that
    /// does not keep up loses what it did not take room for (both counted); any other error ends the trace
    /// (the line is printed at exit).
    fn flush(&mut self) {
        self.flushed_ns = clock::monotonic_ns();
        self.pack(true);
        let buffered = std::mem::take(&mut self.buffered);
        let Some(file) = &mut self.file else {
            self.buffer.clear();
            return;
        };
        if self.buffer.is_empty() {
            return;
        }
        if let Err(e) = file.write_all(&self.buffer) {
            self.calls -= buffered;
            self.unwritten += buffered;
            if file.written == 0 && file.is_regular_file() {
                // Not even the header fits: no file at all (its temporary one is removed as it is
                // dropped, and it never takes the name, so a previous trace there is kept). A file
                // without its header would not be a trace: a Chrome one without its `[`, a Perfetto one
                // with events on tracks it does not describe.
                self.error = Some(format!(
                    "{}; not even the trace's header fits, so no trace is written (a previous file of \
                     that name is left as it was)",
                    file.error(&e)
                ));
                self.file = None;
                self.buffer.clear();
                return;
            }
            if e.raw_os_error() == Some(libc::ENOSPC) && !self.warned_full {
                self.disk_full = true;
                self.warned_full = true;
                screen::warn(&format!(
                    "perfgraph: warning: the disk is full: the PERFGRAPH_TRACE file {:?} stops at {} bytes; \
                     later calls are counted, not written",
                    self.path.display().to_string(),
                    file.written
                ));
            } else if e.kind() != std::io::ErrorKind::WouldBlock {
                self.error = Some(file.error(&e));
                self.file = None;
            }
        }
        self.buffer.clear();
    }

    /// Process exit, after the final drain: the calls still running (ending now, marked unfinished), the
    /// last memory figure held to the end, the closing event with what is missing; then the file goes to
    /// disk. Returns the line to print, if any: the error, or what the trace lacks.
    pub(crate) fn finish(
        mut self,
        threads: &[std::sync::Arc<ThreadState>],
        losses: Losses,
    ) -> Option<String> {
        let summary = self.close(threads, losses);
        if let Some(syncer) = self.syncer.take() {
            syncer.stop();
        }
        if let Some(file) = self.file.take()
            && let Err(e) = file.finish()
        {
            self.error = Some(e);
        }
        if let Some(error) = self.error {
            return Some(error);
        }
        let sentence = summary.losses.sentence();
        (!sentence.is_empty()).then(|| {
            format!(
                "perfgraph: trace {:?}: {} section calls written; {sentence} (the file says so too)",
                self.path.display().to_string(),
                summary.calls
            )
        })
    }

    /// The end of a trace window, after the drain that brought every call that ended by its end: as
    /// [`finish`](Self::finish), but nothing waits for the client. Returns the client and what it has not
    /// taken yet, for the control socket to send as it takes it (`None`: the client is gone).
    #[cfg(feature = "listen")]
    pub(crate) fn finish_window(
        mut self,
        threads: &[std::sync::Arc<ThreadState>],
        losses: Losses,
    ) -> Option<(super::sockets::Peer, Vec<u8>)> {
        self.close(threads, losses);
        self.file.take().and_then(files::Stream::into_peer)
    }

    /// The calls still running (ending now, marked unfinished), the last memory figure held to the end,
    /// and the closing event with what is missing, written out.
    fn close(&mut self, threads: &[std::sync::Arc<ThreadState>], mut losses: Losses) -> Summary {
        let end_ticks = self.end_ticks.unwrap_or_else(|| clock::now().0);
        let end_ns = self.map.to_ns(end_ticks);
        let mut unfinished = self.cut_at_end;
        for t in threads {
            // A section opened after the trace's end is not in it.
            for f in t.open_frames().into_iter().filter(|f| f.start <= end_ticks) {
                self.name_thread(t.index, &t.name);
                let start_ns = self.map.to_ns(f.start).min(end_ns);
                let before = self.calls;
                self.call(&Call {
                    thread: t.index,
                    section: f.section,
                    depth: f.depth,
                    start_ns,
                    end_ns,
                    unfinished: true,
                    cpu: None,
                    args: &[],
                });
                unfinished += self.calls - before;
            }
        }
        if let (Some((ns, bytes)), true) = (self.memory.1, self.fits())
            && ns < end_ns
        {
            self.emit(|format, out| format.memory(out, end_ns, bytes));
        }
        losses.past_limit = self.past_limit;
        losses.unwritten = self.unwritten;
        losses.limit = self.limit;
        let summary = Summary {
            calls: self.calls,
            unfinished,
            losses,
            clock: clock::source().name(),
            end_ns,
        };
        // From here, an exit handler that gives up names the trace (and keeps it, as far as it got).
        if let Some(file) = &self.file {
            file.finishing();
        }
        // The closing event goes in even past the limit (it is what says the file is complete), and is
        // tried even on a full disk: it is small, and space may have come back.
        self.stopped = false;
        self.disk_full = false;
        self.emit(|format, out| format.footer(out, &summary));
        self.flush();
        summary
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_name_chooses_the_format() {
        use crate::base::config::TraceFormat;
        use std::path::Path;
        let of = |p: &str| TraceFormat::of_path(Path::new(p));
        assert_eq!(of("/x/run.pftrace"), TraceFormat::Perfetto);
        assert_eq!(of("run.perfetto-trace"), TraceFormat::Perfetto);
        assert_eq!(of("run.json"), TraceFormat::Chrome);
        assert_eq!(of("pftrace"), TraceFormat::Chrome);
    }
}
