//! The `allowed_hosts:` setting: which `Host` and `Origin` names the agent listener (and the admin
//! listener) answer, and the pure check of one request's names against it. The tower layer that
//! refuses what it rejects is `proxy::host`.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, Uri};

/// Which `Host` and `Origin` names the agent listener answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedHosts {
    /// `allowed_hosts: ["*"]`: every name (no rebinding protection; only ever explicit).
    Any,
    List(Vec<HostPattern>),
}

/// One allowed name: a host (lower case; IPv6 in brackets), with a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: String,
    port: Option<u16>,
}

impl HostPattern {
    /// Parses `host` or `host:port` (`localhost`, `10.0.0.2:8686`, `[::1]`, `agent.internal:*`).
    pub fn parse(s: &str) -> Result<HostPattern, String> {
        let (host, port) = split_port(s).ok_or_else(|| format!("{s:?} is not host or host:port"))?;
        let port = match port {
            None | Some("*") => None,
            Some(p) => Some(p.parse::<u16>().map_err(|_| format!("{s:?}: {p:?} is not a port"))?),
        };
        let host = valid_host(host).ok_or_else(|| {
            format!("{s:?}: {host:?} is not a DNS name, an IPv4 address or a bracketed IPv6 address")
        })?;
        Ok(HostPattern { host, port })
    }

    /// `host` as [`host_form`] gives it: the pattern's host is lower case, so equal regardless
    /// of case is equal once lower-cased.
    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host) && self.port.is_none_or(|p| Some(p) == port)
    }
}

impl AllowedHosts {
    /// The default: loopback names on any port.
    pub fn loopback() -> AllowedHosts {
        let list = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|h| HostPattern { host: (*h).into(), port: None })
            .collect();
        AllowedHosts::List(list)
    }

    /// The same names and the address the proxy listens on (unless it is unspecified, 0.0.0.0:
    /// then the names a client uses must be listed).
    pub fn with_listen(mut self, listen: SocketAddr) -> AllowedHosts {
        if let AllowedHosts::List(list) = &mut self {
            list.extend(listen_pattern(listen));
        }
        self
    }

    /// The configured list (`*` alone means any); it replaces the loopback default.
    pub fn from_list(entries: &[String]) -> Result<AllowedHosts, Vec<String>> {
        if entries.iter().any(|e| e == "*") {
            return if entries.len() == 1 {
                Ok(AllowedHosts::Any)
            } else {
                Err(vec!["\"*\" allows every host: give it alone, not with other names".into()])
            };
        }
        let (mut list, mut errors) = (Vec::new(), Vec::new());
        for e in entries {
            match HostPattern::parse(e) {
                Ok(p) => list.push(p),
                Err(m) => errors.push(m),
            }
        }
        if entries.is_empty() {
            errors.push("an empty list would refuse every request: leave the key out for loopback".into());
        }
        if errors.is_empty() {
            Ok(AllowedHosts::List(list))
        } else {
            Err(errors)
        }
    }

    fn allows(&self, authority: &str) -> bool {
        let AllowedHosts::List(list) = self else { return true };
        let Some((host, port)) = split_port(authority) else { return false };
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(p) => Some(p),
                Err(_) => return false,
            },
        };
        let Some(host) = host_form(host) else { return false };
        list.iter().any(|p| p.matches(&host, port))
    }

    /// Why a request is refused, or `None` when its `Host` (or absolute-form authority) and its
    /// `Origin`, if any, name allowed hosts.
    pub fn refusal(&self, uri: &Uri, headers: &HeaderMap) -> Option<String> {
        if *self == AllowedHosts::Any {
            return None;
        }
        let mut hosts = headers.get_all(http::header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() {
            return Some("more than one Host header".into());
        }
        let host = host.and_then(|h| h.to_str().ok());
        match (uri.authority(), host) {
            (None, None) => return Some("no Host header".into()),
            (Some(a), _) if !self.allows(a.as_str()) => {
                return Some(format!("host {:?} is not in allowed_hosts", a.as_str()))
            }
            (_, Some(h)) if !self.allows(h) => return Some(format!("host {h:?} is not in allowed_hosts")),
            _ => {}
        }
        let mut origins = headers.get_all(http::header::ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => None,
            (Some(o), None) => match o.to_str().ok().and_then(origin_authority) {
                Some(a) if self.allows(a) => None,
                _ => Some(format!(
                    "origin {:?} is not in allowed_hosts",
                    String::from_utf8_lossy(o.as_bytes())
                )),
            },
            _ => Some("more than one Origin header".into()),
        }
    }
}

/// The authority of an `Origin` (`http://host[:port]`, RFC 6454 serialisation: no path, no
/// user info); `None` for `null` and anything else.
fn origin_authority(origin: &str) -> Option<&str> {
    let rest = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"))?;
    (!rest.is_empty() && !rest.contains(['/', '@', '?', '#'])).then_some(rest)
}

fn listen_pattern(listen: SocketAddr) -> Option<HostPattern> {
    let host = match listen.ip() {
        ip if ip.is_unspecified() => return None,
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    Some(HostPattern { host, port: Some(listen.port()) })
}

/// `host` and the text after its port colon, if any; IPv6 must be bracketed.
fn split_port(s: &str) -> Option<(&str, Option<&str>)> {
    if s.starts_with('[') {
        let end = s.find(']')?;
        let (host, rest) = s.split_at(end + 1);
        return match rest {
            "" => Some((host, None)),
            r => Some((host, Some(r.strip_prefix(':')?))),
        };
    }
    match s.split_once(':') {
        Some((h, p)) if !p.contains(':') => Some((h, Some(p))),
        Some(_) => None,
        None => Some((s, None)),
    }
}

/// The host, lower-cased, if it is a DNS name, an IPv4 address or a bracketed IPv6 address.
fn valid_host(host: &str) -> Option<String> {
    host_form(host).map(|h| h.to_ascii_lowercase())
}

/// The host as [`valid_host`] reads it, but a name or IPv4 address is borrowed as spelled (in
/// any case): a request's `Host` is checked without a copy.
fn host_form(host: &str) -> Option<std::borrow::Cow<'_, str>> {
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        let ip: std::net::Ipv6Addr = v6.parse().ok()?;
        return Some(format!("[{ip}]").into());
    }
    let labels_ok = !host.is_empty()
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    labels_ok.then_some(host.into())
}
