//! The trace (`PERFGRAPH_TRACE`), streamed to its file while the program runs.
//!
//! The background thread hands every drained record here; each becomes a call event in the format the
//! path chose ([`Format`]: Perfetto protobuf for `.pftrace` / `.perfetto-trace`, Chrome JSON otherwise),
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
mod fsync;
mod tick_map;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::files;
use super::live::screen;
use crate::base::clock::{self, Ticks};
use crate::base::config::{self, TraceCompress, TraceFormat};
use crate::base::registry::{self, SectionId};
use crate::base::text;
use crate::data::args::ArgValue;
use crate::export::chrome::Chrome;
use crate::export::pages;
use crate::export::perfetto::Perfetto;
use crate::export::trace::{
    Call, Encoder, Identity, LockFlow, LockSlice, Losses, Mark, MarkKind, SectionText, Summary,
};
use crate::local::marks;
use crate::local::record::{self, Record};
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

/// At most how many bytes `args` (named `names`) add to an event in either format: each name, quoted and
/// with its separators, and its value (a number at most 24 characters; a text escaped, each byte at most
/// two: `ArgValue::text` leaves no control character to escape longer).
fn args_bytes(names: &[&str], args: &[ArgValue]) -> u64 {
    names
        .iter()
        .zip(args)
        .map(|(name, value)| {
            let value = match value {
                ArgValue::Text(t) => 2 * t.len() + 2,
                _ => 24,
            };
            (name.len() + 8 + value) as u64
        })
        .sum()
}

/// Thread names the trace keeps for the locks' holders (see `Trace::recent_names`).
const RECENT_NAMES: usize = 1024;

/// The name of thread `index`, as the live list has it (`thread-<index>` once it is gone).
fn other_thread_name(index: u32) -> String {
    crate::local::threads::all()
        .iter()
        .find(|t| t.index == index)
        .map_or_else(|| format!("thread-{index}"), |t| t.name.clone())
}

