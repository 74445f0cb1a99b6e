//! The section registry: one `static` [`Section`] per call site, registered once, looked up by a small
//! dense id from any thread.
//!
//! # Protocol (after `tracing-core`'s callsites)
//!
//! Every `#[timed]` function and `time_section!` expands to a `static` [`Section`] whose `id` starts at 0
//! ("not registered"). The hot path does one `Relaxed` load of `id` ([`Section::id`]); a non-zero value is the
//! section's id. The first thread to see 0 takes the `#[cold]` path: under the registration mutex it re-reads
//! `id` (another thread may have won the race), otherwise allocates the next dense id, stores the
//! [`SectionInfo`] in the lock-free lookup table, and only then stores the id into the site. Two threads
//! reaching a new site at once therefore register it once.
//!
//! Readers ([`info`]) never take the lock when the entry is visible: the table is a fixed array of
//! lazily-allocated chunks of `AtomicPtr<SectionInfo>`, written once and never freed. A reader that got an id
//! through a `Relaxed` path (e.g. an id a recording thread copied into its ring) may in theory not yet see the
//! table entry; it then takes the registration mutex, which orders it after the registration that wrote it.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::poison;

/// A section's id: small, dense, starting at 1. Id 0 is the per-thread root of the call tree.
pub type SectionId = u32;

/// How a call site names its section.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Name {
    /// `name = "..."` or the literal given to `time_section!`.
    Given(&'static str),
    /// The enclosing function, read from the type name of an item nested in it (resolved once, when the site
    /// registers): `Solver::solve` for a method, `assemble` for a free function.
    FromFn(fn() -> &'static str),
}

/// What a call site declares, as the macros write it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SectionMeta {
    /// The section's name.
    pub name: Name,
    /// Verbosity level, 0..=3.
    pub level: u8,
    /// The live-print message; `None` means "use the name".
    pub live: Option<&'static str>,
    /// Print a dot per time-limit interval while running.
    pub dots: bool,
    /// Read the thread's CPU clock at each call's start and end (the `cpu` option).
    pub cpu: bool,
    /// `file!()` of the call site.
    pub file: &'static str,
    /// `line!()` of the call site.
    pub line: u32,
    /// `module_path!()` of the call site.
    pub module_path: &'static str,
    /// The names of the args each call records (`args(...)`), in order; empty for most sections.
    pub args: &'static [&'static str],
}

/// One call site: a `static` the macros emit. Users never name it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Section {
    /// 0 until registered, then the section id forever (written once, under [`REGISTRY`]'s mutex).
    id: AtomicU32,
    /// Set (once, never cleared) the first time the site is reached while its level is above the
    /// verbosity; its id is then in [`SKIPPED`].
    skipped: AtomicBool,
    /// How its sections open, as the entry point decided at the site's first recorded section (0 until
    /// then): whether they take anything out of line (exact memory, heap counters, CPU clock), which
    /// depends only on the site and on settings fixed at the runtime's start. Cached so the hot path tests
    /// one byte.
    route: AtomicU8,
    meta: SectionMeta,
}

/// Everything known about a registered section, readable from any thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectionInfo {
    /// Dense id, from 1.
    pub id: SectionId,
    /// Name shown in reports (`mesh::refine`, `Solver::solve`, `assemble`).
    pub name: &'static str,
    /// Verbosity level, 0..=3.
    pub level: u8,
    /// Live-print message (the name when none was given).
    pub live: &'static str,
    /// Whether live print adds a dot per time-limit interval.
    pub dots: bool,
    /// Source file of the call site.
    pub file: &'static str,
    /// Source line of the call site.
    pub line: u32,
    /// Module of the call site.
    pub module_path: &'static str,
    /// The names of the args each call records (`args(...)`), in order.
    pub args: &'static [&'static str],
}

/// The pseudo-section at the root of every thread's call tree.
pub const ROOT: SectionInfo = SectionInfo {
    id: 0,
    name: "(root)",
    level: 0,
    live: "(root)",
    dots: false,
    file: "",
    line: 0,
    module_path: "",
    args: &[],
};

const CHUNK: usize = 256;
const CHUNKS: usize = 1024;
/// Sections beyond this many share the last id, named `(too many sections)`.
pub const MAX_SECTIONS: u32 = (CHUNK * CHUNKS - 1) as u32;

type Chunk = [AtomicPtr<SectionInfo>; CHUNK];

/// Chunk `i` holds ids `i*CHUNK .. (i+1)*CHUNK`. Invariant: a non-null chunk pointer and a non-null entry are
/// written once (Release, under `REGISTRY`) and never changed or freed.
static TABLE: [AtomicPtr<Chunk>; CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];

