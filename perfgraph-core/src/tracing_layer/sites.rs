//! Callsites as sections: each callsite's section, registered at its first span, and a per-thread cache
//! that finds it by the address of the callsite's `'static` metadata, without a lock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, Once};

use crossbeam_utils::CachePadded;
use tracing_core::field::{Field, Visit};
use tracing_core::span::Attributes;
use tracing_core::{Level, Metadata};

use crate::base::poison;
use crate::base::registry::{Name, Section, SectionMeta};
use crate::base::sys;

/// Each callsite's sections, by the address of its `'static` metadata.
type Sites = Option<HashMap<usize, &'static Section>>;

/// Each callsite's section, by the address of its `'static` metadata. Held across a `fork` (see
/// [`hold_across_fork`]): a child may register or look up a callsite at once, and must not find it held by
/// a thread it did not inherit.
static SITES: Mutex<Sites> = Mutex::new(None);

thread_local! {
    /// [`SITES`], held by the forking thread from its `fork`'s prepare handler to its parent and child
    /// handlers.
    static HELD: RefCell<Option<MutexGuard<'static, Sites>>> = const { RefCell::new(None) };
}

/// Registers `pthread_atfork` handlers that hold [`SITES`] across a `fork`, once, at the first callsite's
/// registration (before which no thread holds it). The lock is short and never taken under another, so
/// taking it in `prepare` cannot deadlock with the runtime's own fork handlers.
fn hold_across_fork() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        sys::at_fork(take_for_fork, release_after_fork, release_after_fork);
    });
}

extern "C" fn take_for_fork() {
    let _ = std::panic::catch_unwind(|| {
        let held = poison::lock(&SITES);
        // During the thread's teardown there is nowhere to keep it: then it is not held.
        let _ = HELD.try_with(|h| *h.borrow_mut() = Some(held));
    });
}

extern "C" fn release_after_fork() {
    let _ = std::panic::catch_unwind(|| {
        let _ = HELD.try_with(|h| h.borrow_mut().take());
    });
}

/// Slots of the per-thread cache of [`SITES`] (a power of two).
const CACHE: usize = 64;

/// A direct-mapped cache of [`SITES`]: `(metadata address, section)`, 0 for an empty slot.
pub(super) struct SiteCache([(usize, Option<&'static Section>); CACHE]);

impl SiteCache {
    pub(super) const EMPTY: SiteCache = SiteCache([(0, None); CACHE]);

    /// The section of the callsite `meta`, if it was registered (by [`register`]): from this cache, else
    /// from [`SITES`] (then cached).
    #[inline]
    pub(super) fn get(&mut self, meta: &'static Metadata<'static>) -> Option<&'static Section> {
        let key = key(meta);
        // Metadata are statics at least 8-byte aligned: drop the low bits before indexing.
        let slot = (key >> 4 ^ key >> 10) & (CACHE - 1);
        if self.0[slot].0 == key {
            return self.0[slot].1;
        }
        let site = *poison::lock(&SITES).as_ref()?.get(&key)?;
        self.0[slot] = (key, Some(site));
        Some(site)
    }
}

fn key(meta: &'static Metadata<'static>) -> usize {
    meta as *const Metadata<'static> as usize
}

/// perfgraph's level of a `tracing` level: ERROR and WARN 0, INFO 1, DEBUG 2, TRACE 3.
fn level_of(level: &Level) -> u8 {
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

/// A live message given to the spans of one name by the layer (`TracingLayer::live`).
#[derive(Debug, Clone, Copy)]
pub(super) struct LiveByName {
    pub(super) span: &'static str,
    pub(super) message: &'static str,
    pub(super) dots: bool,
}

/// The section of `meta`'s callsite, registered at its first span (with that span's `live` and `dots`,
/// or without a `live` field the layer's message for its name, `by_name`).
pub(super) fn register(
    meta: &'static Metadata<'static>,
    attrs: &Attributes<'_>,
    by_name: &[LiveByName],
) -> &'static Section {
    hold_across_fork();
    let key = key(meta);
    let mut sites = poison::lock(&SITES);
    let sites = sites.get_or_insert_with(HashMap::new);
    if let Some(&site) = sites.get(&key) {
        return site;
    }
    let mut fields = LiveFields::default();
    attrs.record(&mut fields);
    let named = by_name.iter().find(|l| l.span == meta.name());
    if fields.live.is_none()
        && let Some(l) = named
    {
        fields.dots = fields.dots || l.dots;
    }
    let live: Option<&'static str> = match fields.live {
        Some(l) => Some(&*Box::leak(l.into_boxed_str())),
        None => named.map(|l| l.message),
    };
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
        args: &[],
    }))));
    sites.insert(key, site);
    site
}
