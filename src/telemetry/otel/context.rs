//! W3C trace context: read from the caller (`traceparent` and `tracestate` in the HTTP headers,
//! or in an MCP request's `params._meta`), written to the upstream (its headers, and the
//! `_meta` of an MCP request). The propagator refuses any malformed value: a caller's garbage
//! starts a new trace, it is never passed on.

use std::collections::{BTreeMap, HashMap};

use http::HeaderMap;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde::Deserialize;
use serde_json::value::RawValue;

pub const TRACEPARENT: &str = "traceparent";
pub const TRACESTATE: &str = "tracestate";

/// The trace context an MCP request carries in `params._meta` (the other keys are not read).
#[derive(Debug, Default, Deserialize)]
pub struct MetaContext {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl Extractor for MetaContext {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent.as_deref(),
            TRACESTATE => self.tracestate.as_deref(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

/// The caller's context: `_meta`'s when it holds a valid one (it names this very call), else
/// the headers'. `None`: the caller sent none that parses, and the exchange starts a trace.
pub fn incoming(headers: &HeaderMap, meta: Option<&MetaContext>) -> Option<Context> {
    meta.and_then(from_meta).or_else(|| from_headers(headers))
}

/// The context in an MCP message's `params._meta`, if it holds a valid one.
pub fn from_meta(meta: &MetaContext) -> Option<Context> {
    Some(TraceContextPropagator::new().extract(meta)).filter(valid)
}

/// The context in the HTTP headers, if they hold a valid one.
pub fn from_headers(headers: &HeaderMap) -> Option<Context> {
    Some(TraceContextPropagator::new().extract(&HeaderExtractor(headers))).filter(valid)
}

fn valid(cx: &Context) -> bool {
    cx.span().span_context().is_valid()
}

/// Writes `cx` as the upstream's `traceparent` (and the trace's `tracestate`: the caller's, as
/// the propagator parsed it, goes on with the trace as W3C Trace Context asks), replacing what
/// the caller sent;
/// false (and the headers as they were) when `cx` has no valid span.
pub fn to_headers(cx: &Context, headers: &mut HeaderMap) -> bool {
    if !valid(cx) {
        return false;
    }
    headers.remove(TRACEPARENT);
    headers.remove(TRACESTATE);
    TraceContextPropagator::new().inject_context(cx, &mut HeaderInjector(headers));
    // The propagator writes an empty `tracestate` when there is none: say nothing instead.
    if headers.get(TRACESTATE).is_some_and(|v| v.is_empty()) {
        headers.remove(TRACESTATE);
    }
    true
}

/// An MCP request's body with `cx` in `params._meta` (replacing the caller's trace keys, every
/// other key and every value kept byte for byte); `None` — forward the body as it is — for a
/// batch, a message without a `method` or an object `params`, or a context with no valid span.
pub fn to_meta(cx: &Context, body: &[u8]) -> Option<Vec<u8>> {
    if !valid(cx) {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(cx, &mut carrier);
    type Object = BTreeMap<String, Box<RawValue>>;
    let mut message: Object = serde_json::from_slice(body).ok()?;
    message.get("method")?;
    let mut params: Object = serde_json::from_str(message.get("params")?.get()).ok()?;
    let mut meta: Object = match params.get("_meta") {
        Some(m) => serde_json::from_str(m.get()).ok()?,
        None => Object::new(),
    };
    meta.remove(TRACESTATE);
    for (key, value) in carrier.into_iter().filter(|(_, v): &(String, String)| !v.is_empty()) {
        meta.insert(key, serde_json::value::to_raw_value(&value).ok()?);
    }
    params.insert("_meta".into(), serde_json::value::to_raw_value(&meta).ok()?);
    message.insert("params".into(), serde_json::value::to_raw_value(&params).ok()?);
    serde_json::to_vec(&message).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn context() -> Context {
        let sc = SpanContext::new(
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        );
        Context::new().with_remote_span_context(sc)
    }

    #[test]
    fn meta_wins_over_headers_and_garbage_is_ignored() {
        let mut h = HeaderMap::new();
        h.insert(TRACEPARENT, PARENT.parse().unwrap());
        let meta = MetaContext {
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            tracestate: None,
        };
        let from_meta = incoming(&h, Some(&meta)).unwrap();
        assert_eq!(
            from_meta.span().span_context().trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        for junk in ["", "00-zz-yy-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01", "ff-0af7"]
        {
            let meta = MetaContext { traceparent: Some(junk.into()), tracestate: None };
            let cx = incoming(&h, Some(&meta)).unwrap();
            assert_eq!(cx.span().span_context().trace_id().to_string(), &PARENT[3..35], "{junk:?}");
            assert!(incoming(&HeaderMap::new(), Some(&meta)).is_none(), "{junk:?} was read as a context");
        }
    }

    #[test]
    fn the_upstream_gets_our_context_in_place_of_the_callers() {
        let mut h = HeaderMap::new();
        h.insert(TRACEPARENT, PARENT.parse().unwrap());
        h.insert(TRACESTATE, "evil=1".parse().unwrap());
        assert!(to_headers(&context(), &mut h));
        assert_eq!(h[TRACEPARENT], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assert!(!h.contains_key(TRACESTATE));
        assert!(!to_headers(&Context::new(), &mut h), "no span, no header written");
    }

    #[test]
    fn meta_is_stamped_and_every_other_byte_of_the_call_kept() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"b": 2, "a" :[1,2.50]},"_meta":{"progressToken":"p","traceparent":"x","tracestate":"y"}}}"#;
        let out = to_meta(&context(), body).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v["params"]["_meta"]["traceparent"],
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        assert_eq!(v["params"]["_meta"]["progressToken"], "p");
        assert!(v["params"]["_meta"].get("tracestate").is_none());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""arguments":{"b": 2, "a" :[1,2.50]}"#), "{text}");
        assert_eq!(v["id"], 7);
    }

    #[test]
    fn what_is_not_a_request_with_params_is_left_alone() {
        for body in [
            &br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"s"}}"#,
            b"not json",
        ] {
            assert_eq!(to_meta(&context(), body), None, "{}", String::from_utf8_lossy(body));
        }
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#;
        assert_eq!(to_meta(&Context::new(), ok), None, "no span, no rewrite");
    }
}