/// Registration state: the number of ids handed out. Only the cold path locks it.
static REGISTRY: Mutex<u32> = Mutex::new(0);

/// Sections reached at least once while their level was above the verbosity, in the order first seen
/// (each once). Written on the cold path only, once per site.
static SKIPPED: Mutex<Vec<SectionId>> = Mutex::new(Vec::new());

/// Both of this module's locks, taken in that order (`collector::fork`, before a `fork()`): a child then
/// never inherits one held by a thread that does not exist in it. Neither is held while anything else is
/// locked, or while user code runs.
pub fn hold_for_fork() -> (
    MutexGuard<'static, u32>,
    MutexGuard<'static, Vec<SectionId>>,
) {
    let registry = poison::lock(&REGISTRY);
    let skipped = poison::lock(&SKIPPED);
    (registry, skipped)
}

impl Section {
    /// A call site, not yet registered.
    pub const fn new(meta: SectionMeta) -> Section {
        Section {
            id: AtomicU32::new(0),
            skipped: AtomicBool::new(false),
            route: AtomicU8::new(0),
            meta,
        }
    }

    /// Notes that the site was reached while its level is above the verbosity, so the reports can say
    /// which sections they lack. One Relaxed load and a branch after the first time.
    #[inline(always)]
    pub fn note_skipped(&'static self) {
        if !self.skipped.load(Ordering::Relaxed) {
            self.first_skip();
        }
    }

    #[cold]
    #[inline(never)]
    fn first_skip(&'static self) {
        // perfgraph's own allocation: never a section's.
        crate::base::heap::untracked(|| self.note_first_skip());
    }

    fn note_first_skip(&'static self) {
        let id = self.id();
        let mut skipped = poison::lock(&SKIPPED);
        // Relaxed: the flag only spares later calls this function; two threads that both get here are
        // serialised by the lock, and the second finds the id already listed.
        self.skipped.store(true, Ordering::Relaxed);
        if !skipped.contains(&id) {
            skipped.push(id);
        }
    }

    /// Whether the site gave a `live` message (`live = "..."`): `PERFGRAPH_MEM_EXACT=live` reads memory at
    /// its boundaries, and live print shows its futures while they are pending (docs/live-print.md, "Async
    /// code").
    #[inline(always)]
    pub fn has_live_message(&self) -> bool {
        self.meta.live.is_some()
    }

    /// Whether the site gave the `cpu` option: its sections read the thread's CPU clock at their start
    /// and end (as every section does with `PERFGRAPH_CPU=all`).
    #[inline(always)]
    pub fn has_cpu_option(&self) -> bool {
        self.meta.cpu
    }

    /// The site's level (0 to 3).
    #[inline(always)]
    pub fn level(&self) -> u8 {
        self.meta.level
    }

    /// The route the entry point cached for this site (0 if none yet).
    #[inline(always)]
    pub fn route(&self) -> u8 {
        // Relaxed: a cache of a value every thread computes alike from settings fixed before any section.
        self.route.load(Ordering::Relaxed)
    }

    /// Caches the entry point's route for this site (the same value whichever thread stores it).
    pub fn set_route(&self, route: u8) {
        // Relaxed: see `route`.
        self.route.store(route, Ordering::Relaxed);
    }

    /// This site's id, registering it on first use.
    #[inline(always)]
    pub fn id(&'static self) -> SectionId {
        let id = self.id.load(Ordering::Relaxed);
        if id != 0 { id } else { self.register() }
    }

    /// perfgraph's own allocations (the section's entry in the table): never a section's.
    #[cold]
    #[inline(never)]
    fn register(&'static self) -> SectionId {
        crate::base::heap::untracked(|| self.register_untracked())
    }

    fn register_untracked(&'static self) -> SectionId {
        let mut count = poison::lock(&REGISTRY);
        // Relaxed is enough: every store to `id` happens under this mutex, which orders it for us.
        let id = self.id.load(Ordering::Relaxed);
        if id != 0 {
            return id;
        }
        let id = if *count >= MAX_SECTIONS {
            MAX_SECTIONS
        } else {
            *count += 1;
            *count
        };
        if lookup(id).is_none() {
            let meta = &self.meta;
            let name = match meta.name {
                Name::Given(name) => name,
                Name::FromFn(f) => function_name(f(), meta.module_path),
            };
            let too_many = id == MAX_SECTIONS;
            let info = SectionInfo {
                id,
                name: if too_many {
                    "(too many sections)"
                } else {
                    name
                },
                level: meta.level.min(3),
                live: if too_many {
                    "(too many sections)"
                } else {
                    meta.live.unwrap_or(name)
                },
                dots: meta.dots && !too_many,
                file: meta.file,
                line: meta.line,
                module_path: meta.module_path,
                args: meta.args,
            };
            publish(info);
        }
        self.id.store(id, Ordering::Relaxed);
        id
    }
}

