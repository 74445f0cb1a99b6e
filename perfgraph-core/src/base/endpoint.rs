//! An OTLP collector's address as `PERFGRAPH_OTLP` gives it: `http://host[:port][/path]`, the base URL the
//! signal paths (`/v1/metrics`, `/v1/traces`) are appended to, as OpenTelemetry's
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is. Plain HTTP only: perfgraph carries no TLS stack (a collector on the
//! same machine or network is the usual first hop; it forwards over TLS).

/// A parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The host as written (a name, an IPv4 address, or an IPv6 address without its brackets).
    pub host: String,
    /// The port (80 when the URL names none, as for any `http://` URL).
    pub port: u16,
    /// The path before the signal's (`""` or `/prefix`, without a trailing `/`).
    pub prefix: String,
}

impl Endpoint {
    /// Parses `http://host[:port][/path]`; `None` for anything else (another scheme, a user part, a
    /// query, an empty host, a bad port).
    pub fn parse(url: &str) -> Option<Endpoint> {
        let rest = url.strip_prefix("http://")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@')
            || path.contains(['?', '#'])
            || path.contains(char::is_whitespace)
        {
            return None;
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (host, after) = v6.split_once(']')?;
            host.parse::<std::net::Ipv6Addr>().ok()?;
            (host, after)
        } else {
            match authority.find(':') {
                Some(i) => authority.split_at(i),
                None => (authority, ""),
            }
        };
        let port = match port {
            "" => 80,
            p => p
                .strip_prefix(':')?
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)?,
        };
        let name_ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':');
        if host.is_empty() || !host.chars().all(name_ok) {
            return None;
        }
        Some(Endpoint {
            host: host.to_owned(),
            port,
            prefix: path.trim_end_matches('/').to_owned(),
        })
    }

    /// The `Host` header's value: `host:port`, an IPv6 address in brackets.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The host as an IP address, when it is one (else a name to resolve).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub fn ip(&self) -> Option<std::net::IpAddr> {
        self.host.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_urls_parse_with_their_port_and_prefix() {
        let e = Endpoint::parse("http://127.0.0.1:4318").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.prefix.as_str()),
            ("127.0.0.1", 4318, "")
        );
        let e = Endpoint::parse("http://collector/otlp/").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.prefix.as_str()),
            ("collector", 80, "/otlp")
        );
        assert_eq!(e.authority(), "collector:80");
        let e = Endpoint::parse("http://[::1]:4318/").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("::1", 4318));
        assert_eq!(e.authority(), "[::1]:4318");
        assert!(e.ip().is_some());
        for bad in [
            "https://host:4318",
            "host:4318",
            "http://",
            "http://:4318",
            "http://host:0",
            "http://host:99999",
            "http://host:x",
            "http://user@host",
            "http://host/a?b",
            "http://[zz]:1",
            "http://ho st",
        ] {
            assert_eq!(Endpoint::parse(bad), None, "{bad}");
        }
    }
}
