//! Resource URIs as Layer 1 reads them: what `resources/read` or `resources/subscribe` of a URI
//! asks the server to touch.
//!
//! A `file:` URI is a read of its path, an `http:`/`https:` URI a fetch of it, and any other
//! scheme is the URI itself, for rules that name the method (`mcp__fs__resources/read(memo://*)`).
//! Servers do not agree on how a URI becomes a path, so a file URI is judged under every reading
//! a server may give it and the worst decides: the path percent-decoded (Python's `unquote`,
//! Node's `fileURLToPath`) and as written (a server that never decodes), with the query and
//! fragment cut (a URL parser) and kept (a server that strips `file://`), with `\` as written and
//! as `/` (the WHATWG parser's reading of a special scheme). What no reading places — a file URI
//! naming another host, control characters or spaces a URL parser would silently drop — is
//! [`Subject::Unplaced`].

use super::subject::{Access, Subject};

/// The subject of a request naming `uri`.
pub fn subject(uri: &str) -> Subject {
    if let Some(c) = uri.chars().find(|c| c.is_ascii_control() || *c == ' ') {
        return unplaced(format!(
            "the resource URI {uri:?} holds {c:?}, which URL parsers drop or read differently"
        ));
    }
    let Some((scheme, rest)) = scheme(uri) else {
        // Not an absolute URI: a lenient server may take it for a path.
        return Subject::Readings(vec![
            Subject::File { path: uri.to_owned(), access: Access::Read },
            Subject::Generic { args: uri.to_owned() },
        ]);
    };
    match scheme.to_ascii_lowercase().as_str() {
        "file" => file(uri, rest),
        "http" | "https" => web(uri, rest),
        _ => Subject::Generic { args: uri.to_owned() },
    }
}

fn unplaced(reason: String) -> Subject {
    Subject::Unplaced { reason }
}

/// The scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`) and what follows `:`.
fn scheme(uri: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

/// An `http:`/`https:` URI whose host every fetcher reads the same way: `//`, then a plain DNS
/// name, a dotted-quad IPv4 address or a bracketed IPv6 one, and an optional numeric port. What
/// a WHATWG parser would read differently from the rules' host matching — userinfo (`@`),
/// escapes, `\`, a missing `//`, a name ending in a number that is not a dotted quad
/// (`2130706433`, `0x7f.1`, which fetchers read as IPv4), non-ASCII names — is unplaced.
fn web(uri: &str, rest: &str) -> Subject {
    let fetch = || Subject::Fetch { url: uri.to_owned() };
    let refuse = |why: &str| {
        unplaced(format!("the resource URL {uri:?} {why}, which fetchers read in more than one way"))
    };
    let Some(after) = rest.strip_prefix("//") else { return refuse("has no `//` before its host") };
    let authority = &after[..after.find(['/', '?', '#']).unwrap_or(after.len())];
    if authority.contains(['@', '\\', '%']) {
        return refuse("has userinfo, an escape or a `\\` in its authority");
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((addr, port)) if addr.parse::<std::net::Ipv6Addr>().is_ok() && numeric_port(port) => {
                return fetch()
            }
            _ => return refuse("has a malformed IPv6 host"),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) if numeric_port(&format!(":{port}")) => host,
            Some(_) => return refuse("has a malformed port"),
            None => authority,
        },
    };
    let plain = !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    if !plain {
        return refuse("names a host that is not a plain ASCII name or address");
    }
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    let numeric = !last.is_empty()
        && (last.chars().all(|c| c.is_ascii_digit())
            || last
                .strip_prefix("0x")
                .or_else(|| last.strip_prefix("0X"))
                .is_some_and(|h| h.chars().all(|c| c.is_ascii_hexdigit())));
    if numeric && host.parse::<std::net::Ipv4Addr>().is_err() {
        return refuse("names a host ending in a number that is not a dotted-quad address");
    }
    fetch()
}