/// Stores `info` in the table. Caller holds `REGISTRY`.
fn publish(info: SectionInfo) {
    let (c, i) = (info.id as usize / CHUNK, info.id as usize % CHUNK);
    let mut chunk = TABLE[c].load(Ordering::Acquire);
    if chunk.is_null() {
        let fresh: Box<Chunk> = Box::new([const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNK]);
        chunk = Box::into_raw(fresh);
        // Release pairs with the Acquire loads in `lookup`: a reader that sees the chunk sees it initialised.
        TABLE[c].store(chunk, Ordering::Release);
    }
    let entry = Box::into_raw(Box::new(info));
    // SAFETY: `chunk` is non-null, was allocated above or earlier by this function, and is never freed.
    let slot = unsafe { &(*chunk)[i] };
    // Release pairs with the Acquire load in `lookup`: a reader that sees the pointer sees the info.
    slot.store(entry, Ordering::Release);
}

/// The entry for `id` if it is visible without locking.
fn lookup(id: SectionId) -> Option<&'static SectionInfo> {
    let (c, i) = (id as usize / CHUNK, id as usize % CHUNK);
    let chunk = TABLE.get(c)?.load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: a non-null chunk pointer was published (Release) fully initialised and is never freed.
    let entry = unsafe { (*chunk)[i].load(Ordering::Acquire) };
    // SAFETY: a non-null entry points at a leaked, immutable `SectionInfo` (published with Release).
    (!entry.is_null()).then(|| unsafe { &*entry })
}

/// Information about section `id` (0 is the root). `None` for an id never handed out.
pub fn info(id: SectionId) -> Option<SectionInfo> {
    if id == 0 {
        return Some(ROOT);
    }
    if let Some(info) = lookup(id) {
        return Some(*info);
    }
    // The id may have reached us through Relaxed loads only; the mutex orders us after its registration.
    drop(poison::lock(&REGISTRY));
    lookup(id).copied()
}

/// The sections reached at least once while their level was above the verbosity (so at least one of their
/// calls was not recorded), in the order first seen.
pub fn skipped() -> Vec<SectionInfo> {
    let ids = poison::lock(&SKIPPED).clone();
    ids.into_iter().filter_map(info).collect()
}

/// How many sections are registered (what `all().len()` would say, without copying them).
#[cfg_attr(not(feature = "listen"), allow(dead_code))]
pub fn count() -> u32 {
    *poison::lock(&REGISTRY)
}

/// Every registered section, by id.
pub fn all() -> Vec<SectionInfo> {
    let count = *poison::lock(&REGISTRY);
    (1..=count).filter_map(|id| lookup(id).copied()).collect()
}

/// Turns `type_name_of_val` of the `__perfgraph_here` item a `#[timed]` body declares into the name users
/// expect: the function's name, qualified by the type it is a method of (or the trait, for a default method).
///
/// With module `demo`: `demo::assemble::__perfgraph_here` → `assemble`; `demo::Solver::solve::…` →
/// `Solver::solve`; `<demo::Grid<f64> as demo::Physics>::step::…` → `Grid::step`; `demo::Physics::step::…`
/// (a default method) → `Physics::step`; `demo::outer::{{closure}}::inner::…` (a nested fn) → `inner`;
/// `demo::fetch::{{closure}}::…` (an `async fn`'s body) → `fetch`.
/// Only the segment just before the function's name can qualify it, and only if it is a type or trait:
/// qualified (`<T as Trait>`) or, by Rust's naming convention, capitalised. Generic arguments and module
/// paths inside types are dropped.
pub(crate) fn function_name(path: &str, module: &str) -> &'static str {
    let mut path = path.strip_suffix("::__perfgraph_here").unwrap_or(path);
    // An `async fn`'s body is a closure of the function (`demo::fetch::{{closure}}::…`).
    while let Some(outer) = path.strip_suffix("::{{closure}}") {
        path = outer;
    }
    let path = path
        .strip_prefix(module)
        .and_then(|p| p.strip_prefix("::"))
        .unwrap_or(path);
    let segments = split_path(path);
    let name = match segments.as_slice() {
        [.., owner, function]
            if owner.starts_with('<') || owner.starts_with(char::is_uppercase) =>
        {
            format!("{}::{function}", short_type(qualified_self(owner)))
        }
        [.., function] => (*function).to_owned(),
        [] => path.to_owned(),
    };
    Box::leak(name.into_boxed_str())
}

