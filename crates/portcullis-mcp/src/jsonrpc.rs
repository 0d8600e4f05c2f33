//! JSON-RPC 2.0 envelopes, parsed once and borrowed from the request bytes.
//!
//! The proxy forwards the bytes it received, so parsing only has to *understand* a message, never
//! re-encode it: unknown fields survive byte-for-byte. Duplicate keys are an error (serde refuses
//! them for structs), which closes the parser-differential trick where the proxy reads the first
//! `"name"` and the server the last.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

mod id;
pub use id::IdKey;

/// JSON-RPC error codes portcullis emits.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP 2026-07-28: an `Mcp-*` routing header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// Implementation-defined server error range: the upstream failed or was unreachable.
    pub const UPSTREAM_ERROR: i64 = -32001;
    /// The upstream did not answer in time.
    pub const UPSTREAM_TIMEOUT: i64 = -32002;
    /// The agent did not authenticate to the proxy (sent with HTTP 401 or 503).
    pub const UNAUTHORIZED: i64 = -32003;
    /// Policy refused a request other than `tools/call` (it was not sent), or withheld its
    /// answer; the message says why. Sent over HTTP 200.
    pub const REFUSED: i64 = -32004;
}

/// One JSON-RPC message, borrowed from the bytes it was parsed from.
#[derive(Debug, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// What a message is, by the fields it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Notification,
    Response,
    Invalid,
}

impl Message<'_> {
    pub fn kind(&self) -> Kind {
        match (&self.method, self.id, self.result.is_some() || self.error.is_some()) {
            (Some(_), Some(_), false) => Kind::Request,
            (Some(_), None, false) => Kind::Notification,
            (None, Some(_), true) => Kind::Response,
            _ => Kind::Invalid,
        }
    }

    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }
}

/// A request body: one message or a batch array.
#[derive(Debug)]
pub enum Payload<'a> {
    Single(Message<'a>),
    Batch(Vec<Message<'a>>),
}

/// Why bytes are not a JSON-RPC payload.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("body is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("not a JSON-RPC message: {0}")]
    Shape(#[source] serde_json::Error),
    #[error("an empty batch is not a JSON-RPC request")]
    EmptyBatch,
}

impl ParseError {
    pub fn code(&self) -> i64 {
        match self {
            ParseError::Json(_) => code::PARSE_ERROR,
            ParseError::Shape(_) | ParseError::EmptyBatch => code::INVALID_REQUEST,
        }
    }
}

/// Parses a body as one JSON-RPC message or a batch.
pub fn parse(bytes: &[u8]) -> Result<Payload<'_>, ParseError> {
    // JSON text is UTF-8 (RFC 8259 §8.1). serde_json validates the strings it reads but not the
    // ones it skips, so without this an unknown field could carry bytes the server decodes as
    // something else (U+FFFD, or a Latin-1 reading): what the proxy read would not be what runs.
    let bytes =
        std::str::from_utf8(bytes).map_err(|e| ParseError::Json(serde::de::Error::custom(e)))?.as_bytes();
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let raw: Vec<&RawValue> = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
        if raw.is_empty() {
            return Err(ParseError::EmptyBatch);
        }
        let msgs = raw.into_iter().map(|r| object(r.get())).collect::<Result<Vec<_>, _>>()?;
        return Ok(Payload::Batch(msgs));
    }
    if first != Some(&b'{') {
        return Err(match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => ParseError::Shape(serde::de::Error::custom("a JSON-RPC message is a JSON object")),
            Err(e) => ParseError::Json(e),
        });
    }
    // Two passes on failure only: distinguish "not JSON" from "JSON of the wrong shape".
    match serde_json::from_slice::<Message<'_>>(bytes) {
        Ok(m) => Ok(Payload::Single(m)),
        Err(e) => match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => Err(ParseError::Shape(e)),
            Err(_) => Err(ParseError::Json(e)),
        },
    }
}

/// One batch element. Only an object is a message: serde would also read a struct from an array
/// by position (`[7, "tools/call", {…}]`), which no server takes for a request (found by the
/// `jsonrpc` fuzz target).
fn object(text: &str) -> Result<Message<'_>, ParseError> {
    if !text.trim_start().starts_with('{') {
        return Err(ParseError::Shape(serde::de::Error::custom("a JSON-RPC message is a JSON object")));
    }
    serde_json::from_str::<Message<'_>>(text).map_err(ParseError::Shape)
}