/// What the trace says about section `id`.
fn section_text(id: SectionId) -> SectionText {
    match registry::info(id) {
        Some(info) => SectionText {
            name: info.name.to_owned(),
            level: info.level,
            message: (info.live != info.name).then(|| info.live.to_owned()),
            args: info.args,
        },
        None => SectionText {
            name: format!("section-{id}"),
            level: 0,
            message: None,
            args: &[],
        },
    }
}

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

    /// Names thread `index` in the trace, once, before its first event; past the limit nothing of the
    /// thread is written, so neither is its name.
    fn name_thread(&mut self, index: u32, name: &str) {
        let i = index as usize;
        if self.named.len() <= i {
            self.named.resize(i + 1, false);
        }
        if self.named[i] || !self.fits() {
            return;
        }
        self.named[i] = true;
        if self.recent_names.len() == RECENT_NAMES {
            self.recent_names.pop_front();
        }
        self.recent_names.push_back((index, name.to_owned()));
        self.emit(|format, out| format.thread(out, index, name));
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

    fn call(&mut self, call: &Call) {
        let extra = match call.args {
            [] => 0,
            args => args_bytes(registry::info(call.section).map_or(&[], |i| i.args), args),
        };
        if !self.admit_with(extra) {
            return;
        }
        self.calls += 1;
        self.buffered += 1;
        self.emit(|format, out| format.call(out, call, &section_text));
    }

    /// The trace ends at `ticks`: set at exit, right before the last drain, so that every call that ended
    /// by then is in the trace or counted lost (ring overflow), and calls that end later are after its end.
    pub(crate) fn end_at(&mut self, ticks: u64) {
        self.end_ticks = Some(ticks);
    }

    /// Whether a record ending at `end` ticks is outside the trace: after its end, or before a window's
    /// start.
    fn after_end(&self, end: u64) -> bool {
        self.end_ticks.is_some_and(|e| end > e) || end < self.start_ticks
    }

    /// The text args of `record`: taken, or copied when another trace takes them.
    fn args_of(&self, record: &Record) -> Vec<ArgValue> {
        match record.args {
            Some(a) if self.takes_texts => a.take(),
            Some(a) => a.peek(),
            None => Vec::new(),
        }
    }

    /// The message of instant `id`: taken, or copied when another trace takes it.
    fn message(&self, id: u64) -> Option<String> {
        if self.takes_texts {
            marks::take(id)
        } else {
            marks::peek(id)
        }
    }

    /// Records `thread` completed since the last drain, in the order they ended.
    pub(crate) fn on_records(&mut self, thread: &ThreadState, records: &[Record]) {
        self.name_thread(thread.index, &thread.name);
        if records.len() >= config::TRACE_RING_CAPACITY / 4 {
            // Behind: no time to spare for deflation.
            self.packer.behind();
        }
        for r in records {
            // Taken whether or not the call is written, so no text arg is left behind.
            let args = self.args_of(r);
            // A call running at the trace's end is in it, cut there and unfinished, whether it was still
            // open when the trace closed or ended in between.
            let cut = self.end_ticks.filter(|&e| r.end > e && r.start <= e);
            if cut.is_none() && self.after_end(r.end) {
                continue;
            }
            let start_ns = self.map.to_ns(r.start);
            let call = Call {
                thread: thread.index,
                section: r.section,
                depth: r.depth,
                start_ns,
                end_ns: self.map.to_ns(cut.unwrap_or(r.end)).max(start_ns),
                unfinished: cut.is_some(),
                cpu: r.cpu,
                args: &args,
            };
            let before = self.calls;
            self.call(&call);
            if cut.is_some() {
                self.cut_at_end += self.calls - before;
            }
            // Writes stay near 1 MiB (so does the buffer) however many records one drain brings.
            if self.buffer.len() >= FLUSH_BYTES {
                self.flush();
            }
        }
    }

    /// A resident-memory sample taken at `ticks`; written when it differs from the last one written.
    pub(crate) fn on_memory(&mut self, ticks: u64, bytes: u64) {
        let ns = self.map.to_ns(ticks);
        self.memory.1 = Some((ns, bytes));
        if self.memory.0 == Some(bytes) || !self.fits() {
            return;
        }
        self.memory.0 = Some(bytes);
        self.emit(|format, out| format.memory(out, ns, bytes));
    }

    /// The process's net heap (the counting allocator's, `heap::process_heap`) at `ticks`, on the `Heap`
    /// counter track; written when it differs from the last one written.
    pub(crate) fn on_heap(&mut self, ticks: u64, bytes: i64) {
        let bytes = bytes.max(0) as u64;
        if self.heap == Some(bytes) || !self.fits() {
            return;
        }
        self.heap = Some(bytes);
        let ns = self.map.to_ns(ticks);
        self.emit(|format, out| format.heap(out, ns, bytes));
    }

    /// Marks `thread` pushed since the last drain (futures' lives, `tracing` events), in the order they
    /// ended. Those past the limit are counted with the calls past it.
    pub(crate) fn on_marks(&mut self, thread: &ThreadState, records: &[Record]) {
        self.name_thread(thread.index, &thread.name);
        for r in records {
            // Taken whether or not the mark is written, so no text arg is left behind.
            let values = self.args_of(r);
            if self.after_end(r.end) {
                if r.depth == record::INSTANT {
                    // The message is taken all the same, so none is left behind.
                    let _ = self.message(r.mark_id());
                }
                continue;
            }
            if matches!(r.depth, record::HOLD | record::WAIT | record::LOCK_FLOW) {
                self.on_lock(thread, r);
                continue;
            }
            if r.depth == record::COUNTER {
                if !self.admit() {
                    continue;
                }
                let ts = self.map.to_ns(r.start);
                let name = crate::local::counters::site(r.section).map_or("counter", |s| s.name);
                let value = f64::from_bits(r.mark_id());
                self.emit(|format, out| format.counter(out, ts, name, value));
                continue;
            }
            let (name, names) = match r.depth {
                record::EVENT => match marks::event_site(r.section) {
                    Some(site) => (site.name.to_owned(), site.args),
                    None => ("event".to_owned(), &[][..]),
                },
                _ => {
                    let text = section_text(r.section);
                    (text.name, text.args)
                }
            };
            let extra = args_bytes(names, &values);
            let args: Vec<(&'static str, ArgValue)> = names.iter().copied().zip(values).collect();
            let kind = match r.depth {
                record::LIFE => MarkKind::Life {
                    id: r.mark_id(),
                    cancelled: false,
                },
                record::LIFE_CANCELLED => MarkKind::Life {
                    id: r.mark_id(),
                    cancelled: true,
                },
                record::EVENT => MarkKind::Event,
                // The message is taken whether or not it is written, so none is left behind.
                _ => MarkKind::Instant(self.message(r.mark_id()).unwrap_or_default()),
            };
            if !self.admit_with(extra) {
                continue;
            }
            let start_ns = self.map.to_ns(r.start);
            let mark = Mark {
                kind,
                section: r.section,
                thread: thread.index,
                start_ns,
                end_ns: self.map.to_ns(r.end).max(start_ns),
                args,
            };
            self.emit(|format, out| format.mark(out, &mark, &name));
        }
    }

    /// A lock's hold, wait or hand-over, recorded by `thread`.
    fn on_lock(&mut self, thread: &ThreadState, r: &Record) {
        if !self.admit() {
            return;
        }
        let lock = self.lock_name(r.section);
        let start_ns = self.map.to_ns(r.start);
        let end_ns = self.map.to_ns(r.end).max(start_ns);
        // Another thread named in the record (index + 1; 0: unknown), named in the trace first.
        let other = |this: &mut Self, one: u64| -> Option<(u32, String)> {
            let index = (one as u32).checked_sub(1)?;
            let name = match this.recent_names.iter().rev().find(|(i, _)| *i == index) {
                Some((_, name)) => name.clone(),
                None => other_thread_name(index),
            };
            this.name_thread(index, &name);
            Some((index, name))
        };
        if r.depth == record::LOCK_FLOW {
            let Some((from, _)) = other(self, r.mark_id()) else {
                return;
            };
            self.flows += 1;
            let flow = LockFlow {
                lock,
                id: self.flows,
                from: (from, start_ns),
                to: (thread.index, end_ns),
            };
            self.emit(|format, out| format.lock_flow(out, &flow));
            return;
        }
        let holder = match r.depth {
            record::WAIT => other(self, r.mark_id() & u32::MAX as u64).map(|(_, name)| name),
            _ => None,
        };
        let slice = LockSlice {
            thread: thread.index,
            lock: (lock, r.section),
            wait: r.depth == record::WAIT,
            start_ns,
            end_ns,
            holder,
        };
        self.emit(|format, out| format.lock_slice(out, &slice));
    }

    /// The name of lock name id `id`, looked up in the locks' table (under its lock) once per name.
    fn lock_name(&mut self, id: u32) -> String {
        let i = id as usize;
        if self.lock_names.len() <= i {
            self.lock_names.resize(i + 1, None);
        }
        self.lock_names[i]
            .get_or_insert_with(|| crate::local::locks::name(id).unwrap_or("lock").to_owned())
            .clone()
    }

    /// CPU time read at `ticks` for each of `threads` (`(thread, CPU ns since its first section)`): each
    /// thread's usage since its previous sample, in percent of one core, on its CPU counter track.
    pub(crate) fn on_cpu(&mut self, ticks: u64, threads: &[std::sync::Arc<ThreadState>]) {
        let ns = self.map.to_ns(ticks);
        for t in threads.iter().filter(|t| !t.exited()) {
            let cpu_ns = t.read_cpu();
            let i = t.index as usize;
            if self.cpu.len() <= i {
                self.cpu.resize(i + 1, None);
            }
            let Some((last_ns, last_cpu)) = self.cpu[i].replace((ns, cpu_ns)) else {
                continue;
            };
            let wall = ns.saturating_sub(last_ns);
            if wall == 0 || !self.fits() {
                continue;
            }
            let percent = cpu_ns.saturating_sub(last_cpu).saturating_mul(100) / wall;
            self.name_thread(t.index, &t.name);
            self.emit(|format, out| format.cpu(out, ns, t.index, &t.name, percent));
        }
    }

    /// An interval of the interval statistics closed: for each thread that ran top-level sections in it,
    /// their calls per second and the share of the interval spent in them, on two counter tracks of the
    /// thread (`names` gives a thread's name, as the lines do).
    pub(crate) fn on_interval(
        &mut self,
        closed: &crate::collector::interval::Interval,
        names: impl Fn(u32) -> String,
    ) {
        // At the interval's start: a counter's value holds until the next one, so it spans the interval
        // it measured.
        let ns = self.map.to_ns(closed.end.saturating_sub(closed.length));
        let length_ns = self.map.to_ns(closed.end).saturating_sub(ns);
        if length_ns == 0 {
            return;
        }
        let mut rows: Vec<(u32, f64, f64)> = closed
            .top_level()
            .into_iter()
            .map(|(thread, calls, inside)| {
                let per_second = calls as f64 * 1e9 / length_ns as f64;
                let busy = 100.0 * clock::scale().delta_ns(Ticks(inside)) as f64 / length_ns as f64;
                (thread, per_second, busy.min(100.0))
            })
            .collect();
        // A thread that ran sections in the interval before but none in this one drops to 0, once, rather
        // than keep its last value on the plot.
        let now: Vec<u32> = rows.iter().map(|r| r.0).collect();
        for &thread in self.interval_threads.iter().filter(|t| !now.contains(t)) {
            rows.push((thread, 0.0, 0.0));
        }
        self.interval_threads = now;
        for (thread, per_second, busy) in rows {
            if !self.fits() {
                return;
            }
            let name = names(thread);
            self.name_thread(thread, &name);
            self.emit(|format, out| format.interval(out, ns, thread, &name, per_second, busy));
        }
    }

    /// Live print printed `text` at `ticks`: one marker per non-empty line.
    pub(crate) fn on_printed(&mut self, ticks: u64, text: &str) {
        let ns = self.map.to_ns(ticks);
        for line in text::plain_lines(text) {
            if !self.fits() {
                return;
            }
            self.emit(|format, out| format.marker(out, ns, &line));
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
    ) -> Option<(super::net::listen::Peer, Vec<u8>)> {
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
