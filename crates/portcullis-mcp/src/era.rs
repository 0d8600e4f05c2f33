//! MCP protocol eras and the modern era's routing-header contract.
//!
//! Legacy eras (2025-03-26 … 2025-11-25) negotiate a version once in `initialize` and carry an
//! `Mcp-Session-Id`. The modern era (2026-07-28) is stateless: every request carries its version in
//! `params._meta` and mirrors method and name into `Mcp-Method` / `Mcp-Name` headers, which
//! infrastructure may route on. A header that disagrees with the body is how a request smuggles
//! one call past a router and another into the server, so it is refused before the upstream.

use http::{HeaderMap, HeaderName};

use super::jsonrpc::{AnyParams, Message};

pub const HEADER_PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub const HEADER_METHOD: &str = "mcp-method";
pub const HEADER_NAME: &str = "mcp-name";
pub const HEADER_SESSION: &str = "mcp-session-id";

/// The protocol revisions portcullis knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

/// Which request model a version belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, sessions, GET streams.
    Legacy,
    /// Stateless per-request envelope, routing headers, `resultType`.
    Modern,
}

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        Some(match s {
            "2024-11-05" => Version::V2024_11_05,
            "2025-03-26" => Version::V2025_03_26,
            "2025-06-18" => Version::V2025_06_18,
            "2025-11-25" => Version::V2025_11_25,
            "2026-07-28" => Version::V2026_07_28,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2024_11_05 => "2024-11-05",
            Version::V2025_03_26 => "2025-03-26",
            Version::V2025_06_18 => "2025-06-18",
            Version::V2025_11_25 => "2025-11-25",
            Version::V2026_07_28 => "2026-07-28",
        }
    }

    pub fn era(self) -> Era {
        match self {
            Version::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// JSON-RPC batches exist only in 2025-03-26 (added there, removed in 2025-06-18).
    pub fn allows_batches(self) -> bool {
        self == Version::V2025_03_26
    }
}

/// Why a request's routing headers are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderMismatch {
    #[error("header {0} appears more than once")]
    Duplicated(&'static str),
    #[error("header {0} is not valid text")]
    Unreadable(&'static str),
    #[error("mcp-method header does not match the request body's method")]
    Method,
    #[error("mcp-name header does not match the request body's {0:?} parameter")]
    Name(&'static str),
    #[error("mcp-protocol-version header does not match the request envelope's protocol version")]
    Version,
}

/// The era a request speaks and the version it names, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestEra {
    pub era: Era,
    pub version: Option<Version>,
}

/// The params key mirrored as `Mcp-Name` for the methods that have one.
fn name_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

fn single<'h>(headers: &'h HeaderMap, name: &'static str) -> Result<Option<&'h str>, HeaderMismatch> {
    // Looked up by a name made at compile time, not parsed from text at every request.
    static VERSION: HeaderName = HeaderName::from_static(HEADER_PROTOCOL_VERSION);
    static METHOD: HeaderName = HeaderName::from_static(HEADER_METHOD);
    static NAME: HeaderName = HeaderName::from_static(HEADER_NAME);
    let mut it = match name {
        HEADER_PROTOCOL_VERSION => headers.get_all(&VERSION),
        HEADER_METHOD => headers.get_all(&METHOD),
        HEADER_NAME => headers.get_all(&NAME),
        other => headers.get_all(other),
    }
    .iter();
    let Some(first) = it.next() else {
        return Ok(None);
    };
    if it.next().is_some() {
        return Err(HeaderMismatch::Duplicated(name));
    }
    first.to_str().map(Some).map_err(|_| HeaderMismatch::Unreadable(name))
}

/// Decodes the `=?base64?…?=` form the spec uses for non-ASCII names. `None` for a malformed
/// sentinel, so a corrupt header never matches by accident.
fn decode_name(value: &str) -> Option<String> {
    let Some(payload) = value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) else {
        return Some(value.to_owned());
    };
    let bytes = base64_decode(payload)?;
    String::from_utf8(bytes).ok()
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = s.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let mut n: u32 = 0;
        let mut pad = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let v = if c == b'=' && i >= 2 {
                pad += 1;
                0
            } else if pad > 0 {
                return None;
            } else {
                ALPHABET.iter().position(|&a| a == c)? as u32
            };
            n = (n << 6) | v;
        }
        let b = n.to_be_bytes();
        out.extend_from_slice(&b[1..4 - pad]);
    }
    Some(out)
}

