//! File exports: folded stacks ([`folded`]) and the call-tree JSON ([`json`]), pure functions of a report.

pub(crate) mod folded;
pub(crate) mod json;
