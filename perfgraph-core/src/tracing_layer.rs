//! The `tracing` bridge (cargo feature `tracing`): [`TracingLayer`], a `tracing_subscriber::Layer` that
//! records every span the subscriber enables as a perfgraph section.
//!
//! * A span's callsite is registered as a section once, at its first span (name: the span's name; file,
//!   line and target, as module path, from its metadata; level from the span's level; live message and
//!   dots from its `live` and `dots` fields, as first seen at that callsite). After that a span costs a
//!   lookup of its callsite's section by the metadata's address in a small per-thread cache, never by name
//!   and without a lock.
//! * Cost: a span's state is made at its first enter (one lookup of the span in the registry per enter),
//!   not at its creation, and its end is handled when the registry drops that state at the span's close,
//!   so a span entered once costs one registry lookup besides the section's own enter and exit.
//! * Each enter of the span enters the section on the entering thread, each exit leaves it, exactly as a
//!   poll of a [`Timed`](crate::Timed) future does: `#[instrument]` on an `async fn` (whose future enters
//!   the span on every poll) is timed per poll. A span entered once is an ordinary call; one entered
//!   several times also counts its polls (its enters) and its wall time, from its first enter to its close.
//! * An event inside a recorded span becomes an instant event in the trace, with its message.
//! * A span with a `live` field entered more than once joins live print's pending futures at its second
//!   enter, until its close: live print shows it by wall time on the async track, as a timed future.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id};
use tracing_core::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::base::clock;
use crate::base::registry::{Name, Section, SectionMeta};
use crate::entry;
use crate::local::guard::Guard;
use crate::local::record::{INSTANT, Record};
use crate::local::thread;
use crate::local::{marks, pending};

/// Records every span the subscriber enables as a perfgraph section (see the module docs in
/// `docs/user-guide.md`, "tracing").
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let subscriber = tracing_subscriber::registry().with(perfgraph_core::TracingLayer::new());
/// tracing::subscriber::with_default(subscriber, || {
///     let span = tracing::info_span!("load_mesh", live = "Loading mesh", dots = true);
///     let _entered = span.enter();
///     tracing::info!("read 42 elements");
/// });
/// let node = perfgraph_core::merged().find(&["load_mesh"]).cloned().unwrap();
/// assert_eq!(node.calls, 1);
/// let info = perfgraph_core::section_info(node.section).unwrap();
/// assert_eq!((info.live, info.dots), ("Loading mesh", true));
/// ```
#[derive(Debug, Default)]
pub struct TracingLayer {
    _private: (),
}

impl TracingLayer {
    /// A layer; add it to a registry: `tracing_subscriber::registry().with(TracingLayer::new())`.
    pub fn new() -> TracingLayer {
        TracingLayer { _private: () }
    }
}

/// A recorded span's state, in its extensions (made at its first enter; dropped by the registry when the
/// span closes, which ends a span entered more than once: see `Drop`).
struct SpanState {
    /// Its callsite's section.
    site: &'static Section,
    /// The section's level.
    level: u8,
    /// Enters so far.
    enters: u64,
    /// Ticks at its first enter.
    first_ticks: u64,
    /// Not recorded (its level was above the verbosity at its first enter).
    off: bool,
    /// From its second enter, if its callsite has a `live` field and live print is on: its id and slot in
    /// the list of pending live futures (live print shows it by wall time, as a timed future).
    pending: Option<(u64, usize)>,
}

/// Each callsite's section, by the address of its `'static` metadata.
static SITES: Mutex<Option<HashMap<usize, &'static Section>>> = Mutex::new(None);

/// Slots of the per-thread cache of [`SITES`] (a power of two).
const CACHE: usize = 64;

thread_local! {
    /// A direct-mapped cache of [`SITES`]: `(metadata address, section)`, 0 for an empty slot.
    static CACHED: RefCell<[(usize, Option<&'static Section>); CACHE]> =
        const { RefCell::new([(0, None); CACHE]) };
}

/// The section of the callsite `meta`, if it was registered (by [`site`]): from this thread's cache, else
/// from [`SITES`] (then cached).
#[inline]
fn cached_site(meta: &'static Metadata<'static>) -> Option<&'static Section> {
    let key = meta as *const Metadata<'static> as usize;
    // Metadata are statics at least 8-byte aligned: drop the low bits before indexing.
    let slot = (key >> 4 ^ key >> 10) & (CACHE - 1);
    CACHED
        .try_with(|c| {
            if let Ok(cache) = c.try_borrow()
                && cache[slot].0 == key
            {
                return cache[slot].1;
            }
            let site = *SITES
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()?
                .get(&key)?;
            if let Ok(mut cache) = c.try_borrow_mut() {
                cache[slot] = (key, Some(site));
            }
            Some(site)
        })
        .ok()
        .flatten()
}

thread_local! {
    /// The sections this thread entered for spans, innermost last: `(span id, guard)`.
    /// With each, the pending live future to restore as the one polled on this thread at its exit (for a
    /// span in the pending list: see [`SpanState::pending`]).
    static OPEN: RefCell<Vec<(u64, Guard, Option<u64>)>> = const { RefCell::new(Vec::new()) };
}

/// perfgraph's level of a `tracing` level: ERROR and WARN 0, INFO 1, DEBUG 2, TRACE 3.
pub fn level_of(level: &Level) -> u8 {
    match *level {
        Level::ERROR | Level::WARN => 0,
        Level::INFO => 1,
        Level::DEBUG => 2,
        _ => 3,
    }
}

/// The `live` (a string) and `dots` (a bool) fields of a span.
#[derive(Default)]
struct LiveFields {
    live: Option<String>,
    dots: bool,
}

impl Visit for LiveFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "live" {
            self.live = Some(value.to_owned());
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "dots" {
            self.dots = value;
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// An event's message and other fields, as one line: `message key=value ...`.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, "{}={value:?}", field.name());
        }
    }
}

