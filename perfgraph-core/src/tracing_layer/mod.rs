//! The `tracing` bridge (cargo feature `tracing`): [`TracingLayer`], a `tracing_subscriber::Layer` that
//! records every span the subscriber enables as a perfgraph section.
//!
//! * A span's callsite is registered as a section once, at its first span (name: the span's name; file,
//!   line and target, as module path, from its metadata; level from the span's level; live message and
//!   dots from its `live` and `dots` fields, as first seen at that callsite). After that a span costs a
//!   lookup of its callsite's section by the metadata's address in a small per-thread cache, never by name
//!   and without a lock.
//! * Cost: a span entered once is held by the thread that enters it, not in the registry (`held`). The
//!   span a thread made last is entered without a lookup (its section comes from its creation), as an
//!   ordinary section (`entry::enter`); while entered, its state is its entry in the thread's stack of
//!   entered spans (its section, recorded if its guard is). After its exit, inside another span, it is
//!   parked on the thread (its section, its start read from its frame) until its close. Exited with no
//!   other span entered on its thread (a task's poll may end there, and the task move), it is handed over
//!   (`handover`): its id and start go to the thread's hand-over slot, two stores, where the thread that
//!   enters it next, whichever it is, takes them with one compare-and-swap; its close takes them back
//!   the same way. So a span made, entered once and closed on one thread costs no registry lookup,
//!   allocation or lock besides the section's own enter and exit. The state moves to the span's
//!   extensions in the registry (one lookup, one boxed insert, as a `SpanState`, `shared`) only when it
//!   is entered again (an async span's polls, whose close, on any thread, ends it: those enters look it
//!   up), when another span is handed over on its thread before it closes, and when the parked list of 8
//!   overflows or is left behind by the thread's last exit. A span first entered on a thread that did not
//!   make it is looked up once.
//!   Limits: a span exited inside another span and then entered on a second thread before the first
//!   thread leaves that other span is counted there as a new call, not as a poll; so is a span handed
//!   over by a thread that exited before the span's next enter.
//! * Each enter of the span enters the section on the entering thread, each exit leaves it, exactly as a
//!   poll of a [`Timed`](crate::Timed) future does: `#[instrument]` on an `async fn` (whose future enters
//!   the span on every poll) is timed per poll. A span entered once is an ordinary call; one entered
//!   several times also counts its polls (its enters) and its wall time, from its first enter to its close.
//! * A span's latency (one duration in its path's histogram) is recorded at its close, once it is known
//!   what the span was: entered once, its enter's duration, in the path where it ran; entered more than
//!   once, its first enter to its close, in its section's path under what is open on the closing thread
//!   (as its wall time). Enters record no duration themselves (`Guard::close_unrecorded`). A span never
//!   closed, or closed after its thread exited, has no latency.
//! * An event inside a recorded span becomes an instant event in the trace, with its message.
//! * A span with a `live` field entered more than once joins live print's pending futures at its second
//!   enter, until its close: live print shows it by wall time on the async track, as a timed future.

mod handover;
mod held;
mod shared;
mod sites;

use std::fmt::Write as _;

use tracing_core::field::{Field, Visit};
use tracing_core::span::{Attributes, Id};
use tracing_core::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use crate::base::clock;
use crate::base::registry::Section;
use crate::entry;
use crate::local::record::{INSTANT, Record};
use crate::local::{marks, threads};
use held::{LOCAL, Once, Open, SLOTS};
use shared::{NO_PREVIOUS, Shared};

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
/// let node = perfgraph_core::combined().find(&["load_mesh"]).cloned().unwrap();
/// assert_eq!(node.calls, 1);
/// let info = perfgraph_core::section_info(node.section).unwrap();
/// assert_eq!((info.live, info.dots), ("Loading mesh", true));
/// ```
#[derive(Debug, Default)]
pub struct TracingLayer {
    /// Live messages given by span name (`live`), with their dots: for spans without a `live` field.
    live: Vec<sites::LiveByName>,
}

