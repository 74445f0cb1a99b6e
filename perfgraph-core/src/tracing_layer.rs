//! The `tracing` bridge (cargo feature `tracing`): [`TracingLayer`], a `tracing_subscriber::Layer` that
//! records every span the subscriber enables as a perfgraph section.
//!
//! * A span's callsite is registered as a section once, at its first span (name: the span's name; file,
//!   line and target, as module path, from its metadata; level from the span's level; live message and
//!   dots from its `live` and `dots` fields, as first seen at that callsite). After that a span costs a
//!   lookup of its callsite's section by the metadata's address in a small per-thread cache, never by name
//!   and without a lock.
//! * Cost: a span entered once is held by the thread that enters it, not in the registry. The span a
//!   thread made last is entered without a lookup (its section comes from its creation), as an ordinary
//!   section (`entry::enter`); while entered, its state is its entry in the thread's stack of entered
//!   spans (its section, recorded if its guard is); after its exit it is parked on the thread (its
//!   section, its start read from its frame) until its close. So a span made, entered once and closed
//!   inside another span on one thread costs no registry lookup, allocation or lock besides the
//!   section's own enter and exit. The state moves to the span's extensions in the registry (one lookup,
//!   one boxed insert, as a [`SpanState`]) only when another thread may need it: when the span is exited
//!   with no other span still entered on its thread (a task's poll ends there, and the task may move),
//!   and when it is entered again (an async span's polls, whose close, on any thread, ends it: those
//!   enters look it up). A span first entered on a thread that did not make it is looked up once.
//!   Limit: a span exited inside another span and then entered on a second thread before the first
//!   thread leaves that other span is counted there as a new call, not as a poll.
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

use crossbeam_utils::CachePadded;
use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id};
use tracing_core::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::{ExtensionsMut, LookupSpan};

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

/// A span's state in its extensions ([`Shared`]), once it may be needed on another thread.
struct SpanState {
    /// Its callsite's section.
    site: &'static Section,
    /// Ticks at its first enter.
    first_ticks: u64,
    /// From its second enter, if its callsite has a `live` field and live print is on: its id and slot in
    /// the list of pending live futures (live print shows it by wall time, as a timed future).
    pending: Option<(u64, usize)>,
    /// Enters so far (recorded ones: 0 while `off`).
    enters: u32,
    /// Not recorded (its level was above the verbosity at its first enter).
    off: bool,
}

/// A span's state in its extensions, where every thread finds it. The registry drops it when the span
/// closes, on the closing thread, which ends a span entered more than once (see [`end`]).
struct Shared(SpanState);

impl Drop for Shared {
    fn drop(&mut self) {
        end(&mut self.0);
    }
}

/// The state of a span entered once, held by the thread that entered it.
#[derive(Clone, Copy)]
struct Once {
    /// Its callsite's section.
    site: &'static Section,
    /// Ticks at its enter.
    start: u64,
    /// Not recorded (its level was above the verbosity).
    off: bool,
}

impl Once {
    /// The same as a [`SpanState`], for its extensions.
    fn state(self) -> SpanState {
        SpanState {
            site: self.site,
            first_ticks: self.start,
            pending: None,
            enters: u32::from(!self.off),
            off: self.off,
        }
    }
}

/// A parked span: its id and state. Aligned to a cache line, as [`Open`].
#[repr(align(64))]
struct Parked(u64, Once);

/// Each callsite's section, by the address of its `'static` metadata.
static SITES: Mutex<Option<HashMap<usize, &'static Section>>> = Mutex::new(None);

/// Slots of the per-thread cache of [`SITES`] (a power of two).
const CACHE: usize = 64;

/// At most this many spans are parked on a thread; one more moves the oldest to its extensions.
const PARKED: usize = 8;

/// [`Open::previous`] of a span not in the pending list.
const NO_PREVIOUS: u64 = u64::MAX;

