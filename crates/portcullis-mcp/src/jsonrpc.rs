//! JSON-RPC 2.0 envelopes, parsed once and borrowed from the request bytes.
//!
//! The proxy forwards the bytes it received, so parsing only has to *understand* a message, never
//! re-encode it: unknown fields survive byte-for-byte. Duplicate keys are an error (serde refuses
//! them for structs), which closes the parser-differential trick where the proxy reads the first
//! `"name"` and the server the last.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

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

/// A request id as real clients correlate it: two ids are the same key when any client portcullis
/// knows would take a response carrying one as the answer to a request carrying the other.
///
/// - The TypeScript SDK looks responses up by `Number(response.id)`: JSON numbers by value (`4`,
///   `4.0`, `4e0`, `40e-1`), strings by JavaScript's `Number()` grammar (whitespace trimmed,
///   `"+4"`, `"4.0"`, `"4e0"`, `"0x4"`, `"0o4"`, `"0b100"`, and `""` or `"  "` as 0).
/// - The Python SDK coerces string ids with `int()` (`" 4 "`, `"+4"`, `"4_0"`, Unicode digits)
///   and looks them up in a dict where `4.0 == 4`.
///
/// So numbers and numeric strings share one key, the number's value; other strings key as
/// themselves. A string whose number portcullis cannot work out exactly (non-ASCII digits, say)
/// is [`IdKey::is_wild`]: it may answer any watched call, and is inspected as such.
#[derive(Debug, Clone)]
pub struct IdKey {
    canon: Canon,
    /// The id's JSON text as received, to answer with.
    raw: Box<str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Canon {
    /// The bits of an `f64` (`-0` folded into `0`, every NaN into one).
    Num(u64),
    Str(Box<str>),
    /// Anything else: `null`, objects, and strings no exact reading is known for.
    Wild,
}

impl PartialEq for IdKey {
    fn eq(&self, other: &Self) -> bool {
        self.canon == other.canon
    }
}

impl Eq for IdKey {}

impl std::hash::Hash for IdKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.canon.hash(state)
    }
}

impl IdKey {
    pub fn new(id: &RawValue) -> Self {
        let text = id.get().trim();
        let canon = match text.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<Cow<'_, str>>(text) {
                Ok(s) => canon_of_string(&s),
                Err(_) => Canon::Wild,
            },
            // The JSON number grammar is a subset of Rust's: it rounds as `JSON.parse` does,
            // and overflows to infinity as it does too.
            Some(b'-' | b'0'..=b'9') => text.parse::<f64>().map_or(Canon::Wild, num),
            _ => Canon::Wild,
        };
        IdKey { canon, raw: text.into() }
    }

    /// True when the id's key is not known exactly: it is treated as answering any watched call.
    pub fn is_wild(&self) -> bool {
        self.canon == Canon::Wild
    }

    /// True when a response with id `self` may answer a request with id `other`.
    pub fn answers(&self, other: &IdKey) -> bool {
        self.is_wild() || other.is_wild() || self.canon == other.canon
    }

    /// The id's JSON text as received.
    pub fn as_raw(&self) -> &str {
        &self.raw
    }
}

fn num(f: f64) -> Canon {
    if f.is_nan() {
        Canon::Num(f64::NAN.to_bits())
    } else if f == 0.0 {
        Canon::Num(0f64.to_bits())
    } else {
        Canon::Num(f.to_bits())
    }
}

/// White space either client trims around a numeric string: JavaScript's `StrWhiteSpaceChar`
/// (which has U+FEFF) and Python's `str.isspace` (which has U+001C..U+001F).
fn trimmed(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{1c}'..='\u{1f}' | '\u{feff}')
}

fn canon_of_string(s: &str) -> Canon {
    let t = s.trim_matches(trimmed);
    if t.is_empty() {
        // `Number("")` and `Number("  ")` are 0 (Python's `int("")` fails: only JS matches).
        return num(0.0);
    }
    if let Some(n) = js_number(t) {
        return num(n);
    }
    if let Some(n) = python_int(t) {
        return num(n);
    }
    if t.chars().any(|c| c.is_numeric() && !c.is_ascii_digit()) {
        // Python's `int()` reads every Unicode decimal digit; rather than carry the tables,
        // such a string may be any number.
        return Canon::Wild;
    }
    Canon::Str(s.into())
}