/// The section of `meta`'s callsite, registered at its first span.
fn site(meta: &'static Metadata<'static>, attrs: &Attributes<'_>) -> &'static Section {
    let key = meta as *const Metadata<'static> as usize;
    let mut sites = SITES.lock().unwrap_or_else(|e| e.into_inner());
    let sites = sites.get_or_insert_with(HashMap::new);
    if let Some(&site) = sites.get(&key) {
        return site;
    }
    let mut fields = LiveFields::default();
    attrs.record(&mut fields);
    let live: Option<&'static str> = fields.live.map(|l| &*Box::leak(l.into_boxed_str()));
    let site: &'static Section = Box::leak(Box::new(Section::new(SectionMeta {
        name: Name::Given(meta.name()),
        level: level_of(meta.level()),
        live,
        dots: fields.dots,
        cpu: false,
        file: meta.file().unwrap_or("?"),
        line: meta.line().unwrap_or(0),
        module_path: meta.target(),
    })));
    sites.insert(key, site);
    site
}

/// An enter of the span whose state is `s`: its section entered on this thread, and the pending live
/// future to restore at its exit (`None`: not recorded).
fn enter(s: &mut SpanState) -> Option<(Guard, Option<u64>)> {
    if s.off {
        return None;
    }
    let first = s.enters == 0;
    let Some(state) = entry::poll_state(s.site, s.level, first) else {
        s.off = true;
        return None;
    };
    if first {
        s.first_ticks = clock::now().0;
    }
    s.enters += 1;
    // SAFETY: `state` is this thread's own state (`poll_state` returns the calling thread's).
    let (guard, node) =
        unsafe { Guard::open_poll(state, s.site.id(), first, entry::poll_flags(s.site)) };
    // A span entered once is a call; from its second enter on, its enters are polls (the first too).
    if s.enters == 2 {
        node.poll();
    }
    if s.enters >= 2 {
        node.poll();
    }
    // Entered again: an async span (`#[instrument] async fn`). With a `live` field it joins the pending
    // live futures, as a timed future does at its first poll (a cold path, once per span).
    if s.enters == 2 && pending::enabled() && s.site.has_live_message() {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Ids with the top bit set never meet a timed future's (thread index << 40 | count).
        let id = 1 << 63 | NEXT.fetch_add(1, Ordering::Relaxed);
        s.pending = Some((id, pending::add(s.site.id(), s.first_ticks, id)));
    }
    let previous = s.pending.map(|(id, _)| pending::polling(id));
    Some((guard, previous))
}

impl Drop for SpanState {
    /// The span closed (the registry drops its extensions then, on the closing thread). A span entered more
    /// than once ends here: its wall time goes to its call path on this thread, entered for the purpose (as
    /// a cancelled future's drop is).
    fn drop(&mut self) {
        if let Some((id, slot)) = self.pending.take() {
            pending::remove(slot, id, clock::now().0, false);
        }
        if self.off || self.enters < 2 {
            return;
        }
        let Some(state) = entry::poll_state(self.site, self.level, false) else {
            return;
        };
        // SAFETY: `state` is this thread's own state.
        let (guard, node) =
            unsafe { Guard::open_poll(state, self.site.id(), false, entry::poll_flags(self.site)) };
        drop(guard);
        node.end(clock::now().0.saturating_sub(self.first_ticks), false);
    }
}

impl<S> tracing_subscriber::Layer<S> for TracingLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        // Only the callsite's first span registers it (with its fields); the span's state comes at its
        // first enter.
        let meta = attrs.metadata();
        if cached_site(meta).is_none() {
            site(meta, attrs);
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut ext = span.extensions_mut();
        // One lookup of the state: made (and inserted once) at the first enter.
        let guard = match ext.get_mut::<SpanState>() {
            Some(s) => enter(s),
            None => {
                let meta = span.metadata();
                let Some(site) = cached_site(meta) else {
                    return;
                };
                let mut s = SpanState {
                    site,
                    level: level_of(meta.level()),
                    enters: 0,
                    first_ticks: 0,
                    off: false,
                    pending: None,
                };
                let guard = enter(&mut s);
                ext.insert(s);
                guard
            }
        };
        if let Some((guard, previous)) = guard {
            let _ = OPEN.try_with(|open| open.borrow_mut().push((id.into_u64(), guard, previous)));
        }
    }

    fn on_exit(&self, id: &Id, _ctx: Context<'_, S>) {
        let id = id.into_u64();
        let _ = OPEN.try_with(|open| {
            let mut open = open.borrow_mut();
            if let Some(i) = open.iter().rposition(|(s, _, _)| *s == id) {
                let (_, guard, previous) = open.remove(i);
                drop(open);
                if let Some(previous) = previous {
                    pending::polled(previous);
                }
                drop(guard);
            }
        });
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if !marks::wanted() {
            return;
        }
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let ext = span.extensions();
        let Some(s) = ext.get::<SpanState>() else {
            return;
        };
        if s.off || s.enters == 0 {
            return;
        }
        let ptr = thread::current_ptr();
        if ptr.is_null() {
            return;
        }
        let mut message = Message::default();
        event.record(&mut message);
        let now = clock::now().0;
        let id = marks::keep(message.0);
        // SAFETY: a non-null `current_ptr` is this thread's own state, alive while the thread runs.
        unsafe { (*ptr).push_mark(Record::mark(s.site.id(), now, now, INSTANT, id)) };
    }
}
