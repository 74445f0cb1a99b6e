//! The file formats: the trace as Chrome JSON ([`chrome`]) or Perfetto protobuf ([`perfetto`]), both fed
//! the events of [`trace`]; folded stacks ([`folded`]), the call-tree JSON ([`json`]) and Prometheus's text format ([`prometheus`]), and the call-tree
//! JSON and the Chrome trace read back ([`json_read`], [`chrome_read`], both through [`json_input`]'s
//! bounded input). A streamed trace's file keeps the page rule ([`pages`]: no event crosses
//! a 4 KB page boundary); [`perfetto::packets`] frames a Perfetto file's padding and deflated bundles. Each is a
//! pure function of plain data; the collector puts their text in files.

#[cfg(any(feature = "prometheus", feature = "otlp"))]
pub(crate) mod by_section;
#[cfg(any(feature = "prometheus", feature = "otlp"))]
pub(crate) mod catalog;
pub(crate) mod chrome;
pub(crate) mod chrome_read;
pub(crate) mod chrome_timeline;
pub(crate) mod folded;
pub(crate) mod json;
pub(crate) mod json_input;
pub(crate) mod json_read;
pub(crate) mod json_rows;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
pub(crate) mod pages;
pub(crate) mod perfetto;
#[cfg(feature = "prometheus")]
pub(crate) mod prometheus;
pub(crate) mod protobuf;
pub(crate) mod trace;