/// JavaScript's `Number(s)` over a trimmed, non-empty string (`StringNumericLiteral`).
fn js_number(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let digits = &t[2..];
            if !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            // Exact below 2^53; beyond, the nearest double like JS (close enough to key on).
            return Some(
                digits
                    .chars()
                    .fold(0f64, |acc, c| acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))),
            );
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return Some(if t.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    // StrUnsignedDecimalLiteral: digits [. digits?] exp? | . digits exp?
    let (mantissa, exp) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    let mantissa_ok =
        digits(int) && frac.is_none_or(digits) && !(int.is_empty() && frac.unwrap_or("").is_empty());
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    (mantissa_ok && exp_ok).then(|| t.parse::<f64>().ok()).flatten()
}

/// Python's `int(s)` over a trimmed string, ASCII digits only: a sign, digits, single
/// underscores between digits.
fn python_int(t: &str) -> Option<f64> {
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let ok = !unsigned.is_empty()
        && !unsigned.starts_with('_')
        && !unsigned.ends_with('_')
        && !unsigned.contains("__")
        && unsigned.bytes().all(|c| c.is_ascii_digit() || c == b'_');
    if !ok {
        return None;
    }
    let n = unsigned.bytes().filter(u8::is_ascii_digit).fold(0f64, |acc, d| acc * 10.0 + f64::from(d - b'0'));
    Some(if t.starts_with('-') { -n } else { n })
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

    fn key(json: &str) -> IdKey {
        IdKey::new(&RawValue::from_string(json.into()).unwrap())
    }

    #[test]
    fn id_keys_match_every_spelling_a_real_client_correlates() {
        // (watched id, response id): the TS SDK (`Number(id)`) or the Python SDK (`int(id)`,
        // dict lookup where 4.0 == 4) takes the response as the answer.
        let same = [
            ("4", "4"),
            ("4", "4.0"),
            ("4", "4e0"),
            ("4", "40e-1"),
            ("4", "4.0000000000000001"),
            ("4", "\"4\""),
            ("4", "\" 4 \""),
            ("4", "\"\\t4\\n\""),
            ("4", "\"\\u00a04\\ufeff\""),
            ("4", "\"\\u001c4\""),
            ("4", "\"4.0\""),
            ("4", "\"4.\""),
            ("4", "\"4e0\""),
            ("4", "\"+4\""),
            ("4", "\"0x4\""),
            ("4", "\"0X4\""),
            ("4", "\"0o4\""),
            ("4", "\"0b100\""),
            ("4", "\"\\u0034\""),
            ("40", "\"4_0\""),
            ("-4", "\"-4\""),
            ("0", "\"\""),
            ("0", "\"   \""),
            ("0", "\"-0\""),
            ("0", "-0"),
            ("0", "\".0\""),
            ("\"abc\"", "\"abc\""),
            ("\"abc\"", "\"\\u0061bc\""),
            ("9007199254740992", "9007199254740993"),
        ];
        for (watched, response) in same {
            assert!(key(response).answers(&key(watched)), "{response} answers {watched}");
            assert_eq!(key(response), key(watched), "{response} keys as {watched}");
        }
        let different = [
            ("4", "5"),
            ("4", "4.5"),
            ("4", "\"4x\""),
            ("4", "\"-0x4\""),
            ("4", "\"0x\""),
            ("4", "\"4__0\""),
            ("4", "\"four\""),
            ("\"abc\"", "\" abc\""),
            ("\"abc\"", "\"ABC\""),
            ("0", "\"a\""),
        ];
        for (watched, response) in different {
            assert!(!key(response).answers(&key(watched)), "{response} does not answer {watched}");
        }
    }

    #[test]
    fn ids_without_an_exact_reading_may_answer_any_call() {
        for wild in ["\"\\u0664\"", "null", "{}", "[4]", "true", "1e999999999999999999"] {
            let k = key(wild);
            if wild.starts_with('1') {
                // Overflows to infinity, as `JSON.parse` does: a number, just not a small one.
                assert!(!k.answers(&key("4")), "{wild}");
                continue;
            }
            assert!(k.is_wild(), "{wild}");
            assert!(k.answers(&key("4")) && k.answers(&key("\"abc\"")), "{wild}");
        }
    }

    #[test]
    fn id_keys_keep_the_received_text_to_answer_with() {
        assert_eq!(key(" \"4\" ").as_raw(), "\"4\"");
        assert_eq!(key("4.0").as_raw(), "4.0");
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
