//! The WHATWG URL Standard's reading (the `url` crate): browsers, Node's `fetch`, and the
//! clients that follow the standard.

use url::Url;

use super::{default_port, guess_scheme, host::Host, percent_decode, scheme_len, Destination};

/// Schemes the standard parses as hierarchical with a real host (`\` is `/`, IPv4 numbers and
/// IDNA are canonicalised).
const SPECIAL: &[&str] = &["http", "https", "ws", "wss", "ftp", "file"];

pub(super) fn read(text: &str) -> Result<Destination, String> {
    let with_scheme = scheme_len(text).is_some();
    let url = match Url::parse(text) {
        // `http:docs.rs` has a special scheme without slashes: the standard reads host docs.rs.
        Ok(url) if with_scheme || SPECIAL.contains(&url.scheme()) => url,
        Err(e) if with_scheme => return Err(e.to_string()),
        // A bare `host`, `host:port` (which the standard would take for a scheme) or
        // `user@host/path`: read as curl does, with the scheme it guesses.
        _ => Url::parse(&format!("{}://{text}", guess_scheme(text))).map_err(|e| e.to_string())?,
    };
    if url.scheme() == "file" {
        return Err("a file: URL names a file, not a network host".into());
    }
    let host = match url.host() {
        None => return Err("no host".into()),
        Some(url::Host::Ipv4(a)) => Host::V4(a),
        Some(url::Host::Ipv6(a)) => Host::V6(a),
        // A special scheme's name is already IDNA-mapped; another scheme's is opaque, still
        // percent-encoded and in the case it was written: both end up read as a resolver would.
        Some(url::Host::Domain(name)) => Host::from_name(&percent_decode(name)?)?,
    };
    let scheme = url.scheme().to_owned();
    let port = url.port().or_else(|| default_port(&scheme));
    Ok(Destination { scheme, host, port })
}
