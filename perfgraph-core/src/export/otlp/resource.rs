//! The resource every OTLP request carries: which service and process sent it.
//!
//! `service.name` is `OTEL_SERVICE_NAME`, else a `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, else the
//! program's name; then `service.instance.id` (`<host>:<pid>`, unique per process), `host.name`,
//! `process.pid`, `process.executable.name`, `perfgraph.rank` where a launcher set a rank, and the
//! `telemetry.sdk.*` trio. `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, values percent-encoded, as the
//! OpenTelemetry specification defines it) adds its own and overrides ours.

use super::{Attributes, Value};

/// Who this process is.
#[derive(Debug, Clone)]
pub struct Who<'a> {
    pub program: &'a str,
    pub pid: u32,
    pub host: &'a str,
    /// The rank a launcher gave (`None` without a launcher).
    pub rank: Option<u32>,
}

/// The resource's attributes for `who`, with `OTEL_SERVICE_NAME` (`service_name`) and
/// `OTEL_RESOURCE_ATTRIBUTES` (`extra`) applied; and the entries of `extra` that are not `key=value`
/// (left out).
pub fn attributes(
    who: &Who,
    service_name: Option<&str>,
    extra: Option<&str>,
) -> (Attributes, Vec<String>) {
    let mut out: Attributes = vec![
        ("service.name".into(), Value::Str(who.program.into())),
        (
            "service.instance.id".into(),
            Value::Str(format!("{}:{}", who.host, who.pid)),
        ),
        ("host.name".into(), Value::Str(who.host.into())),
        ("process.pid".into(), Value::Int(who.pid as i64)),
        (
            "process.executable.name".into(),
            Value::Str(who.program.into()),
        ),
    ];
    if let Some(rank) = who.rank {
        out.push(("perfgraph.rank".into(), Value::Int(rank as i64)));
    }
    out.extend([
        ("telemetry.sdk.name".into(), Value::Str("perfgraph".into())),
        ("telemetry.sdk.language".into(), Value::Str("rust".into())),
        (
            "telemetry.sdk.version".into(),
            Value::Str(env!("CARGO_PKG_VERSION").into()),
        ),
    ]);
    let mut bad = Vec::new();
    for entry in extra
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let parsed = entry
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(k, _)| !k.is_empty())
            .and_then(|(k, v)| Some((k.to_owned(), percent_decoded(v)?)));
        match parsed {
            Some((key, value)) => set(&mut out, key, Value::Str(value)),
            None => bad.push(entry.to_owned()),
        }
    }
    if let Some(name) = service_name.map(str::trim).filter(|n| !n.is_empty()) {
        set(&mut out, "service.name".into(), Value::Str(name.into()));
    }
    (out, bad)
}

/// Sets `key`, in its place if it is there, else at the end.
fn set(attributes: &mut Attributes, key: String, value: Value) {
    match attributes.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => attributes.push((key, value)),
    }
}

/// `%XX` escapes decoded; `None` for a bad escape or bytes that are not UTF-8.
fn percent_decoded(v: &str) -> Option<String> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(rank: Option<u32>) -> Who<'static> {
        Who {
            program: "solver",
            pid: 42,
            host: "node7",
            rank,
        }
    }

    fn get<'a>(a: &'a Attributes, key: &str) -> Option<&'a Value> {
        a.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[test]
    fn the_program_host_pid_and_rank_name_the_process() {
        let (a, bad) = attributes(&who(Some(3)), None, None);
        assert!(bad.is_empty());
        assert_eq!(get(&a, "service.name"), Some(&Value::Str("solver".into())));
        assert_eq!(get(&a, "host.name"), Some(&Value::Str("node7".into())));
        assert_eq!(get(&a, "process.pid"), Some(&Value::Int(42)));
        assert_eq!(get(&a, "perfgraph.rank"), Some(&Value::Int(3)));
        assert_eq!(
            get(&a, "service.instance.id"),
            Some(&Value::Str("node7:42".into()))
        );
        let (a, _) = attributes(&who(None), None, None);
        assert_eq!(get(&a, "perfgraph.rank"), None);
    }

    #[test]
    fn otel_variables_add_and_override_with_service_name_first() {
        let (a, bad) = attributes(
            &who(None),
            None,
            Some("deployment.environment=prod, service.name=from%20attrs,broken,=x,bad=%zz"),
        );
        assert_eq!(
            get(&a, "deployment.environment"),
            Some(&Value::Str("prod".into()))
        );
        assert_eq!(
            get(&a, "service.name"),
            Some(&Value::Str("from attrs".into()))
        );
        assert_eq!(bad, ["broken", "=x", "bad=%zz"]);
        let (a, _) = attributes(&who(None), Some("api"), Some("service.name=other"));
        assert_eq!(get(&a, "service.name"), Some(&Value::Str("api".into())));
    }
}