/// A span entered on this thread. Aligned to a cache line, so the thread's stack of entered spans (written
/// at every enter and exit) fills whole lines and shares none with another thread's allocations.
#[repr(align(64))]
struct Open {
    /// Its id.
    id: u64,
    /// Its section's guard ([`Guard::OFF`] if not recorded).
    guard: Guard,
    /// The pending live future to restore as the one polled on this thread at its exit, for a span in
    /// the pending list (see [`SpanState::pending`]); [`NO_PREVIOUS`] for the others.
    previous: u64,
    /// `Some`: its first enter, its state this entry (entered once: its section, recorded if the guard
    /// is); `None`: its state is in its extensions ([`Shared`]).
    site: Option<&'static Section>,
}

/// What a thread keeps of the spans it makes and enters, so that a span made, entered once and closed on
/// one thread while another span is entered there never needs the registry.
struct Local {
    /// The span this thread made last, until it is entered or closed: its id and section. Its first
    /// enter (usually right after) takes its section from here, without a lookup. The registry gives a
    /// closed span's id again only to a span made on the thread that made it (with a new generation), so
    /// the id cannot name another span while it is here.
    fresh: Option<(u64, &'static Section)>,
    /// The spans entered on this thread, innermost last.
    open: Vec<Open>,
    /// Spans entered once and exited on this thread while another span was still entered on it, not
    /// closed yet: `(id, state)`, until their close or next enter. They move to their extensions when
    /// `open` empties, so a span that another thread enters next (a task that moved between polls)
    /// finds its state there; at most [`PARKED`].
    parked: Vec<Parked>,
    /// A state an exit hands to [`exited_publish`], to move to its span's extensions.
    outbox: Option<(u64, Once)>,
    /// A direct-mapped cache of [`SITES`]: `(metadata address, section)`, 0 for an empty slot.
    sites: [(usize, Option<&'static Section>); CACHE],
}

thread_local! {
    /// This thread's spans.
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local {
            fresh: None,
            open: Vec::new(),
            parked: Vec::new(),
            outbox: None,
            sites: [(0, None); CACHE],
        })
    };
}

impl Local {
    /// The section of the callsite `meta`, if it was registered (by [`site`]): from this thread's cache,
    /// else from [`SITES`] (then cached).
    #[inline]
    fn site_of(&mut self, meta: &'static Metadata<'static>) -> Option<&'static Section> {
        let key = meta as *const Metadata<'static> as usize;
        // Metadata are statics at least 8-byte aligned: drop the low bits before indexing.
        let slot = (key >> 4 ^ key >> 10) & (CACHE - 1);
        if self.sites[slot].0 == key {
            return self.sites[slot].1;
        }
        let site = *SITES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()?
            .get(&key)?;
        self.sites[slot] = (key, Some(site));
        Some(site)
    }

    /// Span `id` of callsite `meta` was made on this thread: it is the fresh one (with `site`, else its
    /// callsite's section if registered; `false` if not).
    #[inline]
    fn made(
        &mut self,
        id: u64,
        meta: &'static Metadata<'static>,
        site: Option<&'static Section>,
    ) -> bool {
        let Some(site) = site.or_else(|| self.site_of(meta)) else {
            return false;
        };
        self.fresh = Some((id, site));
        if !self.parked.is_empty() {
            // The state of a span closed on another thread, whose id this one now has.
            self.parked.retain(|Parked(p, _)| *p != id);
        }
        true
    }

