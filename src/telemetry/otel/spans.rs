//! The trace spans inside an exchange (Layer 1, the checker, the upstream call, the approval
//! wait, a server request on a stream), each made in one function here so their names and
//! attributes (the MCP and GenAI semantic conventions) are in one place; the exchanges' own are
//! in `exchange.rs`. Every constructor returns
//! [`Span::none`] when traces are off; every recorder is a no-op on it.
//!
//! What is never an attribute: arguments, results, tokens, credentials, the session id itself
//! (its digest is), URLs (an upstream URL may carry a key in its query: host and port are).

use std::future::Future;

use opentelemetry::trace::TraceContextExt;
use tracing::field::Empty;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::context;
use super::exchange::{bounded, Exchange, ExchangeSpans};
use super::{on, TARGET};

/// Runs `exchange` in its span, recording the status it answers with; a batch's member spans
/// end with it.
pub async fn traced<B, E>(
    spans: ExchangeSpans,
    exchange: impl Future<Output = Result<http::Response<B>, E>>,
) -> Result<http::Response<B>, E> {
    if spans.span.is_none() {
        return exchange.await;
    }
    let answer = exchange.instrument(spans.span.clone()).await;
    if let Ok(resp) = &answer {
        spans.span.record("http.response.status_code", resp.status().as_u16());
    }
    answer
}

/// The exchange span a request carries ([`Span::none`] when there is none).
pub fn exchange_of(exts: &http::Extensions) -> Span {
    if !on() {
        return Span::none();
    }
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

/// Writes `span`'s context to an MCP message's `params._meta` (the new line, when it is
/// rewritten): on stdio, where there are no headers, the server reads it there.
pub fn stamp_meta(span: &Span, body: &[u8]) -> Option<Vec<u8>> {
    if span.is_none() {
        return None;
    }
    context::to_meta(&span.context(), body)
}

/// The span of a request the upstream sent on a stream the gate judges (`sampling/createMessage`,
/// `elicitation/create`, …): a child of the stream's span; the decision is recorded on it.
pub fn server_request(stream: &Span, method: &str, id: Option<&str>) -> Span {
    if !on() || stream.is_none() {
        return Span::none();
    }
    let method = bounded(method);
    tracing::info_span!(
        target: TARGET,
        parent: stream,
        "server_request",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
        jsonrpc.request.id = id.map(bounded),
        portcullis.decision = Empty,
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn off_makes_no_child_span() {
        // Nothing in the lib tests starts the pipeline.
        assert!(!on());
        let req = http::Request::new(Bytes::new());
        assert!(layer1().is_none() && checker("m", "pre").is_none() && approval("operator").is_none());
        assert!(upstream(req.extensions(), "u", &http::Method::POST, &"http://h/".parse().unwrap()).is_none());
        assert!(server_request(&Span::none(), "sampling/createMessage", None).is_none());
        assert_eq!(stamp_meta(&Span::none(), br#"{"method":"x","params":{}}"#), None);
        assert!(exchange_of(req.extensions()).is_none());
    }
}
