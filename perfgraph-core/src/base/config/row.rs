//! One row of the table of `PERFGRAPH_*` variables, and the parsers every part of the table uses (the
//! rows of `variables` and of `causal`).

use std::path::PathBuf;

use super::Config;

/// One `PERFGRAPH_*` variable: its name, what the warning says is accepted and the default, and how a
/// (trimmed) value is applied. `apply` returns `false`, having changed nothing, for a value it refuses.
///
/// A comma list (`list_refuses` is `Some`) applies its good entries and leaves out the bad ones, one warning
/// each (`list_refuses` names them): one typo does not lose the rest. Only a list with no good entry at
/// all is refused whole.
#[derive(Clone, Copy)]
pub(super) struct Variable {
    pub(super) name: &'static str,
    pub(super) accepted: &'static str,
    pub(super) default: &'static str,
    pub(super) apply: fn(&mut Config, &str) -> bool,
    pub(super) list_refuses: Option<fn(&str) -> Vec<String>>,
}

/// Stores a parsed value; `false` (storing nothing) when there is none.
pub(super) fn set<T>(slot: &mut T, value: Option<T>) -> bool {
    value.map(|v| *slot = v).is_some()
}

/// A non-empty file path.
pub(super) fn path(v: &str) -> Option<Option<PathBuf>> {
    (!v.is_empty()).then(|| Some(PathBuf::from(v)))
}
