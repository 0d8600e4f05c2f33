//! The span of each exchange the proxy serves, on every transport: an MCP message (`{method}
//! {tool}`, server kind) over Streamable HTTP or stdio, a JSON-RPC batch (one `batch` span for
//! the transport's message and one MCP span per member), a plain HTTP tool call, and a GET
//! stream's opening. Names and attributes follow the MCP semantic conventions.
//!
//! Why a batch is a span with one child per member: the MCP conventions make every MCP request
//! its own server span, whose parent is the context in its own `params._meta` and which links
//! the transport's context (one HTTP request may carry several MCP requests). A batch is one
//! transport message — one decision (all forwarded or none), one upstream call — so the batch
//! span is the exchange that Layer 1, the checker and the upstream call hang off; each member's
//! span is the batch's child, or, when the member names its own parent in `_meta`, that parent's
//! child with a link to the batch.

use bytes::Bytes;
use opentelemetry::trace::TraceContextExt;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tracing::field::Empty;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::context::{self, MetaContext};
use super::{on, TARGET};

/// The exchange's span, in the request's extensions: the layers that open its children across a
/// task or service boundary (the upstream call, a parked call's decision) find it there.
#[derive(Clone)]
pub struct Exchange(pub Span);

impl Default for Exchange {
    fn default() -> Self {
        Exchange(Span::none())
    }
}

/// What kind of exchange a request is.
#[derive(Debug, Clone, Copy)]
pub enum ExchangeKind<'a> {
    /// A JSON-RPC POST to an MCP upstream (one message or a batch).
    Mcp,
    /// A plain HTTP tool call (`path` without its query).
    Http { path: &'a str },
    /// A GET opening the stream the upstream sends its own messages on.
    Stream,
}

/// The transport an MCP message came on (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP.
    Tcp,
    /// stdio (`portcullis wrap`).
    Pipe,
}

impl Transport {
    fn as_str(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Pipe => "pipe",
        }
    }

    fn protocol(self) -> Option<&'static str> {
        (self == Transport::Tcp).then_some("http")
    }
}

/// An exchange's spans: the one its work hangs off ([`ExchangeSpans::span`]) and, for a batch,
/// one per member, ended with it.
pub struct ExchangeSpans {
    pub span: Span,
    pub members: Vec<Span>,
}

impl ExchangeSpans {
    /// No span at all (traces off): [`super::spans::traced`] would only pass the answer on.
    pub fn is_untraced(&self) -> bool {
        self.span.is_none() && self.members.is_empty()
    }
}

impl Default for ExchangeSpans {
    fn default() -> Self {
        ExchangeSpans { span: Span::none(), members: Vec::new() }
    }
}

impl std::ops::Deref for ExchangeSpans {
    type Target = Span;
    fn deref(&self) -> &Span {
        &self.span
    }
}

/// Members of a batch given a span each; the batch span counts them all.
pub const MAX_MEMBERS: usize = 64;

/// Longest name or id copied into an attribute; a longer one is cut at a character boundary.
const MAX_NAME: usize = 128;

/// The exchange's spans, continuing the caller's trace context, the exchange put in `req`'s
/// extensions.
pub fn exchange(req: &mut http::Request<Bytes>, upstream: &str, kind: ExchangeKind<'_>) -> ExchangeSpans {
    if !on() {
        return ExchangeSpans::default();
    }
    let session = req.headers().get("mcp-session-id").map(|v| hashed(v.as_bytes()));
    let ambient = context::from_headers(req.headers());
    let spans = match kind {
        ExchangeKind::Mcp => mcp(req.body(), upstream, Transport::Tcp, session.as_deref(), ambient),
        ExchangeKind::Http { path } => {
            let span =
                server_span(&Message::tool(bounded(path)), upstream, Transport::Tcp, session.as_deref());
            ExchangeSpans { span: parented(span, ambient), members: Vec::new() }
        }
        ExchangeKind::Stream => {
            let method = req.method().as_str();
            let span = tracing::info_span!(
                target: TARGET,
                "stream",
                otel.name = method,
                otel.kind = "server",
                http.request.method = method,
                mcp.session.id = session.as_deref(),
                network.transport = "tcp",
                network.protocol.name = "http",
                portcullis.upstream = upstream,
                http.response.status_code = Empty,
            );
            ExchangeSpans { span: parented(span, ambient), members: Vec::new() }
        }
    };
    req.extensions_mut().insert(Exchange(spans.span.clone()));
    spans
}

/// The spans of one line `portcullis wrap` relays from the agent to the server (`network.transport`
/// `pipe`; the trace context is the message's `_meta`, stdio has no headers).
pub fn stdio(line: &[u8], upstream: &str) -> ExchangeSpans {
    if !on() {
        return ExchangeSpans::default();
    }
    mcp(line, upstream, Transport::Pipe, None, None)
}

