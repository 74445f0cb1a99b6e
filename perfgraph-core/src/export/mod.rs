//! The file formats: the Chrome trace ([`chrome`]), folded stacks ([`folded`]) and the call-tree JSON
//! ([`json`]), and the call-tree JSON read back ([`json_read`]). Each is a pure function of plain data; the collector puts their text in files.

pub(crate) mod chrome;
pub(crate) mod folded;
pub(crate) mod json;
pub(crate) mod json_read;

#[cfg(test)]
mod tests;
