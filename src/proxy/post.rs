//! The post-call gate for HTTP: inspects the response to a forwarded request as the pre gate's
//! [`PostWatch`] asks. JSON answers are read whole (bounded) and released or rewritten; SSE
//! answers go through [`SseGate`]; everything else passes untouched.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http_body_util::BodyExt;
use tower::{Layer, Service};

use super::error::{ErrorKind, ProxyError};
use super::pre::PostWatch;
use super::sse_body::{Scope, SseGate};
use super::{full, BoxError, Req, Resp, Shared};
use crate::gate::post::{inspect, Release, Watch, Watched};
use crate::gate::{CallOutcome, PostOutcome};
use crate::mcp::era::HEADER_SESSION;
use crate::mcp::jsonrpc::{self, code};
use serde_json::value::RawValue;

#[derive(Clone)]
pub struct PostGateLayer {
    shared: Arc<Shared>,
}

impl PostGateLayer {
    pub fn new(shared: Arc<Shared>) -> Self {
        PostGateLayer { shared }
    }
}

impl<S> Layer<S> for PostGateLayer {
    type Service = PostGate<S>;
    fn layer(&self, inner: S) -> Self::Service {
        PostGate { inner, shared: self.shared.clone() }
    }
}

#[derive(Clone)]
pub struct PostGate<S> {
    inner: S,
    shared: Arc<Shared>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Json,
    EventStream,
    Other,
}

fn body_kind(resp: &Resp) -> BodyKind {
    let ct = resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => BodyKind::Json,
        "text/event-stream" => BodyKind::EventStream,
        _ if essence.ends_with("+json") => BodyKind::Json,
        _ => BodyKind::Other,
    }
}

impl<S> Service<Req> for PostGate<S>
where
    S: Service<Req, Response = Resp, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Req) -> Self::Future {
        let watch = req.extensions_mut().remove::<PostWatch>();
        let session = req.headers().get(HEADER_SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let fut = self.inner.call(req);
        let Some(watch) = watch else {
            return Box::pin(fut);
        };
        let shared = self.shared.clone();
        Box::pin(async move {
            let resp = fut.await?;
            match watch {
                PostWatch::Mcp { watched, upstream, .. } => {
                    mcp(resp, watched, Scope::Watched, shared, upstream, session).await
                }
                PostWatch::Resumed { upstream } => {
                    mcp(resp, Watched::default(), Scope::AllResponses, shared, upstream, session).await
                }
                PostWatch::Http { call } => http_tool(resp, call, shared).await,
            }
        })
    }
}

/// Reads a response body whole, refusing to hold more than `limit` bytes.
async fn read_bounded(
    resp: Resp,
    limit: usize,
    upstream: Arc<str>,
) -> Result<(http::response::Parts, Bytes), BoxError> {
    let (mut parts, mut body) = resp.into_parts();
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            ProxyError::new(ErrorKind::Upstream { upstream: upstream.to_string(), source: e })
        })?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(ProxyError::new(ErrorKind::ResultTooLarge {
                    upstream: upstream.to_string(),
                    limit,
                })
                .into());
            }
            buf.extend_from_slice(&data);
        }
    }
    parts.headers.remove(CONTENT_LENGTH);
    Ok((parts, buf.freeze()))
}