    /// The exit of span `id` on this thread: its section left, and a state this thread holds parked, or
    /// put in [`outbox`](Local::outbox) to go to its extensions. Whether there is more to do outside: the
    /// outbox, or the parked states to move too (no span is entered here any more).
    #[inline]
    fn exit(&mut self, id: u64) -> bool {
        let Some(i) = self.open.iter().rposition(|o| o.id == id) else {
            return false;
        };
        let o = if i + 1 == self.open.len() {
            match self.open.pop() {
                Some(o) => o,
                None => return false,
            }
        } else {
            self.open.remove(i)
        };
        if o.previous != NO_PREVIOUS {
            pending::polled(o.previous);
        }
        let Some(site) = o.site else {
            drop(o.guard);
            return self.open.is_empty() && !self.parked.is_empty();
        };
        let once = Once {
            site,
            start: first_ticks(&o.guard),
            off: !o.guard.is_recorded(),
        };
        drop(o.guard);
        // Alone on the thread (a task's poll may end here): to its extensions.
        if self.open.is_empty() {
            self.outbox = Some((id, once));
            return true;
        }
        if self.parked.len() >= PARKED {
            let Parked(evicted, state) = self.parked.swap_remove(0);
            self.outbox = Some((evicted, state));
            self.parked.push(Parked(id, once));
            return true;
        }
        self.parked.push(Parked(id, once));
        false
    }

    /// The state this thread holds of span `id`, taken to go to its extensions (the span is entered
    /// again): parked, or in an entry of `open` (entered again while entered), which keeps the section.
    fn take(&mut self, id: u64) -> Option<Once> {
        if let Some(i) = self.parked.iter().rposition(|Parked(p, _)| *p == id) {
            return Some(self.parked.swap_remove(i).1);
        }
        let o = self.open.iter_mut().rev().find(|o| o.id == id)?;
        let site = o.site.take()?;
        Some(Once {
            site,
            start: first_ticks(&o.guard),
            off: !o.guard.is_recorded(),
        })
    }

    /// The section of span `id`'s events if this thread holds its state: `Some(None)` if it is not
    /// recorded.
    fn event_site(&self, id: u64) -> Option<Option<&'static Section>> {
        if let Some(o) = self
            .open
            .iter()
            .rev()
            .find(|o| o.id == id && o.site.is_some())
        {
            return Some(o.site.filter(|_| o.guard.is_recorded()));
        }
        let Parked(_, s) = self.parked.iter().find(|Parked(p, _)| *p == id)?;
        Some((!s.off).then_some(s.site))
    }
}

/// The section of a span with state `s`, for its events: if it is recorded and was entered.
fn recorded(s: &SpanState) -> Option<&'static Section> {
    (!s.off && s.enters > 0).then_some(s.site)
}

/// The section of the callsite `meta` from this thread's cache or [`SITES`], if it was registered.
fn cached_site(meta: &'static Metadata<'static>) -> Option<&'static Section> {
    LOCAL
        .try_with(|l| l.try_borrow_mut().ok()?.site_of(meta))
        .ok()
        .flatten()
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
    // On cache lines of its own: every thread that enters the callsite's spans reads it, and a line
    // shared with memory a thread writes (the next allocation, such as a thread's stack of entered spans)
    // would move between the cores at each span.
    let site: &'static Section = Box::leak(Box::new(CachePadded::new(Section::new(SectionMeta {
        name: Name::Given(meta.name()),
        level: level_of(meta.level()),
        live,
        dots: fields.dots,
        cpu: false,
        file: meta.file().unwrap_or("?"),
        line: meta.line().unwrap_or(0),
        module_path: meta.target(),
    }))));
    sites.insert(key, site);
    site
}

/// The ticks of a span's enter, read from its section while open (the clock if not recorded).
#[inline]
fn first_ticks(guard: &Guard) -> u64 {
    guard.start().unwrap_or_else(|| clock::now().0)
}

