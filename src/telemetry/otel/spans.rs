//! The trace spans, each made in one function here so their names and attributes (the MCP and
//! GenAI semantic conventions) are in one place. Every constructor returns
//! [`Span::none`] when traces are off; every recorder is a no-op on it.
//!
//! What is never an attribute: arguments, results, tokens, credentials, the session id itself
//! (its digest is), URLs (an upstream URL may carry a key in its query: host and port are).

use std::future::Future;

use bytes::Bytes;
use opentelemetry::trace::TraceContextExt;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tracing::field::Empty;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::context::{self, MetaContext};
use super::{on, TARGET};

/// The exchange's span, in the request's extensions: the layers that open its children across a
/// task or service boundary (the upstream call, a parked call's decision) find it there.
#[derive(Clone)]
pub struct Exchange(pub Span);

/// What kind of exchange a request is.
#[derive(Debug, Clone, Copy)]
pub enum ExchangeKind<'a> {
    /// A JSON-RPC POST to an MCP upstream.
    Mcp,
    /// A plain HTTP tool call (`path` without its query).
    Http { path: &'a str },
}

/// Longest name or id copied into an attribute; a longer one is cut at a character boundary.
const MAX_NAME: usize = 128;

/// The exchange span, continuing the caller's trace context, put in `req`'s extensions.
pub fn exchange(req: &mut http::Request<Bytes>, upstream: &str, kind: ExchangeKind<'_>) -> Span {
    if !on() {
        return Span::none();
    }
    let session = req.headers().get("mcp-session-id").map(|v| hashed(v.as_bytes()));
    let probe = match kind {
        ExchangeKind::Mcp => serde_json::from_slice::<Probe<'_>>(req.body()).ok(),
        ExchangeKind::Http { .. } => None,
    };
    let params = probe.as_ref().and_then(|p| p.params.as_ref());
    let method = probe.as_ref().and_then(|p| p.method.as_deref()).map(bounded);
    let id = probe.as_ref().and_then(|p| p.id).map(|id| bounded(id.get().trim_matches('"')));
    let tool = match kind {
        ExchangeKind::Mcp => params.and_then(|p| p.name.as_deref()).map(bounded),
        ExchangeKind::Http { path } => Some(bounded(path)),
    };
    let name = match (&method, &tool) {
        (Some(m), Some(t)) => format!("{m} {t}"),
        (Some(m), None) => m.to_string(),
        (None, Some(t)) => format!("POST {t}"),
        (None, None) => "mcp".into(),
    };
    let operation = (tool.is_some() && matches!(method, None | Some("tools/call"))).then_some("execute_tool");
    let span = tracing::info_span!(
        target: TARGET,
        "exchange",
        otel.name = %name,
        otel.kind = "server",
        mcp.method.name = method,
        mcp.session.id = session.as_deref(),
        jsonrpc.request.id = id,
        gen_ai.tool.name = tool,
        gen_ai.operation.name = operation,
        network.transport = "tcp",
        network.protocol.name = "http",
        portcullis.upstream = upstream,
        http.response.status_code = Empty,
    );
    let meta = params.and_then(|p| p.meta.as_ref());
    if let Some(parent) = context::incoming(req.headers(), meta) {
        let _ = span.set_parent(parent);
    }
    req.extensions_mut().insert(Exchange(span.clone()));
    span
}

/// Runs `exchange` in `span`, recording the status it answers with.
pub async fn traced<B, E>(
    span: Span,
    exchange: impl Future<Output = Result<http::Response<B>, E>>,
) -> Result<http::Response<B>, E> {
    if span.is_none() {
        return exchange.await;
    }
    let answer = exchange.instrument(span.clone()).await;
    if let Ok(resp) = &answer {
        span.record("http.response.status_code", resp.status().as_u16());
    }
    answer
}

/// The exchange span a request carries ([`Span::none`] when there is none).
pub fn exchange_of(exts: &http::Extensions) -> Span {
    exts.get::<Exchange>().map_or_else(Span::none, |e| e.0.clone())
}

/// Layer 1's span: enter it around the rules' decision, then [`layer1_decided`].
pub fn layer1() -> Span {
    if !on() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "layer1",
        otel.name = "portcullis.layer1",
        portcullis.decision = Empty,
        portcullis.rule = Empty,
    )
}