/// True when the body is compressed: the proxy asks upstreams for `identity`, so a compressed
/// answer is one it cannot read, and what it cannot read it does not release.
fn encoded(resp: &Resp) -> bool {
    resp.headers()
        .get(http::header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

fn uninspectable(upstream: &str, why: &str) -> BoxError {
    ProxyError::new(ErrorKind::Uninspectable { upstream: upstream.to_owned(), why: why.to_owned() }).into()
}

async fn mcp(
    resp: Resp,
    mut watched: Watched,
    scope: Scope,
    shared: Arc<Shared>,
    upstream: Arc<str>,
    session: Option<String>,
) -> Result<Resp, BoxError> {
    // The initialize answer names the session; later requests carry it.
    let session =
        resp.headers().get(HEADER_SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned).or(session);
    let fail_all = |watched: &Watched| {
        for tool in watched.call_names() {
            shared.metrics.tool_call(&upstream, &tool, CallOutcome::Failed);
        }
    };
    // Fast path: nothing to inspect in results and no version to learn — relay the answer as it
    // streams, without holding or parsing it.
    let guard = shared.guard.load_full();
    if !guard.inspects_results() && !watched.has_initialize() {
        let outcome = if resp.status().is_success() { CallOutcome::Forwarded } else { CallOutcome::Failed };
        for tool in watched.call_names() {
            shared.metrics.tool_call(&upstream, &tool, outcome);
        }
        return Ok(resp);
    }
    if encoded(&resp) {
        fail_all(&watched);
        return Err(uninspectable(&upstream, "the answer is compressed"));
    }
    match body_kind(&resp) {
        BodyKind::EventStream => {
            let (mut parts, body) = resp.into_parts();
            parts.headers.remove(CONTENT_LENGTH);
            let gate = SseGate::new(body, watched, scope, shared, upstream, session);
            Ok(Resp::from_parts(parts, gate.boxed_unsync()))
        }
        // A GET answered with something other than a stream replays nothing.
        _ if scope == Scope::AllResponses => Ok(resp),
        // JSON — or anything else a lenient client might still parse as JSON, at any status.
        _ => {
            let (mut parts, bytes) = read_bounded(resp, shared.limits.max_response, upstream.clone()).await?;
            let text = String::from_utf8_lossy(&bytes);
            let inspection = inspect(&text, &mut watched, &guard).await;
            for seen in inspection.seen {
                shared.saw(seen, &upstream, session.as_deref());
            }
            fail_all(&watched);
            let body = match inspection.release {
                Release::Unchanged => bytes,
                Release::Rewritten(new) => Bytes::from(new),
                Release::Withheld => {
                    tracing::warn!(%upstream, "withheld a malformed answer to a watched call");
                    parts.headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                    Bytes::from(withheld_answer(&mut watched, &upstream))
                }
            };
            Ok(Resp::from_parts(parts, full(body)))
        }
    }
}

/// JSON-RPC errors for every call whose answer was withheld.
fn withheld_answer(watched: &mut Watched, upstream: &str) -> Vec<u8> {
    let why = format!("portcullis withheld a malformed answer from upstream {upstream}");
    let errors: Vec<Vec<u8>> = watched
        .drain()
        .filter(|(_, w)| matches!(w, Watch::Call(_)))
        .map(|(id, _)| {
            let id = RawValue::from_string(id.as_raw().to_owned()).ok();
            jsonrpc::error_response(id.as_deref(), code::UPSTREAM_ERROR, &why)
        })
        .collect();
    match errors.len() {
        1 => errors.into_iter().next().unwrap_or_default(),
        _ => {
            let mut out = b"[".to_vec();
            out.extend(errors.join(&b","[..]));
            out.push(b']');
            out
        }
    }
}

async fn http_tool(resp: Resp, call: crate::call::ToolCall, shared: Arc<Shared>) -> Result<Resp, BoxError> {
    let guard = shared.guard.load_full();
    if !guard.inspects_results() {
        shared.metrics.tool_call(&call.upstream, &call.qualified, CallOutcome::Forwarded);
        return Ok(resp);
    }
    if encoded(&resp) {
        shared.metrics.tool_call(&call.upstream, &call.qualified, CallOutcome::Failed);
        return Err(uninspectable(&call.upstream, "the answer is compressed"));
    }
    let kind = body_kind(&resp);
    let (mut parts, bytes) = read_bounded(resp, shared.limits.max_response, call.upstream.clone()).await?;
    // The result as a value: JSON as is; text as a string (a binary body has no text to judge).
    let value = match kind {
        BodyKind::Json => serde_json::from_slice::<serde_json::Value>(&bytes).ok(),
        _ => std::str::from_utf8(&bytes).ok().map(|t| serde_json::Value::String(t.to_owned())),
    };
    let Some(mut value) = value else {
        shared.metrics.tool_call(&call.upstream, &call.qualified, CallOutcome::Forwarded);
        return Ok(Resp::from_parts(parts, full(bytes)));
    };
    let mut outcome = guard.post(&call, &mut value);
    if let Some(check) = guard.post_check(&call) {
        let refusal = |reason: &str| serde_json::json!({ "error": { "kind": "blocked", "message": reason } });
        match check.run(&call, &mut value, refusal).await {
            PostOutcome::Pass => {}
            o @ PostOutcome::Rewritten { .. } => outcome = o,
            o @ (PostOutcome::Blocked | PostOutcome::Unavailable) => {
                outcome = o;
                parts.status = http::StatusCode::FORBIDDEN;
                parts.headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                let decision = if o == PostOutcome::Blocked { "block" } else { "unchecked" };
                parts.headers.insert("x-portcullis-decision", http::HeaderValue::from_static(decision));
            }
        }
    }
    shared.metrics.tool_call(&call.upstream, &call.qualified, outcome.into());
    let label = CallOutcome::from(outcome).as_str();
    guard.audit().call(crate::audit::Phase::Post, &call, label, None, None, Some(&value), Default::default());
    let body = match (outcome, value) {
        (PostOutcome::Pass, _) => bytes,
        (_, serde_json::Value::String(t)) => Bytes::from(t),
        (_, v) => Bytes::from(v.to_string()),
    };
    Ok(Resp::from_parts(parts, full(body)))
}