/// An enter of the span whose state is `s` in its extensions: its section entered on this thread (its
/// guard: [`Guard::OFF`] if not recorded), and the pending live future to restore at its exit
/// ([`NO_PREVIOUS`] if none).
fn enter(s: &mut SpanState) -> (Guard, u64) {
    if s.off {
        return (Guard::OFF, NO_PREVIOUS);
    }
    if s.enters == 0 {
        let guard = entry::enter(s.site, s.site.level());
        s.off = !guard.is_recorded();
        s.enters = u32::from(!s.off);
        s.first_ticks = clock::now().0;
        return (guard, NO_PREVIOUS);
    }
    let Some(state) = entry::poll_state(s.site, s.site.level(), false) else {
        return (Guard::OFF, NO_PREVIOUS);
    };
    s.enters = s.enters.saturating_add(1);
    // SAFETY: `state` is this thread's own state (`poll_state` returns the calling thread's).
    let (guard, node) =
        unsafe { Guard::open_poll(state, s.site.id(), false, entry::poll_flags(s.site)) };
    // A span entered once is a call; from its second enter on, its enters are polls (the first too).
    if s.enters == 2 {
        node.poll();
    }
    node.poll();
    // Entered again: an async span (`#[instrument] async fn`). With a `live` field it joins the pending
    // live futures, as a timed future does at its first poll (a cold path, once per span).
    if s.enters == 2 && pending::enabled() && s.site.has_live_message() {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // Ids with the top bit set never meet a timed future's (thread index << 40 | count).
        let id = 1 << 63 | NEXT.fetch_add(1, Ordering::Relaxed);
        s.pending = Some((id, pending::add(s.site.id(), s.first_ticks, id)));
    }
    let previous = s
        .pending
        .map_or(NO_PREVIOUS, |(id, _)| pending::polling(id));
    (guard, previous)
}

/// The span whose state is `s` closed. A span entered more than once ends here: its wall time goes to its
/// call path on this thread, entered for the purpose (as a cancelled future's drop is).
fn end(s: &mut SpanState) {
    if let Some((id, slot)) = s.pending.take() {
        pending::remove(slot, id, clock::now().0, false);
    }
    if s.off || s.enters < 2 {
        return;
    }
    let Some(state) = entry::poll_state(s.site, s.site.level(), false) else {
        return;
    };
    // SAFETY: `state` is this thread's own state.
    let (guard, node) =
        unsafe { Guard::open_poll(state, s.site.id(), false, entry::poll_flags(s.site)) };
    drop(guard);
    node.end(clock::now().0.saturating_sub(s.first_ticks), false);
}

/// Moves `s` into the extensions `ext` of its span. If another thread put one there meanwhile (the span
/// was entered on two threads at once), they become one: enters added, the earlier first enter kept.
fn put(ext: &mut ExtensionsMut<'_>, s: SpanState) {
    if s.off {
        return;
    }
    let Some(Shared(into)) = ext.get_mut::<Shared>() else {
        ext.insert(Shared(s));
        return;
    };
    if into.off {
        *into = s;
        return;
    }
    into.enters = into.enters.saturating_add(s.enters);
    into.first_ticks = into.first_ticks.min(s.first_ticks);
    match (into.pending, s.pending) {
        (None, Some(p)) => into.pending = Some(p),
        (Some(_), Some((id, slot))) => pending::remove(slot, id, clock::now().0, false),
        _ => {}
    }
}

/// An enter of span `id` whose section this thread did not just make: its state goes to (or is in) its
/// extensions, unless no thread holds one (made on another thread, entered here first).
#[cold]
#[inline(never)]
fn enter_looked_up<S>(ctx: &Context<'_, S>, id: u64)
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let held = LOCAL
        .try_with(|l| l.try_borrow_mut().ok()?.take(id))
        .ok()
        .flatten();
    let Some(span) = ctx.span(&Id::from_u64(id)) else {
        return;
    };
    let mut ext = span.extensions_mut();
    if let Some(once) = held {
        put(&mut ext, once.state());
    }
    let open = match ext.get_mut::<Shared>() {
        Some(Shared(s)) => {
            let (guard, previous) = enter(s);
            Open {
                id,
                guard,
                previous,
                site: None,
            }
        }
        None => {
            // Its first enter: held by this thread, as one it made.
            let Some(site) = cached_site(span.metadata()) else {
                return;
            };
            Open {
                id,
                guard: entry::enter(site, site.level()),
                previous: NO_PREVIOUS,
                site: Some(site),
            }
        }
    };
    drop(ext);
    let _ = LOCAL.try_with(|l| {
        if let Ok(mut l) = l.try_borrow_mut() {
            l.open.push(open);
        }
    });
}