/// The params of a `tools/call` request.
#[derive(Debug, Deserialize)]
pub struct CallParams<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    pub meta: Option<&'a RawValue>,
}

/// The `_meta` keys of the modern (2026-07-28) per-request envelope that portcullis reads.
#[derive(Debug, Default, Deserialize)]
pub struct EnvelopeMeta<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: Option<Cow<'a, str>>,
    #[serde(default, rename = "progressToken")]
    pub progress_token: Option<&'a RawValue>,
}

/// Any params object, read only for its `_meta` and routing name.
#[derive(Debug, Default, Deserialize)]
pub struct AnyParams<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub uri: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "_meta")]
    pub meta: Option<EnvelopeMeta<'a>>,
}

/// Builds `{"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M}}`; `id` is raw JSON or null.
pub fn error_response(id: Option<&RawValue>, code: i64, message: &str) -> Vec<u8> {
    let id = id.map(RawValue::get).unwrap_or("null");
    let message = serde_json::to_string(message).unwrap_or_else(|_| "\"error\"".into());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#).into_bytes()
}

/// Builds a success response around an already-serialised result object.
pub fn result_response(id: &RawValue, result: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get()).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#, Kind::Request),
            (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, Kind::Notification),
            (r#"{"jsonrpc":"2.0","id":"a","result":{}}"#, Kind::Response),
            (r#"{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}"#, Kind::Response),
            (r#"{"jsonrpc":"2.0","id":2,"method":"x","result":{}}"#, Kind::Invalid),
            (r#"{"jsonrpc":"2.0"}"#, Kind::Invalid),
        ];
        for (text, want) in cases {
            let Payload::Single(m) = parse(text.as_bytes()).unwrap() else { panic!("{text}") };
            assert_eq!(m.kind(), want, "{text}");
        }
    }

    #[test]
    fn only_objects_are_messages_never_arrays_read_by_position() {
        for text in [
            r#"[[7,"tools/call",{"name":"x"}]]"#,
            "[[]]",
            r#"[{"jsonrpc":"2.0","method":"ping","id":1},[]]"#,
            r#""tools/call""#,
            "7",
            "null",
        ] {
            let e = parse(text.as_bytes()).expect_err(text);
            assert_eq!(e.code(), code::INVALID_REQUEST, "{text}");
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_not_json_even_where_the_proxy_does_not_look() {
        // Found by the `jsonrpc` fuzz target: an invalid byte in a field the proxy skips.
        let cases: [&[u8]; 4] = [
            b"{\"jsonrpc\":\"2.\x95\",\"id\":1,\"method\":\"ping\"}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"x\xff\":1}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"\xc0\xaf\"}}",
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"_\":\"\xed\xa0\x80\"}]",
        ];
        for bytes in cases {
            let e = parse(bytes).expect_err("invalid UTF-8 accepted");
            assert_eq!(e.code(), code::PARSE_ERROR, "{bytes:?}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused_not_first_or_last_wins() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}"#;
        assert!(matches!(parse(text.as_bytes()), Err(ParseError::Shape(_))));
        let params = r#"{"name":"echo","name":"delete"}"#;
        assert!(serde_json::from_str::<CallParams<'_>>(params).is_err());
    }

    #[test]
    fn batches_parse_element_by_element() {
        let text = r#" [{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]"#;
        let Payload::Batch(v) = parse(text.as_bytes()).unwrap() else { panic!() };
        assert_eq!(v.len(), 2);
        assert!(matches!(parse(b"[]"), Err(ParseError::EmptyBatch)));
    }

    #[test]
    fn garbage_is_a_parse_error_and_wrong_shape_an_invalid_request() {
        assert_eq!(parse(b"{nope").unwrap_err().code(), code::PARSE_ERROR);
        assert_eq!(parse(b"42").unwrap_err().code(), code::INVALID_REQUEST);
        assert_eq!(parse(br#"{"method":7}"#).unwrap_err().code(), code::INVALID_REQUEST);
    }

    #[test]
    fn error_responses_are_valid_json() {
        let id = RawValue::from_string("7".into()).unwrap();
        let body = error_response(Some(&id), code::INVALID_REQUEST, "bad \"batch\"");
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["message"], "bad \"batch\"");
        let v: serde_json::Value = serde_json::from_slice(&error_response(None, 1, "x")).unwrap();
        assert!(v["id"].is_null());
    }
}
