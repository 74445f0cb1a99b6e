//! The spans request (`ExportTraceServiceRequest`, posted to `/v1/traces`). The spans are encoded one by
//! one as the calls are drained ([`span`], into a batch's buffer) and wrapped in the request when the
//! batch is sent ([`request`]).
//!
//! A span is one call: its section's name, its start and end, kind `INTERNAL`, its thread's name as
//! `thread.name`, and its parent (the call it was made from, on the same thread) by span id. A call made
//! from no exported call starts a trace of its own.

use super::{Attributes, Value, key_value, resource_field, scope_field};
use crate::base::budget::{OutBuf, Refused};
use crate::export::protobuf::{bytes, fixed64, message, string, uint};

/// `SPAN_KIND_INTERNAL`.
const INTERNAL: u64 = 1;

/// One call as a span.
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: &'a str,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    pub thread: &'a str,
}

/// Appends `span` as a `ScopeSpans.spans` entry (field 2): a batch's buffer is a run of these.
pub fn span(out: &mut Vec<u8>, span: &Span) {
    message(out, 2, |s| {
        bytes(s, 1, &span.trace_id);
        bytes(s, 2, &span.span_id);
        if let Some(parent) = &span.parent {
            bytes(s, 4, parent);
        }
        string(s, 5, span.name);
        uint(s, 6, INTERNAL);
        fixed64(s, 7, span.start_unix_ns);
        fixed64(s, 8, span.end_unix_ns);
        key_value(s, 9, "thread.name", &Value::Str(span.thread.to_owned()));
    });
}

/// The request's bytes for a batch (`spans`: a run of [`span`]'s entries), in a buffer of the output
/// memory budget: `Refused` when it has no room for them.
pub fn request(resource: &Attributes, spans: &[u8]) -> Result<OutBuf, Refused> {
    let mut head = Vec::new();
    resource_field(&mut head, resource);
    scope_field(&mut head);
    // The two messages' tags and lengths (at most 11 bytes each) beside the resource and the scope.
    let mut out = OutBuf::new();
    out.write(spans.len() + head.len() + 32, |out| {
        message(out, 1, |rs| {
            resource_field(rs, resource);
            message(rs, 2, |ss| {
                scope_field(ss);
                ss.extend_from_slice(spans);
            });
        });
    })?;
    Ok(out)
}