/// Splits a path at the `::` that are outside `<>`, `()` and `[]`.
fn split_path(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut prev) = (0usize, 0usize, ' ');
    for (i, c) in path.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if prev != '-' => depth = depth.saturating_sub(1),
            ')' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 && prev == ':' && i > start => {
                out.push(&path[start..i - 1]);
                start = i + 1;
            }
            _ => {}
        }
        // A `::` consumed above must not pair its second `:` with a following one.
        prev = if i + 1 == start { ' ' } else { c };
    }
    out.push(&path[start..]);
    out.retain(|s| !s.is_empty());
    out
}

/// `<T as Trait>` → `T`; anything else unchanged.
fn qualified_self(segment: &str) -> &str {
    let Some(inner) = segment.strip_prefix('<').and_then(|s| s.strip_suffix('>')) else {
        return segment;
    };
    let mut depth = 0usize;
    let mut prev = ' ';
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if prev != '-' => depth = depth.saturating_sub(1),
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 && inner[i..].starts_with(" as ") => return &inner[..i],
            _ => {}
        }
        prev = c;
    }
    inner
}

/// Drops generic arguments and module paths: `demo::Grid<f64>` → `Grid`, `(u8, demo::A)` → `(u8, A)`.
fn short_type(ty: &str) -> String {
    let mut out = String::with_capacity(ty.len());
    let (mut depth, mut prev) = (0usize, ' ');
    for c in ty.chars() {
        match c {
            '>' if prev == '-' => {
                if depth == 0 {
                    out.push(c);
                }
            }
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            ':' if prev == ':' => {
                out.pop();
                let kept = out.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
                out.truncate(kept.len());
            }
            _ => out.push(c),
        }
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::function_name;

    #[track_caller]
    fn check(type_name: &str, expected: &str) {
        let full = format!("{type_name}::__perfgraph_here");
        assert_eq!(function_name(&full, "demo::phys"), expected, "{full}");
    }

    #[test]
    fn free_functions() {
        check("demo::phys::assemble", "assemble");
        check("demo::phys::main", "main");
        check("demo::phys::generic", "generic");
        check("demo::phys::r#match", "r#match");
    }

    #[test]
    fn methods_are_qualified_by_their_type() {
        check("demo::phys::Solver::solve", "Solver::solve");
        check("demo::phys::Grid<_>::refine", "Grid::refine");
        check(
            "demo::phys::Grid<alloc::vec::Vec<u8>>::refine",
            "Grid::refine",
        );
        check(
            "<demo::phys::Solver as demo::phys::Physics>::step",
            "Solver::step",
        );
        check(
            "<demo::phys::Grid<f64> as demo::phys::Physics<u8>>::step",
            "Grid::step",
        );
        check("<u32 as demo::phys::Physics>::step", "u32::step");
        check("<alloc::vec::Vec<T> as demo::Gen<T>>::g", "Vec::g");
    }

    #[test]
    fn unusual_self_types_keep_their_shape() {
        check(
            "<(u8, demo::phys::Solver) as demo::phys::Physics>::step",
            "(u8, Solver)::step",
        );
        check(
            "<[demo::phys::Solver] as demo::phys::Physics>::step",
            "[Solver]::step",
        );
        check(
            "<&demo::phys::Solver as demo::phys::Physics>::step",
            "&Solver::step",
        );
        check(
            "<dyn core::ops::function::Fn() -> u8 as demo::phys::Physics>::step",
            "dyn Fn() -> u8::step",
        );
        check(
            "<fn(demo::A) -> demo::B as demo::phys::Physics>::step",
            "fn(A) -> B::step",
        );
    }

    #[test]
    fn default_trait_methods_are_qualified_by_their_trait() {
        check("demo::phys::Physics::step", "Physics::step");
    }

    #[test]
    fn nested_functions_are_named_alone() {
        check("demo::phys::outer::inner", "inner");
        check("demo::phys::outer::{{closure}}::in_closure", "in_closure");
        check("demo::phys::Solver::solve::helper", "helper");
        check("demo::phys::outer::Local::method", "Local::method");
        check("demo::phys::Solver::solve::{{closure}}::helper", "helper");
        // A doctest's functions live inside its generated `main`.
        assert_eq!(
            function_name("rust_out::main::solve::__perfgraph_here", "rust_out"),
            "solve"
        );
    }

    #[test]
    fn a_path_outside_the_module_still_names_the_function() {
        assert_eq!(
            function_name("other::place::free::__perfgraph_here", "demo"),
            "free"
        );
        assert_eq!(
            function_name("other::Solver::solve::__perfgraph_here", "demo"),
            "Solver::solve"
        );
        assert_eq!(function_name("", "demo"), "");
        assert_eq!(
            function_name("demo::Solver::fetch::{{closure}}::__perfgraph_here", "demo"),
            "Solver::fetch"
        );
    }
}