/// The era a message speaks by its own envelope (stdio has no headers): modern when its
/// `params._meta` names a modern version.
pub fn of_message(msg: &Message<'_>) -> Era {
    msg.params
        .and_then(|p| serde_json::from_str::<AnyParams<'_>>(p.get()).ok())
        .and_then(|p| p.meta.and_then(|m| m.protocol_version.as_deref().and_then(Version::parse)))
        .map_or(Era::Legacy, Version::era)
}

/// Checks a request's routing headers against its body and says which era it speaks.
///
/// Any `Mcp-Method` / `Mcp-Name` header present must agree with the body whatever the era: a
/// router in front of the upstream may trust them. In the modern era they are mandatory.
pub fn check_request(headers: &HeaderMap, msg: &Message<'_>) -> Result<RequestEra, HeaderMismatch> {
    let version_header = single(headers, HEADER_PROTOCOL_VERSION)?;
    let method_header = single(headers, HEADER_METHOD)?;
    let name_header = single(headers, HEADER_NAME)?;

    let params: AnyParams<'_> =
        msg.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
    let envelope_version = params.meta.as_ref().and_then(|m| m.protocol_version.as_deref());
    let named = envelope_version.or(version_header).and_then(Version::parse);
    let era = match named {
        Some(v) => v.era(),
        None => Era::Legacy,
    };

    if era == Era::Modern {
        if version_header != envelope_version || version_header.is_none() {
            return Err(HeaderMismatch::Version);
        }
        if method_header.is_none() {
            return Err(HeaderMismatch::Method);
        }
    }
    if let Some(m) = method_header {
        if Some(m) != msg.method() {
            return Err(HeaderMismatch::Method);
        }
    }
    if let Some(key) = msg.method().and_then(name_key) {
        let body_name = match key {
            "uri" => params.uri.as_deref(),
            _ => params.name.as_deref(),
        };
        match (name_header, body_name) {
            (Some(h), Some(b)) if decode_name(h).as_deref() == Some(b) => {}
            (None, _) if era == Era::Legacy => {}
            (None, None) => {}
            _ => return Err(HeaderMismatch::Name(key)),
        }
    } else if name_header.is_some() && era == Era::Modern {
        // A name header on a method that has no name is a disagreement too.
        return Err(HeaderMismatch::Name("name"));
    }
    Ok(RequestEra { era, version: named })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{parse, Payload};
    use http::HeaderValue;

    fn msg(text: &str) -> Message<'_> {
        match parse(text.as_bytes()).unwrap() {
            Payload::Single(m) => m,
            Payload::Batch(_) => panic!(),
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    const MODERN_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

    #[test]
    fn modern_request_with_matching_headers_passes() {
        let h = headers(&[
            (HEADER_PROTOCOL_VERSION, "2026-07-28"),
            (HEADER_METHOD, "tools/call"),
            (HEADER_NAME, "echo"),
        ]);
        let got = check_request(&h, &msg(MODERN_CALL)).unwrap();
        assert_eq!(got.era, Era::Modern);
    }

    #[test]
    fn header_body_disagreements_are_refused() {
        let cases: &[(&[(&'static str, &str)], HeaderMismatch)] = &[
            (
                &[
                    (HEADER_PROTOCOL_VERSION, "2026-07-28"),
                    (HEADER_METHOD, "tools/list"),
                    (HEADER_NAME, "echo"),
                ],
                HeaderMismatch::Method,
            ),
            (
                &[
                    (HEADER_PROTOCOL_VERSION, "2026-07-28"),
                    (HEADER_METHOD, "tools/call"),
                    (HEADER_NAME, "rm"),
                ],
                HeaderMismatch::Name("name"),
            ),
            (
                &[(HEADER_PROTOCOL_VERSION, "2026-07-28"), (HEADER_METHOD, "tools/call")],
                HeaderMismatch::Name("name"),
            ),
            (&[(HEADER_METHOD, "tools/call"), (HEADER_NAME, "echo")], HeaderMismatch::Version),
            (&[(HEADER_PROTOCOL_VERSION, "2026-07-28"), (HEADER_NAME, "echo")], HeaderMismatch::Method),
            (
                &[
                    (HEADER_PROTOCOL_VERSION, "2026-07-28"),
                    (HEADER_METHOD, "tools/call"),
                    (HEADER_METHOD, "tools/call"),
                    (HEADER_NAME, "echo"),
                ],
                HeaderMismatch::Duplicated(HEADER_METHOD),
            ),
        ];
        for (pairs, want) in cases {
            assert_eq!(check_request(&headers(pairs), &msg(MODERN_CALL)), Err(want.clone()), "{pairs:?}");
        }
    }

    #[test]
    fn legacy_requests_need_no_routing_headers_but_present_ones_must_match() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
        assert_eq!(check_request(&HeaderMap::new(), &msg(call)).unwrap().era, Era::Legacy);
        let h = headers(&[(HEADER_PROTOCOL_VERSION, "2025-06-18")]);
        assert_eq!(check_request(&h, &msg(call)).unwrap().version, Some(Version::V2025_06_18));
        let h = headers(&[(HEADER_NAME, "delete_everything")]);
        assert_eq!(check_request(&h, &msg(call)), Err(HeaderMismatch::Name("name")));
    }

    #[test]
    fn base64_names_decode_and_corrupt_ones_never_match() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"héllo"}}"#;
        let ok = headers(&[(HEADER_NAME, "=?base64?aMOpbGxv?=")]);
        assert!(check_request(&ok, &msg(call)).is_ok());
        let bad = headers(&[(HEADER_NAME, "=?base64?aMOpbGx?=")]);
        assert!(check_request(&bad, &msg(call)).is_err());
        assert_eq!(base64_decode("aGk="), Some(b"hi".to_vec()));
        assert_eq!(base64_decode("a=Gk"), None);
    }
}
