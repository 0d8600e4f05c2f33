//! A plain HTTP tool's path, normalised the way the tool server will read it (RFC 3986 §6.2.2
//! and §5.2.4), so the rule that decides the call names what actually runs.
//!
//! The proxy forwards exactly the normalised path, so the rule name and the upstream's path are
//! the same bytes. What servers read in more than one way is refused rather than guessed:
//!
//! | spelling | why it is refused |
//! | --- | --- |
//! | `%2F` (`/`), `%5C` and raw `\` | a server that decodes before splitting (or IIS, for `\`) sees another path |
//! | `%25` | double encoding: a server that decodes twice sees `%2e`, `%2f`, … |
//! | `%00`, controls (raw or encoded), bytes outside RFC 3986 `pchar` | truncation and parser differentials |
//! | `;` and `%3B` | path parameters: Tomcat, Jetty and Spring strip `;…` from a segment (`/admin;x`, `/..;/admin`) |
//! | an empty segment (`//`) | nginx and others merge slashes, so `/a//b` runs `/a/b` |
//! | a `..` above the upstream's root | it would leave the tool's namespace |
//! | a malformed escape (`%4`, `%zz`) | servers disagree on what it means |
//!
//! Everything else is made canonical: escapes of unreserved characters (`%61`, `%7e`) are
//! decoded, other escapes are upper-cased (`%c3` → `%C3`), and dot segments — however spelled
//! (`.`, `%2e`, `.%2E`, `%2e%2e`) — are resolved.

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path encodes a character servers read in more than one way ({0}); it was not sent")]
    Ambiguous(&'static str),
    #[error("the path has an empty segment (//), which servers may merge; it was not sent")]
    EmptySegment,
    #[error("the path climbs above the upstream's root (..); it was not sent")]
    AboveRoot,
    #[error("the path has a malformed percent-escape; it was not sent")]
    BadEscape,
}

/// Normalises `raw`, a path below an upstream's root starting with `/` (the query already split
/// off). The result starts with `/` and is what is matched and forwarded.
pub fn normalise(raw: &str) -> Result<String, PathError> {
    let decoded = decode_unreserved(raw)?;
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = decoded.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    // A trailing dot segment leaves a trailing slash behind it (RFC 3986 §5.2.4: `/a/.` → `/a/`).
    let mut trailing_slash = false;
    for (i, seg) in segments.iter().enumerate() {
        trailing_slash = false;
        match *seg {
            "." => trailing_slash = true,
            ".." => {
                if out.pop().is_none() {
                    return Err(PathError::AboveRoot);
                }
                trailing_slash = true;
            }
            "" if i == last => trailing_slash = true,
            "" => return Err(PathError::EmptySegment),
            s => out.push(s),
        }
    }
    let mut path = String::with_capacity(decoded.len());
    for s in &out {
        path.push('/');
        path.push_str(s);
    }
    if trailing_slash || path.is_empty() {
        path.push('/');
    }
    Ok(path)
}

/// Decodes escapes of unreserved characters, upper-cases the rest, and refuses what is
/// ambiguous (see the module table).
fn decode_unreserved(raw: &str) -> Result<String, PathError> {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(PathError::BadEscape)?;
            let (hi, lo) = (hex_val(hex[0]), hex_val(hex[1]));
            let (Some(hi), Some(lo)) = (hi, lo) else { return Err(PathError::BadEscape) };
            let c = hi << 4 | lo;
            match c {
                b'/' => return Err(PathError::Ambiguous("an encoded /")),
                b'\\' => return Err(PathError::Ambiguous("an encoded \\")),
                b'%' => return Err(PathError::Ambiguous("an encoded %, a double encoding")),
                b';' => return Err(PathError::Ambiguous("an encoded ;, a path parameter")),
                0 => return Err(PathError::Ambiguous("an encoded NUL")),
                c if c < 0x20 || c == 0x7f => {
                    return Err(PathError::Ambiguous("an encoded control character"))
                }
                c if is_unreserved(c) => out.push(c as char),
                c => {
                    out.push('%');
                    out.push_str(&format!("{c:02X}"));
                }
            }
            i += 3;
            continue;
        }
        match b {
            b'\\' => return Err(PathError::Ambiguous("a \\")),
            b';' => return Err(PathError::Ambiguous("a ;, a path parameter")),
            b'/' => out.push('/'),
            b if is_unreserved(b) || is_pchar_delim(b) => out.push(b as char),
            _ => return Err(PathError::Ambiguous("a character outside RFC 3986 pchar")),
        }
        i += 1;
    }
    Ok(out)
}

fn hex_val(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// RFC 3986 §2.3.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// The sub-delims and `:` `@` a `pchar` may hold raw (RFC 3986 §3.3), less `;` (refused above).
fn is_pchar_delim(b: u8) -> bool {
    matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b'=' | b':' | b'@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_the_same_path_normalise_to_it() {
        for (raw, want) in [
            ("/admin/delete", "/admin/delete"),
            ("/%61dmin/delete", "/admin/delete"),
            ("/%41dmin", "/Admin"),
            ("/./admin", "/admin"),
            ("/x/../admin", "/admin"),
            ("/%2e/admin", "/admin"),
            ("/x/.%2e/admin", "/admin"),
            ("/x/%2e%2e/admin", "/admin"),
            ("/x/%2E./admin", "/admin"),
            ("/a/%7euser", "/a/~user"),
            ("/a/%7Euser", "/a/~user"),
            ("/caf%c3%a9", "/caf%C3%A9"),
            ("/a%20b", "/a%20b"),
            ("/admin/", "/admin/"),
            ("/admin/.", "/admin/"),
            ("/admin/x/..", "/admin/"),
            ("/", "/"),
            ("", "/"),
            ("/v1:run@x", "/v1:run@x"),
            ("/...", "/..."),
            ("/.hidden", "/.hidden"),
        ] {
            assert_eq!(normalise(raw).as_deref(), Ok(want), "{raw}");
        }
    }

    #[test]
    fn ambiguous_spellings_are_refused() {
        for raw in [
            "/.%2fadmin",
            "/.%2Fadmin",
            "/x%2f..%2fadmin",
            "/x%5cadmin",
            "/x\\admin",
            "/%252e%252e/admin",
            "/%25",
            "/admin%00",
            "/admin%0a",
            "/admin%7f",
            "/admin;x",
            "/..;/admin",
            "/admin%3bx",
            "/admin%3Bx",
            "/x//admin",
            "//admin",
            "/..",
            "/../admin",
            "/x/../../admin",
            "/%2e%2e/admin",
            "/.%2e/admin",
            "/%2E%2E/x/../admin",
            "/admin%",
            "/admin%4",
            "/admin%zz",
            "/admin\u{7f}",
            "/adm in",
            "/admin\"",
            "/admín",
            "/a|b",
        ] {
            assert!(normalise(raw).is_err(), "{raw} must be refused, got {:?}", normalise(raw));
        }
    }

    #[test]
    fn a_normalised_path_normalises_to_itself() {
        for raw in ["/%61dmin/./x/../y/", "/caf%c3%a9/%7e", "/a/b/c", "/x/.%2e/admin"] {
            let once = normalise(raw).unwrap();
            assert_eq!(normalise(&once).unwrap(), once, "{raw}");
        }
    }
}
