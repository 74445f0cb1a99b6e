//! perfgraph: timed sections with live progress on stderr. (Documentation in progress.)

mod registry;

pub use perfgraph_macros::{time_section, timed};
pub use registry::{SectionId, SectionInfo};

/// What the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::registry::{Name, Section, SectionMeta};

    /// Scope guard: ends the section when dropped.
    #[must_use = "a section ends when its guard is dropped"]
    pub struct Guard(());

    /// Starts a section (stub: replaced by the runtime).
    #[inline(always)]
    pub fn enter(site: &'static Section, level: u8) -> Guard {
        let _ = (site.id(), level);
        Guard(())
    }
}
