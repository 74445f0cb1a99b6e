//! OpenTelemetry's OTLP in its protobuf encoding, as `PERFGRAPH_OTLP` posts it: metrics by section
//! ([`metrics`], an `ExportMetricsServiceRequest`) and calls as spans ([`spans`], an
//! `ExportTraceServiceRequest`), both under this process's resource ([`resource`]). Pure: plain data in,
//! the request's bytes out; written with the hand-made encoder of [`protobuf`](super::protobuf) (the
//! messages and field numbers of opentelemetry-proto's `.proto` files, v1).

pub(crate) mod metrics;
pub(crate) mod resource;
pub(crate) mod spans;

use super::protobuf::{message, string, uint};

/// An attribute's value: OTLP's `AnyValue` as we use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    Int(i64),
}

/// Attributes, in order.
pub type Attributes = Vec<(String, Value)>;

/// A `KeyValue` in field `field` of the message being written.
pub(crate) fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    message(out, field, |kv| {
        string(kv, 1, key);
        message(kv, 2, |any| match value {
            Value::Str(s) => string(any, 1, s),
            Value::Int(i) => uint(any, 3, *i as u64),
        });
    });
}

/// A `Resource` (field 1 of `ResourceMetrics` and `ResourceSpans`).
pub(crate) fn resource_field(out: &mut Vec<u8>, attributes: &Attributes) {
    message(out, 1, |r| {
        for (key, value) in attributes {
            key_value(r, 1, key, value);
        }
    });
}

/// The `InstrumentationScope` (field 1 of `ScopeMetrics` and `ScopeSpans`): perfgraph and its version.
pub(crate) fn scope_field(out: &mut Vec<u8>) {
    message(out, 1, |s| {
        string(s, 1, "perfgraph");
        string(s, 2, env!("CARGO_PKG_VERSION"));
    });
}
