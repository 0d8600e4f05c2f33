//! `domain:` patterns: a host name (and its subdomains), `*.name` (subdomains only) or an IP
//! address (in every spelling), matched against every reading of a URL.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::host::{Embedding, Host};
use super::Reading;

/// The text after `domain:` in a rule, compiled.
///
/// ```
/// use portcullis_rules::destination::{read_url, DomainPattern, HostMatch};
/// let p = DomainPattern::parse("127.0.0.1").unwrap();
/// assert_eq!(p.matches(&read_url("http://2130706433:8080/")), HostMatch::Yes);
/// let docs = DomainPattern::parse("docs.rs").unwrap();
/// assert_eq!(docs.matches(&read_url("https://api.docs.rs/x")), HostMatch::Yes);
/// assert_eq!(docs.matches(&read_url("https://docs.rs.evil.example/")), HostMatch::No);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    target: Target,
}

/// Whether a pattern matches a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMatch {
    /// Every fetcher connects to a matching host.
    Yes,
    /// No fetcher does.
    No,
    /// Some fetcher may (the readings disagree, there is none, or the address is reached only
    /// through a translator or a resolver): enough for a deny or an ask, never for an allow.
    Possibly,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A DNS name; `subdomains_only` for `*.name`.
    Name {
        name: String,
        subdomains_only: bool,
    },
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

impl DomainPattern {
    /// `docs.rs`, `*.docs.rs`, `bücher.de`, `127.0.0.1` (or any inet_aton spelling of it),
    /// `[::1]` or `::1`. An IPv4-mapped IPv6 address is its IPv4 address. No port, path or
    /// other wildcard.
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let text = text.trim();
        let (subdomains_only, rest) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        if rest.contains('*') {
            return Err(format!("{text:?}: '*' is only allowed as a leading '*.'"));
        }
        let bracketed = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
        let host = match (bracketed, rest.parse::<Ipv6Addr>()) {
            (Some(inner), _) if !inner.contains('%') => Host::from_bracketed(inner)?,
            (Some(_), _) => return Err(format!("{text:?}: a pattern names no IPv6 zone")),
            (None, Ok(a)) => Host::V6(a),
            (None, Err(_)) => Host::from_name(rest).map_err(|e| format!("{text:?}: {e}"))?,
        };
        let target = match host {
            Host::Domain(name) => Target::Name { name, subdomains_only },
            _ if subdomains_only => return Err(format!("{text:?}: an IP address has no subdomains")),
            Host::V4(a) => Target::V4(a),
            Host::V6(a) => a.to_ipv4_mapped().map_or(Target::V6(a), Target::V4),
        };
        Ok(DomainPattern { target })
    }

    /// One reading: yes or no. Readings that disagree: yes when every one matches, else
    /// possibly. No reading: possibly.
    pub fn matches(&self, reading: &Reading) -> HostMatch {
        match reading {
            Reading::One(d) => self.matches_host(&d.host),
            Reading::Ambiguous(ds) if ds.iter().all(|d| self.matches_host(&d.host) == HostMatch::Yes) => {
                HostMatch::Yes
            }
            Reading::Ambiguous(_) | Reading::Unparsable(_) => HostMatch::Possibly,
        }
    }

    /// A name matches itself and its subdomains (`*.name` only the latter); an address matches
    /// itself, its IPv4-mapped IPv6 form, possibly its translated IPv6 forms, and (a loopback
    /// address) possibly `localhost`, which RFC 6761 and curl send to loopback.
    pub fn matches_host(&self, host: &Host) -> HostMatch {
        let yes = |b: bool| if b { HostMatch::Yes } else { HostMatch::No };
        match (&self.target, host) {
            (Target::Name { name, subdomains_only }, Host::Domain(h)) => {
                let sub = h.strip_suffix(name.as_str()).is_some_and(|head| head.ends_with('.'));
                yes(sub || (!subdomains_only && h == name))
            }
            (Target::Name { .. }, _) => HostMatch::No,
            (Target::V4(a), Host::V4(b)) => yes(a == b),
            (Target::V6(a), Host::V6(b)) => yes(a == b),
            (Target::V4(a), Host::V6(_)) => match host.embedded_v4() {
                Some((b, Embedding::Mapped)) if b == *a => HostMatch::Yes,
                Some((b, Embedding::Translated)) if b == *a => HostMatch::Possibly,
                _ => HostMatch::No,
            },
            (Target::V6(_), Host::V4(_)) => HostMatch::No,
            (Target::V4(a), Host::Domain(h)) => localhost(h, a.is_loopback()),
            (Target::V6(a), Host::Domain(h)) => localhost(h, a.is_loopback()),
        }
    }
}

fn localhost(name: &str, loopback: bool) -> HostMatch {
    if loopback && (name == "localhost" || name.ends_with(".localhost")) {
        HostMatch::Possibly
    } else {
        HostMatch::No
    }
}

/// The canonical spelling: `docs.rs`, `*.docs.rs`, `127.0.0.1`, `[::1]`.
impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Name { name, subdomains_only: true } => write!(f, "*.{name}"),
            Target::Name { name, .. } => f.write_str(name),
            Target::V4(a) => write!(f, "{a}"),
            Target::V6(a) => write!(f, "[{a}]"),
        }
    }
}
