//! What the trace is fed becomes its events: each drained record (calls, locks, marks), memory and CPU
//! samples, interval lines and live print's lines, each admitted under the limit or counted.

use crate::base::clock::{self, Ticks};
use crate::base::config;
use crate::base::registry::{self, SectionId};
use crate::base::text;
use crate::data::args::ArgValue;
use crate::export::trace::{
    Call, Interval, LockFlow, LockSlice, Mark, MarkKind, PathPiece, SectionText,
};
use crate::local::marks;
use crate::local::record::{self, Record};
use crate::local::thread::ThreadState;

use super::{FLUSH_BYTES, RECENT_NAMES, Trace};

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
    /// Names thread `index` in the trace, once, before its first event; past the limit nothing of the
    /// thread is written, so neither is its name.
    pub(super) fn name_thread(&mut self, index: u32, name: &str) {
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

    pub(super) fn call(&mut self, call: &Call) {
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
            let interval = Interval {
                ts_ns: ns,
                thread,
                per_second,
                busy_percent: busy,
            };
            self.emit(|format, out| format.interval(out, &interval, &name));
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

    /// The run's critical path (`PERFGRAPH_REPORT=critical`), at exit before the trace's end: its pieces
    /// on a track of their own, counted with the events past the limit when they do not fit.
    pub(crate) fn on_path(&mut self, pieces: &[PathPiece]) {
        for piece in pieces {
            if self.admit() {
                self.emit(|format, out| format.path_piece(out, piece));
            }
        }
    }

    /// The trace's nanoseconds at `ticks`: what the critical path at exit is worked out in, so its table
    /// and the trace agree.
    pub(crate) fn to_ns(&self, ticks: u64) -> u64 {
        self.map.to_ns(ticks)
    }
}