/// Records Layer 1's decision (`allow`, `check`: Layer 2 must judge, `refuse`) and the rule that
/// refused (a rule's name from the policy, never the call's arguments).
pub fn layer1_decided(span: &Span, decision: &'static str, rule: Option<&str>) {
    span.record("portcullis.decision", decision);
    span.record("portcullis.rule", rule);
}

/// The checker call's span (GenAI conventions); the checker crate records the token counts on
/// it when the server reports them.
pub fn checker(model: &str, phase: &str) -> Span {
    if !on() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "checker",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = "openai",
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        portcullis.checker.phase = phase,
        portcullis.checker.cache = Empty,
        portcullis.checker.verdict = Empty,
    )
}

/// Records where the verdict came from (`hit`, `shared_hit`, `miss`) and what it was (`safe`,
/// `unsafe`, or `failed` with no verdict).
pub fn checked(span: &Span, cache: &'static str, verdict: &'static str) {
    span.record("portcullis.checker.cache", cache);
    span.record("portcullis.checker.verdict", verdict);
}

/// The upstream call's span, a child of the request's exchange ([`Span::none`] without one).
pub fn upstream(exts: &http::Extensions, upstream: &str, method: &http::Method, uri: &http::Uri) -> Span {
    if !on() {
        return Span::none();
    }
    let Some(Exchange(parent)) = exts.get::<Exchange>() else { return Span::none() };
    tracing::info_span!(
        target: TARGET,
        parent: parent,
        "upstream",
        otel.name = %method,
        otel.kind = "client",
        http.request.method = %method,
        server.address = uri.host().unwrap_or(""),
        server.port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 }),
        portcullis.upstream = upstream,
        http.response.status_code = Empty,
    )
}

/// Writes the upstream span's context to the request for the upstream: its headers, and for an
/// MCP request `params._meta` too (the new body, when it is rewritten).
pub fn propagate(span: &Span, headers: &mut http::HeaderMap, mcp_body: Option<&[u8]>) -> Option<Vec<u8>> {
    if span.is_none() {
        return None;
    }
    let cx = span.context();
    if !cx.span().span_context().is_valid() || !context::to_headers(&cx, headers) {
        return None;
    }
    mcp_body.and_then(|b| context::to_meta(&cx, b))
}

/// The approval wait's span: `via` is how a human is asked (`api`: an operator, `elicitation`).
pub fn approval(via: &'static str) -> Span {
    if !on() {
        return Span::none();
    }
    tracing::info_span!(
        target: TARGET,
        "approval",
        otel.name = "portcullis.approval",
        portcullis.approval.channel = via,
        portcullis.approval.decision = Empty,
    )
}

/// The part of an MCP request the exchange span names (nothing of the arguments).
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    params: Option<ProbeParams<'a>>,
}

#[derive(Deserialize)]
struct ProbeParams<'a> {
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "_meta")]
    meta: Option<MetaContext>,
}

/// A session id's digest: the same session reads the same in every span, and the id (a bearer
/// of the session to whoever holds it) is in none.
fn hashed(id: &[u8]) -> String {
    Sha256::digest(id).iter().take(16).map(|b| format!("{b:02x}")).collect()
}

fn bounded(s: &str) -> &str {
    if s.len() <= MAX_NAME {
        return s;
    }
    let mut end = MAX_NAME;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_makes_no_span() {
        // Nothing in the lib tests starts the pipeline.
        assert!(!on());
        let mut req = http::Request::new(Bytes::from_static(br#"{"method":"tools/call"}"#));
        assert!(exchange(&mut req, "u", ExchangeKind::Mcp).is_none());
        assert!(req.extensions().get::<Exchange>().is_none());
        assert!(layer1().is_none() && checker("m", "pre").is_none() && approval("operator").is_none());
        assert!(upstream(req.extensions(), "u", &http::Method::POST, &"http://h/".parse().unwrap()).is_none());
    }

    #[test]
    fn a_session_id_is_digested_and_names_are_bounded() {
        let h = hashed(b"secret-session-id-0123456789");
        assert_eq!(h.len(), 32);
        assert!(!h.contains("secret"));
        assert_eq!(hashed(b"secret-session-id-0123456789"), h);
        let long = "é".repeat(200);
        assert!(bounded(&long).len() <= MAX_NAME && long.starts_with(bounded(&long)));
        assert_eq!(bounded("tools/call"), "tools/call");
    }
}
