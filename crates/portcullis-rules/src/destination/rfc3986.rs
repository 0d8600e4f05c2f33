//! The RFC 3986 reading, as curl and other non-browser clients take a URL apart: the authority
//! runs to the first `/`, `?` or `#` (a backslash is an ordinary byte), userinfo to its last
//! `@`, and the host is percent-decoded, then read as a resolver reads it.

use super::{default_port, guess_scheme, host::Host, percent_decode, scheme_len, Destination};

pub(super) fn read(text: &str) -> Result<Destination, String> {
    let (scheme, rest) = match scheme_len(text) {
        Some(n) => {
            // curl takes one to three slashes after the colon (`http:/x` and `http:///x` are x).
            let after = &text[n + 1..];
            let slashes = after.bytes().take_while(|&b| b == b'/').count();
            if slashes > 3 {
                return Err("more than three slashes after the scheme".into());
            }
            (text[..n].to_ascii_lowercase(), &after[slashes..])
        }
        None => (guess_scheme(text).to_owned(), text),
    };
    if scheme == "file" {
        return Err("a file: URL names a file, not a network host".into());
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // curl cuts userinfo at the first `@` and then refuses an `@` in the host; Go, Python and
    // `http::Uri` cut at the last. The last is where every one of them that connects connects.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    if host_port.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err("a control character or space in the host".into());
    }
    let (host_text, port_text) = split_port(host_port)?;
    if host_text.is_empty() {
        return Err("no host".into());
    }
    let port = match port_text {
        None | Some("") => default_port(&scheme),
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse().map_err(|_| format!("port {p} is out of range"))?)
        }
        Some(p) => return Err(format!("port {p:?} is not a number")),
    };
    // As curl does: the brackets are found on the raw text, the port split too, and only then
    // is the host decoded (so `%5B%3A%3A1%5D` is `[::1]`).
    let decoded = percent_decode(host_text)?;
    let host = match decoded.strip_prefix('[') {
        Some(inner) => match inner.strip_suffix(']') {
            Some(inner) => Host::from_bracketed(inner)?,
            None => return Err(format!("{decoded:?}: an IPv6 literal must end with ']'")),
        },
        None => Host::from_name(&decoded)?,
    };
    Ok(Destination { scheme, host, port })
}

/// `host:port`, `[v6]:port`, `host` or `[v6]`.
fn split_port(host_port: &str) -> Result<(&str, Option<&str>), String> {
    if host_port.starts_with('[') {
        let Some(close) = host_port.find(']') else {
            return Err("an IPv6 literal without ']'".into());
        };
        let (host, after) = host_port.split_at(close + 1);
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("{after:?} follows an IPv6 literal")),
        };
    }
    Ok(match host_port.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (host_port, None),
    })
}