impl TracingLayer {
    /// A layer; add it to a registry: `tracing_subscriber::registry().with(TracingLayer::new())`.
    pub fn new() -> TracingLayer {
        TracingLayer { live: Vec::new() }
    }

    /// Gives the spans named `span` the live message `message`, as a `live` field would, without a field
    /// that the `fmt` layer then repeats on every log line of the span. A span's own `live` field, if it
    /// has one, wins.
    ///
    /// ```
    /// use tracing_subscriber::layer::SubscriberExt;
    ///
    /// let layer = perfgraph_core::TracingLayer::new().live("load_config", "Loading config");
    /// let subscriber = tracing_subscriber::registry().with(layer);
    /// tracing::subscriber::with_default(subscriber, || {
    ///     let _entered = tracing::info_span!("load_config", path = "app.toml").entered();
    /// });
    /// let node = perfgraph_core::combined().find(&["load_config"]).cloned().unwrap();
    /// let info = perfgraph_core::section_info(node.section).unwrap();
    /// assert_eq!((info.live, info.dots), ("Loading config", false));
    /// ```
    pub fn live(mut self, span: &'static str, message: &'static str) -> TracingLayer {
        self.live.push(sites::LiveByName {
            span,
            message,
            dots: false,
        });
        self
    }

    /// [`live`](Self::live), with a dot every time limit while the span runs (the `dots` field's effect).
    ///
    /// ```
    /// let layer = perfgraph_core::TracingLayer::new().live_dots("solve", "Solving");
    /// # let _ = layer;
    /// ```
    pub fn live_dots(mut self, span: &'static str, message: &'static str) -> TracingLayer {
        self.live.push(sites::LiveByName {
            span,
            message,
            dots: true,
        });
        self
    }
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

/// The section of the callsite `meta` from this thread's cache or the registered sites, if registered.
fn cached_site(meta: &'static Metadata<'static>) -> Option<&'static Section> {
    LOCAL
        .try_with(|l| l.try_borrow_mut().ok()?.sites.get(meta))
        .ok()
        .flatten()
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
    let site = cached_site(span.metadata());
    let mut ext = span.extensions_mut();
    // Handed over by another thread (a task that moved between polls): taken from its slot.
    let held = held.or_else(|| {
        if ext.get_mut::<Shared>().is_some() {
            return None;
        }
        let site = site?;
        let start = SLOTS.steal(id, held::site_key(site))?;
        Some(Once {
            site,
            start,
            off: false,
            latency: None,
        })
    });
    if let Some(once) = held {
        shared::put(&mut ext, once.state());
    }
    let open = match ext.get_mut::<Shared>() {
        Some(Shared(s)) => {
            let (guard, previous) = shared::enter(s);
            Open {
                id,
                guard,
                previous,
                site: None,
            }
        }
        None => {
            // Its first enter: held by this thread, as one it made.
            let Some(site) = site else {
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
            l.outbox.take().or_else(|| l.unpark())
        });
        let Ok(Some((id, once))) = next else {
            break;
        };
        if once.off {
            continue;
        }
        match ctx.span(&Id::from_u64(id)) {
            Some(span) => shared::put(&mut span.extensions_mut(), once.state()),
            // Closed meanwhile on another thread, entered once.
            None => once.record(),
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
            let site = sites::register(meta, attrs, &self.live);
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
        // A state this thread holds ends with its enter's duration recorded (the span was entered once);
        // one in the extensions ends when the registry drops them (`Shared`).
        let id = id.into_u64();
        let _ = LOCAL.try_with(|l| {
            if let Ok(mut l) = l.try_borrow_mut() {
                l.closed(id);
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
                .and_then(|Shared(s)| shared::recorded(s)),
        };
        let Some(site) = site else {
            return;
        };
        let ptr = threads::current_ptr();
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
