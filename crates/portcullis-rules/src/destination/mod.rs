//! Where a fetch goes: a URL read as each real kind of fetcher reads it, and `domain:` patterns
//! matched against every reading.
//!
//! A host compared as text is a host read by nobody: `http://2130706433/`, `http://127.1/` and
//! `http://[::ffff:127.0.0.1]/` all connect to 127.0.0.1, and `https://evil.example\@docs.rs/`
//! goes to evil.example for a browser but to docs.rs for curl. So a URL is read twice — by the
//! WHATWG URL Standard (browsers, Node) and by RFC 3986 as curl takes it apart — each reading
//! ending in a canonical [`Host`] (IPv4 numbers as inet_aton reads them, IDNA names). When the
//! readings differ, or there is none, the URL is suspect: a deny or ask on a domain takes it.

mod host;
mod pattern;
mod rfc3986;
mod whatwg;

#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod tests;

use std::fmt;

pub use host::{Embedding, Host};
pub use pattern::{DomainPattern, HostMatch};

/// One reading of a URL: where a fetcher connects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Destination {
    /// Lower-case (`https`).
    pub scheme: String,
    pub host: Host,
    /// The explicit port, else the scheme's default (`None` for a scheme without one).
    pub port: Option<u16>,
}

/// How the fetchers read a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Every reader connects to this destination.
    One(Destination),
    /// The readers disagree: each destination some reader connects to (one only when another
    /// reader cannot read the URL at all).
    Ambiguous(Vec<Destination>),
    /// No reader finds a network host (why, per reader).
    Unparsable(String),
}

/// Reads `text` as a fetch URL. A bare `host`, `host:port` or `host/path` is read as curl reads
/// it, with a guessed scheme (`http`, or `ftp` for `ftp.…` and the like).
///
/// ```
/// use portcullis_rules::destination::{read_url, Host, Reading};
/// let Reading::One(d) = read_url("http://0x7f.1:8080/") else { panic!() };
/// assert_eq!((d.host, d.port), (Host::V4([127, 0, 0, 1].into()), Some(8080)));
/// assert!(matches!(read_url(r"https://evil.example\@docs.rs/"), Reading::Ambiguous(_)));
/// ```
pub fn read_url(text: &str) -> Reading {
    // Both ends lose C0 controls and spaces, as the URL Standard strips them (a stray newline
    // is no second reading); inside the text they stay, for each reader to judge.
    let text = text.trim_matches(|c: char| c <= ' ');
    let readings = [("WHATWG", whatwg::read(text)), ("RFC 3986", rfc3986::read(text))];
    let mut found: Vec<Destination> = Vec::new();
    let mut refused: Vec<String> = Vec::new();
    for (reader, reading) in readings {
        match reading {
            Ok(d) if found.contains(&d) => {}
            Ok(d) => found.push(d),
            Err(why) => refused.push(format!("{reader}: {why}")),
        }
    }
    match (found.len(), refused.is_empty()) {
        (0, _) => Reading::Unparsable(refused.join("; ")),
        (1, true) => Reading::One(found.remove(0)),
        _ => Reading::Ambiguous(found),
    }
}

impl Reading {
    /// Every destination some reader connects to (none when the URL is unparsable).
    pub fn destinations(&self) -> &[Destination] {
        match self {
            Reading::One(d) => std::slice::from_ref(d),
            Reading::Ambiguous(ds) => ds,
            Reading::Unparsable(_) => &[],
        }
    }

    /// Why the URL is suspect, for a decision's reason; `None` when every reader agrees.
    pub fn doubt(&self) -> Option<String> {
        match self {
            Reading::One(_) => None,
            Reading::Ambiguous(ds) if ds.len() == 1 => {
                Some(format!("one kind of fetcher reads it as {} and another cannot read it", ds[0]))
            }
            Reading::Ambiguous(ds) => {
                let each: Vec<String> = ds.iter().map(Destination::to_string).collect();
                Some(format!("it reads differently to different fetchers: as {}", each.join(" or as ")))
            }
            Reading::Unparsable(why) => Some(format!("no fetcher finds a host in it ({why})")),
        }
    }
}

/// `scheme://host:port`.
impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// The length of the scheme when `text` starts with one as curl recognises it: a letter, then
/// letters, digits, `+`, `-`, `.`, then `:/` (so `localhost:8080` is a host and port).
fn scheme_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = bytes.iter().take_while(|&&b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)).count();
    (bytes.get(n) == Some(&b':') && bytes.get(n + 1) == Some(&b'/')).then_some(n)
}

/// curl's guess for a URL without a scheme, from the host's first label.
fn guess_scheme(text: &str) -> &'static str {
    let head = text.char_indices().nth(5).map_or(text, |(i, _)| &text[..i]);
    let lower = head.to_ascii_lowercase();
    ["ftp", "dict", "ldap", "imap", "smtp", "pop3"]
        .into_iter()
        .find(|s| lower.strip_prefix(s).is_some_and(|rest| rest.starts_with('.')))
        .unwrap_or("http")
}

/// The port a scheme connects to when the URL names none.
fn default_port(scheme: &str) -> Option<u16> {
    Some(match scheme {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        "ftp" => 21,
        _ => return None,
    })
}

/// `%XX` decoded, a `%` not followed by two hex digits kept (as curl does); the bytes must be
/// UTF-8.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: Option<&u8>| b.and_then(|&b| (b as char).to_digit(16));
        match (bytes[i], hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} decodes to bytes that are not UTF-8"))
}