/// One MCP message's span, or a batch's and its members'.
fn mcp(
    body: &[u8],
    upstream: &str,
    transport: Transport,
    session: Option<&str>,
    ambient: Option<opentelemetry::Context>,
) -> ExchangeSpans {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        let probe = serde_json::from_slice::<Probe<'_>>(body).ok();
        let message = Message::of(probe.as_ref());
        let span = server_span(&message, upstream, transport, session);
        let span = match (message.meta_context(), ambient) {
            // `_meta` names this very call; the transport's context is linked.
            (Some(parent), Some(ambient)) => {
                span.add_link(ambient.span().span_context().clone());
                parented(span, Some(parent))
            }
            (parent, ambient) => parented(span, parent.or(ambient)),
        };
        return ExchangeSpans { span, members: Vec::new() };
    }
    let members = serde_json::from_slice::<Vec<&RawValue>>(body).unwrap_or_default();
    let batch = tracing::info_span!(
        target: TARGET,
        "batch",
        otel.name = "batch",
        otel.kind = "server",
        mcp.session.id = session,
        network.transport = transport.as_str(),
        network.protocol.name = transport.protocol(),
        portcullis.upstream = upstream,
        portcullis.batch.size = members.len(),
        http.response.status_code = Empty,
    );
    let batch = parented(batch, ambient);
    let members = members
        .iter()
        .take(MAX_MEMBERS)
        .map(|raw| {
            let probe = serde_json::from_str::<Probe<'_>>(raw.get()).ok();
            let message = Message::of(probe.as_ref());
            let span = server_span(&message, upstream, transport, session);
            match message.meta_context() {
                // Its own parent, as the conventions ask, and the batch it came in, linked.
                Some(parent) => {
                    let _ = span.set_parent(parent);
                    span.add_link(batch.context().span().span_context().clone());
                }
                None => {
                    let _ = span.set_parent(batch.context());
                }
            }
            span
        })
        .collect();
    ExchangeSpans { span: batch, members }
}

fn parented(span: Span, parent: Option<opentelemetry::Context>) -> Span {
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
    span
}

/// What a message's span names: nothing of its arguments.
struct Message<'a> {
    method: Option<&'a str>,
    id: Option<&'a str>,
    tool: Option<&'a str>,
    /// A plain HTTP tool: named `POST {path}`.
    http: bool,
    meta: Option<&'a MetaContext>,
}

impl<'a> Message<'a> {
    fn of(probe: Option<&'a Probe<'a>>) -> Message<'a> {
        let params = probe.and_then(|p| p.params.as_ref());
        Message {
            method: probe.and_then(|p| p.method.as_deref()).map(bounded),
            id: probe.and_then(|p| p.id).map(|id| bounded(id.get().trim_matches('"'))),
            tool: params.and_then(|p| p.name.as_deref()).map(bounded),
            http: false,
            meta: params.and_then(|p| p.meta.as_ref()),
        }
    }

    fn tool(path: &'a str) -> Message<'a> {
        Message { method: None, id: None, tool: Some(path), http: true, meta: None }
    }

    fn meta_context(&self) -> Option<opentelemetry::Context> {
        self.meta.and_then(context::from_meta)
    }
}

/// The MCP server span of one message (or of a plain HTTP tool call).
fn server_span(m: &Message<'_>, upstream: &str, transport: Transport, session: Option<&str>) -> Span {
    let name = match (m.method, m.tool) {
        (Some(method), Some(tool)) => format!("{method} {tool}"),
        (Some(method), None) => method.to_owned(),
        (None, Some(tool)) if m.http => format!("POST {tool}"),
        _ => "mcp".into(),
    };
    // A JSON-RPC `null` id is no id (the conventions: not captured).
    let id = m.id.filter(|id| *id != "null");
    let operation =
        (m.tool.is_some() && matches!(m.method, None | Some("tools/call"))).then_some("execute_tool");
    tracing::info_span!(
        target: TARGET,
        "exchange",
        otel.name = %name,
        otel.kind = "server",
        mcp.method.name = m.method,
        mcp.session.id = session,
        jsonrpc.request.id = id,
        gen_ai.tool.name = m.tool,
        gen_ai.operation.name = operation,
        network.transport = transport.as_str(),
        network.protocol.name = transport.protocol(),
        portcullis.upstream = upstream,
        http.response.status_code = Empty,
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
pub(super) fn hashed(id: &[u8]) -> String {
    Sha256::digest(id).iter().take(16).map(|b| format!("{b:02x}")).collect()
}

pub(super) fn bounded(s: &str) -> &str {
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
    fn off_makes_no_span_on_any_transport() {
        // Nothing in the lib tests starts the pipeline.
        assert!(!on());
        for body in [&br#"{"method":"tools/call"}"#[..], br#"[{"method":"ping","id":1}]"#] {
            let mut req = http::Request::new(Bytes::copy_from_slice(body));
            let spans = exchange(&mut req, "u", ExchangeKind::Mcp);
            assert!(spans.span.is_none() && spans.members.is_empty());
            assert!(req.extensions().get::<Exchange>().is_none());
            assert!(stdio(body, "u").is_none());
        }
        let mut req = http::Request::new(Bytes::new());
        assert!(exchange(&mut req, "u", ExchangeKind::Stream).is_none());
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