/// `""` or `:` followed by digits.
fn numeric_port(port: &str) -> bool {
    port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// A `file:` URI (RFC 8089): `file:///p`, `file://localhost/p`, `file:/p`, `file:p`.
fn file(uri: &str, rest: &str) -> Subject {
    // The WHATWG parser reads `\` as `/` in a special scheme, the authority's included.
    let slashed = rest.replace('\\', "/");
    let (authority, path) = match slashed.strip_prefix("//") {
        Some(after) => {
            let end = after.find(['/', '?', '#']).unwrap_or(after.len());
            (&after[..end], &after[end..])
        }
        None => ("", slashed.as_str()),
    };
    if !authority.is_empty() && !authority.eq_ignore_ascii_case("localhost") {
        return unplaced(format!(
            "the file URI {uri:?} names the host {authority:?}; which file that is cannot be told"
        ));
    }
    // The same path as written (`\` kept), for a server that does not read `\` as a separator.
    let written = match rest.strip_prefix("//") {
        Some(after) => after.get(authority.len()..).unwrap_or(path),
        None => rest,
    };
    let mut readings: Vec<String> = Vec::new();
    for p in [path, written] {
        let cut = &p[..p.find(['?', '#']).unwrap_or(p.len())];
        for reading in [decode(cut), cut.to_owned(), p.to_owned()] {
            if !readings.contains(&reading) {
                readings.push(reading);
            }
        }
    }
    let mut subjects: Vec<Subject> =
        readings.into_iter().map(|path| Subject::File { path, access: Access::Read }).collect();
    match subjects.len() {
        1 => subjects.remove(0),
        _ => Subject::Readings(subjects),
    }
}

/// Percent-decoding as Python's `unquote` does it: valid escapes become bytes, anything else is
/// kept, and bytes that are not UTF-8 become U+FFFD.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(uri: &str) -> Vec<String> {
        let all = match subject(uri) {
            Subject::Readings(v) => v,
            one => vec![one],
        };
        all.into_iter()
            .map(|s| match s {
                Subject::File { path, access: Access::Read } => path,
                other => panic!("{uri}: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn every_spelling_of_a_file_uri_is_read_as_the_paths_servers_make_of_it() {
        for (uri, want) in [
            ("file:///etc/shadow", vec!["/etc/shadow"]),
            ("file://localhost/etc/shadow", vec!["/etc/shadow"]),
            ("file://LocalHost/etc/shadow", vec!["/etc/shadow"]),
            ("FILE:///etc/shadow", vec!["/etc/shadow"]),
            ("file:/etc/shadow", vec!["/etc/shadow"]),
            ("file:////etc/shadow", vec!["//etc/shadow"]),
            ("file:///etc/../etc/shadow", vec!["/etc/../etc/shadow"]),
            ("file:///tmp/%2e%2e/etc/shadow", vec!["/tmp/../etc/shadow", "/tmp/%2e%2e/etc/shadow"]),
            ("file:///%65tc/shadow", vec!["/etc/shadow", "/%65tc/shadow"]),
            (
                "file:///tmp/x%2F..%2F..%2Fetc/shadow",
                vec!["/tmp/x/../../etc/shadow", "/tmp/x%2F..%2F..%2Fetc/shadow"],
            ),
            ("file:///etc/shadow?x#y", vec!["/etc/shadow", "/etc/shadow?x#y"]),
            ("file:///tmp/a%zz", vec!["/tmp/a%zz"]),
            ("file:\\\\\\etc\\shadow", vec!["/etc/shadow", "\\\\\\etc\\shadow"]),
            ("file:etc/shadow", vec!["etc/shadow"]),
        ] {
            assert_eq!(paths(uri), want, "{uri}");
        }
    }

    #[test]
    fn what_no_reading_places_is_unplaced() {
        for uri in [
            "file://evil.example/etc/shadow",
            "file://127.0.0.1/etc/shadow",
            "file://user@localhost/etc/shadow",
            " file:///etc/shadow",
            "file:///etc/sha\tdow",
            "file:///etc/shadow\n",
            "https://example.com/\u{7f}",
        ] {
            assert!(matches!(subject(uri), Subject::Unplaced { .. }), "{uri:?}");
        }
    }

    #[test]
    fn web_uris_a_fetcher_reads_another_way_are_unplaced() {
        for uri in [
            "https://attacker%2Eexample/x",
            "https://user@attacker.example/x",
            "https://good.example\\@attacker.example/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://010.0.0.1/",
            "https:attacker.example/x",
            "https:/attacker.example/x",
            "https:\\\\attacker.example/x",
            "https://b\u{fc}cher.example/",
            "https://attacker.example:x/",
            "http://[::1/",
            "https:///x",
        ] {
            assert!(matches!(subject(uri), Subject::Unplaced { .. }), "{uri}: {:?}", subject(uri));
        }
        for uri in [
            "https://example.com",
            "https://example.com:8443/a?b#c",
            "http://127.0.0.1:8080/",
            "http://[::1]:80/",
            "https://example.com./",
            "https://a-b.example/x@y",
        ] {
            assert_eq!(subject(uri), Subject::Fetch { url: uri.into() }, "{uri}");
        }
    }

    #[test]
    fn web_uris_are_fetches_and_other_schemes_are_the_uri_itself() {
        assert_eq!(subject("https://example.com/a"), Subject::Fetch { url: "https://example.com/a".into() });
        assert_eq!(subject("HTTP://example.com/"), Subject::Fetch { url: "HTTP://example.com/".into() });
        assert_eq!(subject("memo://insights"), Subject::Generic { args: "memo://insights".into() });
        assert_eq!(subject("test://static/1"), Subject::Generic { args: "test://static/1".into() });
        assert!(matches!(subject("/etc/shadow"), Subject::Readings(_)), "no scheme: maybe a path");
        assert!(matches!(subject("1x://y"), Subject::Readings(_)), "not a scheme");
    }

    #[test]
    fn decoding_never_panics_and_keeps_what_is_not_an_escape() {
        for s in ["%", "%4", "%%41", "a%C3%A9", "%ff%fe", "%e2%82"] {
            let _ = decode(s);
        }
        assert_eq!(decode("%%41"), "%A");
        assert_eq!(decode("a%C3%A9"), "aé");
        assert_eq!(decode("%ff"), "\u{fffd}");
    }
}
