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

use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

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
    /// `file!()` of the call site.
    pub file: &'static str,
    /// `line!()` of the call site.
    pub line: u32,
    /// `module_path!()` of the call site.
    pub module_path: &'static str,
}

/// One call site: a `static` the macros emit. Users never name it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Section {
    /// 0 until registered, then the section id forever (written once, under [`REGISTRY`]'s mutex).
    id: AtomicU32,
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

impl Section {
    /// A call site, not yet registered.
    pub const fn new(meta: SectionMeta) -> Section {
        Section {
            id: AtomicU32::new(0),
            meta,
        }
    }

    /// This site's id, registering it on first use.
    #[inline(always)]
    pub fn id(&'static self) -> SectionId {
        let id = self.id.load(Ordering::Relaxed);
        if id != 0 { id } else { self.register() }
    }

    /// The site's declared level.
    #[inline(always)]
    pub fn level(&self) -> u8 {
        self.meta.level
    }

    #[cold]
    #[inline(never)]
    fn register(&'static self) -> SectionId {
        let mut count = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
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
    drop(REGISTRY.lock().unwrap_or_else(|e| e.into_inner()));
    lookup(id).copied()
}

/// Every registered section, by id.
pub fn all() -> Vec<SectionInfo> {
    let count = *REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    (1..=count).filter_map(|id| lookup(id).copied()).collect()
}

/// Turns `type_name` of an item nested in a function into the name users expect.
///
/// `my_crate::physics::Solver::solve::__perfgraph_here` with module `my_crate::physics` → `Solver::solve`;
/// `<my_crate::Solver as my_crate::Physics>::step::__perfgraph_here` → `Solver::step`;
/// `my_crate::assemble::__perfgraph_here` → `assemble`; `my_crate::main::helper::__perfgraph_here` (a function
/// nested in `main`) → `helper`. Generic arguments are dropped.
pub(crate) fn function_name(path: &str, module: &str) -> &'static str {
    let path = path.rsplit_once("::").map_or(path, |(head, _)| head);
    let path = path
        .strip_prefix(module)
        .and_then(|p| p.strip_prefix("::"))
        .unwrap_or(path);
    let mut out = String::with_capacity(path.len());
    let mut rest = path;
    // `<Type as Trait>::method` → `Type::method`
    if let Some(inner) = rest.strip_prefix('<') {
        let mut depth = 1usize;
        let mut end = inner.len();
        for (i, ch) in inner.char_indices() {
            match ch {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let qualified = &inner[..end];
        let ty = qualified.split(" as ").next().unwrap_or(qualified);
        out.push_str(last_segment(&strip_generics(ty)));
        rest = inner.get(end + 1..).unwrap_or("");
    }
    out.push_str(&strip_generics(rest));
    let name = out.trim_start_matches("::");
    let name = if name.is_empty() { path } else { name };
    // Keep the function and, when the segment before it is a type (CamelCase by Rust convention), the type:
    // `Solver::solve`, but `solve` for a function nested in `main` or in a closure.
    let mut segments = name.rsplit("::");
    let function = segments.next().unwrap_or(name);
    let name = match segments.next() {
        Some(owner) if owner.starts_with(|c: char| c.is_uppercase()) => {
            format!("{owner}::{function}")
        }
        _ => function.to_owned(),
    };
    Box::leak(name.into_boxed_str())
}

fn strip_generics(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for ch in s.chars() {
        match ch {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

fn last_segment(s: &str) -> &str {
    s.rsplit("::").next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::function_name;

    #[test]
    fn names_from_type_names() {
        assert_eq!(
            function_name("demo::assemble::__perfgraph_here", "demo"),
            "assemble"
        );
        assert_eq!(
            function_name("demo::phys::Solver::solve::__perfgraph_here", "demo::phys"),
            "Solver::solve"
        );
        assert_eq!(
            function_name(
                "<demo::Solver as demo::Physics>::step::__perfgraph_here",
                "demo"
            ),
            "Solver::step"
        );
        assert_eq!(
            function_name(
                "<demo::Grid<f64> as demo::Physics<u8>>::step::__perfgraph_here",
                "demo"
            ),
            "Grid::step"
        );
        assert_eq!(
            function_name("demo::Grid<T>::refine::__perfgraph_here", "demo"),
            "Grid::refine"
        );
        assert_eq!(
            function_name("demo::main::__perfgraph_here", "demo"),
            "main"
        );
        assert_eq!(
            function_name("rust_out::main::solve::__perfgraph_here", "rust_out"),
            "solve"
        );
        assert_eq!(
            function_name(
                "demo::Solver::solve::{{closure}}::helper::__perfgraph_here",
                "demo"
            ),
            "helper"
        );
        assert_eq!(
            function_name("demo::phys::Physics::step::__perfgraph_here", "demo"),
            "Physics::step"
        );
    }
}