/// After an exit: the state in the outbox to its span's extensions, and, once no span is entered on the
/// thread, the parked states too, one at a time (the list keeps its capacity). Nothing for a span closed
/// meanwhile on another thread.
#[cold]
#[inline(never)]
fn exited_publish<S>(ctx: &Context<'_, S>)
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    loop {
        let next = LOCAL.try_with(|l| {
            let mut l = l.try_borrow_mut().ok()?;
            l.outbox.take().or_else(|| {
                if l.open.is_empty() {
                    l.parked.pop().map(|Parked(id, once)| (id, once))
                } else {
                    None
                }
            })
        });
        let Ok(Some((id, once))) = next else {
            break;
        };
        if once.off {
            continue;
        }
        if let Some(span) = ctx.span(&Id::from_u64(id)) {
            put(&mut span.extensions_mut(), once.state());
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for TracingLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        // Only the callsite's first span registers it (with its fields); the span's state comes at its
        // first enter, from here if this thread enters it before making another.
        let meta = attrs.metadata();
        let id = id.into_u64();
        let known =
            LOCAL.try_with(|l| l.try_borrow_mut().is_ok_and(|mut l| l.made(id, meta, None)));
        if known != Ok(true) {
            let site = site(meta, attrs);
            let _ =
                LOCAL.try_with(|l| l.try_borrow_mut().map(|mut l| l.made(id, meta, Some(site))));
        }
    }

    fn on_enter(&self, id: &Id, ctx: Context<'_, S>) {
        let id = id.into_u64();
        // The span this thread made last: its first enter, without a lookup.
        let done = LOCAL.try_with(|l| {
            let Ok(mut l) = l.try_borrow_mut() else {
                return true;
            };
            let Some((fresh, site)) = l.fresh else {
                return false;
            };
            if fresh != id {
                return false;
            }
            l.fresh = None;
            let guard = entry::enter(site, site.level());
            l.open.push(Open {
                id,
                guard,
                previous: NO_PREVIOUS,
                site: Some(site),
            });
            true
        });
        if done == Ok(false) {
            enter_looked_up(&ctx, id);
        }
    }

    fn on_exit(&self, id: &Id, ctx: Context<'_, S>) {
        let id = id.into_u64();
        if LOCAL.try_with(|l| l.try_borrow_mut().is_ok_and(|mut l| l.exit(id))) == Ok(true) {
            exited_publish(&ctx);
        }
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        // A state this thread holds ends with nothing to record (the span was entered once); one in the
        // extensions ends when the registry drops them (`Shared`).
        let id = id.into_u64();
        let _ = LOCAL.try_with(|l| {
            if let Ok(mut l) = l.try_borrow_mut() {
                if matches!(l.fresh, Some((fresh, _)) if fresh == id) {
                    l.fresh = None;
                }
                if !l.parked.is_empty()
                    && let Some(i) = l.parked.iter().rposition(|Parked(p, _)| *p == id)
                {
                    l.parked.swap_remove(i);
                }
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
        let local = LOCAL
            .try_with(|l| l.try_borrow().ok()?.event_site(span.id().into_u64()))
            .ok()
            .flatten();
        let site = match local {
            Some(site) => site,
            None => span
                .extensions()
                .get::<Shared>()
                .and_then(|Shared(s)| recorded(s)),
        };
        let Some(site) = site else {
            return;
        };
        let ptr = thread::current_ptr();
        if ptr.is_null() {
            return;
        }
        let mut message = Message::default();
        event.record(&mut message);
        let now = clock::now().0;
        let id = marks::keep(message.0);
        // SAFETY: a non-null `current_ptr` is this thread's own state, alive while the thread runs.
        unsafe { (*ptr).push_mark(Record::mark(site.id(), now, now, INSTANT, id)) };
    }
}
