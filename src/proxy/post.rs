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
use super::route::{Route, RouteKind};
use super::sse_body::{Coverage, Exchange, Replier, SseGate};
use super::watch::PostWatch;
use super::{full, BoxError, Req, Resp};
use crate::gate::post::{adopt, inspect_from_upstream, Envelope, Release, Watched};
use crate::gate::{CallOutcome, PostOutcome};
use crate::runtime::Shared;

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

/// Answers to refused server requests go back to the upstream on the request's own route and
/// session headers (a POST of the JSON-RPC error), in the background.
fn replier<S>(inner: &S, req: &Req) -> Option<Replier>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
{
    let route = req.extensions().get::<Route>()?.clone();
    let uri = req.uri().clone();
    let mut headers = req.headers().clone();
    // A response names no method: routing headers of the 2026-07-28 era would contradict it.
    headers.remove(crate::mcp::era::HEADER_METHOD);
    headers.remove(crate::mcp::era::HEADER_NAME);
    headers.remove(CONTENT_LENGTH);
    headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    let inner = inner.clone();
    Some(Arc::new(move |body: Vec<u8>| {
        let len = http::HeaderValue::from(body.len());
        let mut r = http::Request::new(Bytes::from(body));
        *r.method_mut() = http::Method::POST;
        *r.uri_mut() = uri.clone();
        *r.headers_mut() = headers.clone();
        r.headers_mut().insert(CONTENT_LENGTH, len);
        r.extensions_mut().insert(route.clone());
        let inner = inner.clone();
        tokio::spawn(async move {
            if let Err(e) = tower::ServiceExt::oneshot(inner, r).await {
                tracing::debug!(error = %e, "could not answer a refused server request");
            }
        });
    }))
}

impl<S> Service<Req> for PostGate<S>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + Sync + 'static,
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
        // The snapshot the pre gate decided under (a request it did not decide loads its own).
        let guard = match req.extensions_mut().remove::<super::watch::Snapshot>() {
            Some(s) => s.0,
            None => self.shared.guard.load_full(),
        };
        let session = super::caller::session_of(&req);
        let agent = req.extensions().get::<Arc<crate::identity::Agent>>().cloned();
        let mcp_upstream = req
            .extensions()
            .get::<Route>()
            .filter(|r| r.kind == RouteKind::Mcp)
            .map(|r| r.target.name.clone());
        // Every stream of a session is checked against the session's watched calls; with
        // nothing inspected in results (no guardrails, no redact list) nothing is looked up.
        // Tool lists are screened wherever their answer turns up, results or not.
        // Asked only of a request in a session (an agent's lists filter is two map lookups).
        let inspected =
            || guard.inspects_results() || guard.screens_tools() || guard.lists_filtered(agent.as_deref());
        // Without a session, the caller's own pending calls are kept the same way, under its
        // principal (an agent, else the address it calls from), while some result of its upstream
        // may be inspected (an upstream no rule reads a result of is relayed as before): a
        // client routes an answer by its id whichever POST carried it, so an answer a stateless
        // server puts on another call's POST is judged as the call it names (red team R10-1,
        // R10-2). Anonymous callers at one address share the table: an id they both use is
        // judged as one of their calls.
        let table = match &session {
            Some(s) => Some(s.clone()),
            None if mcp_upstream.as_deref().is_some_and(|u| guard.inspects_results_on(u)) => {
                super::caller::principal_named(&req)
                    .map(|p| format!("caller:{}", crate::call::budget_key(&p)))
            }
            None => None,
        };
        let calls = match (&mcp_upstream, &table) {
            (Some(up), Some(s)) if *req.method() == http::Method::DELETE && session.is_some() => {
                self.shared.sessions.forget_calls(up, s);
                None
            }
            (Some(up), Some(s)) if session.is_none() || inspected() => {
                Some(self.shared.sessions.calls(up, s))
            }
            _ => None,
        };
        // Whether this exchange's answer is held at all: only when something reads it — a call's
        // result inspected, a server message judged. Any MCP answer (of a session, or of a
        // caller's session-less POSTs) may carry another of its calls' answers, including a call
        // sent after this answer's headers came, and a GET stream may replay any call's result:
        // those are held whenever results are inspected. (Before R10-1 a session-less POST whose
        // own call no rule read was relayed unparsed, and another call's answer rode on it.)
        let holds = (calls.is_some() && guard.inspects_results())
            || match &watch {
                Some(PostWatch::Mcp { watched, upstream, .. }) => {
                    guard.holds_answers(upstream, watched.calls().map(|(_, c)| c))
                }
                Some(PostWatch::Resumed { .. }) => guard.inspects_results(),
                Some(PostWatch::Http { call }) => guard.inspects_result_of(call),
                None => mcp_upstream.as_deref().is_some_and(|up| guard.holds_answers(up, std::iter::empty())),
            };
        if let (Some(PostWatch::Mcp { watched, .. }), Some(calls)) = (&watch, &calls) {
            // Before the request is sent: its answer cannot come before its watch.
            for (id, call) in watched.calls() {
                calls.watch(id.clone(), call.clone());
            }
            for (id, lister) in watched.lists() {
                calls.watch_list(id.clone(), lister.agent.clone());
            }
        }
        let replier = match &mcp_upstream {
            Some(_) if holds => replier(&self.inner, &req),
            _ => None,
        };
        let trace =
            crate::telemetry::otel::Exchange(crate::telemetry::otel::spans::exchange_of(req.extensions()));
        let fut = self.inner.call(req);
        let shared = self.shared.clone();
        let watch = match (watch, mcp_upstream, &calls) {
            (Some(w), _, _) => w,
            // A request that watches nothing (a ping, a notification, a list) still gets an
            // answer stream the upstream may put a watched call's answer on.
            (None, Some(upstream), Some(_)) => PostWatch::Mcp {
                watched: Watched::counting(shared.counter().cloned()),
                upstream,
                era: crate::mcp::era::Era::Legacy,
            },
            (None, _, _) => return Box::pin(fut),
        };
        Box::pin(async move {
            let resp = fut.await?;
            match watch {
                PostWatch::Mcp { watched, upstream, .. } => {
                    let ex = Exchange { upstream, session, agent, calls, replier, trace };
                    mcp(resp, watched, Coverage::Watched, shared, guard, ex, holds).await
                }
                PostWatch::Resumed { upstream } => {
                    let ex = Exchange { upstream, session, agent, calls, replier, trace };
                    let watched = Watched::counting(shared.counter().cloned());
                    mcp(resp, watched, Coverage::AllResponses, shared, guard, ex, holds).await
                }
                PostWatch::Http { call } => http_tool(resp, call, shared, guard, holds).await,
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
    scope: Coverage,
    shared: Arc<Shared>,
    guard: Arc<crate::gate::Guard>,
    exchange: Exchange,
    holds: bool,
) -> Result<Resp, BoxError> {
    // The initialize answer names the session; later requests carry it.
    let session = resp
        .headers()
        .get(&super::caller::SESSION)
        .and_then(|v| v.to_str().ok())
        .map(|id| crate::session::key(id, exchange.agent.as_deref()))
        .or(exchange.session.clone());
    let Exchange { upstream, calls, replier, .. } = exchange.clone();
    // Fast path: nothing to inspect in results and no version to learn — relay the answer as it
    // streams, without holding or parsing it.
    // A session's pending tool list may be answered on any of its streams.
    let lists_pending = calls.as_ref().is_some_and(|c| c.is_active());
    if !holds && !watched.has_initialize() && !lists_pending {
        if resp.status().is_success() {
            watched.settle_calls(CallOutcome::Forwarded);
        }
        // A call's place at once (`limits.per_agent`) is held until its answer is through.
        if guard.limits().holds_places() {
            return Ok(super::held::holding(resp, watched));
        }
        return Ok(resp);
    }
    // Below, a call still watched when `watched` is dropped got no answer: counted as failed.
    if encoded(&resp) {
        return Err(uninspectable(&upstream, "the answer is compressed"));
    }
    // A GET's body is read as an event stream by the TS SDK whatever its type says (it checks
    // the status only): framed and judged as one, never relayed because its label says JSON.
    let stream = scope == Coverage::AllResponses || matches!(body_kind(&resp), BodyKind::EventStream);
    match stream {
        true => {
            let (mut parts, body) = resp.into_parts();
            parts.headers.remove(CONTENT_LENGTH);
            let gate = SseGate::new(body, watched, scope, shared, Exchange { session, ..exchange });
            Ok(Resp::from_parts(parts, gate.boxed_unsync()))
        }
        // JSON — or anything else a lenient client might still parse as JSON, at any status.
        false => {
            let (mut parts, bytes) = read_bounded(resp, shared.limits.max_response, upstream.clone()).await?;
            let text = String::from_utf8_lossy(&bytes);
            let answer = Envelope::parse(&text);
            if let Some(calls) = &calls {
                adopt(&answer, &mut watched, calls, None, &guard);
            }
            let inspection = inspect_from_upstream(&answer, &mut watched, &guard, &upstream).await;
            drop(answer);
            for seen in inspection.seen {
                shared.saw(seen, session.as_deref());
            }
            for reply in inspection.replies {
                if let Some(send) = &replier {
                    send(reply);
                }
            }
            let body = match inspection.release {
                Release::Unchanged => bytes,
                Release::Rewritten(new) => Bytes::from(new),
                Release::Dropped => {
                    crate::gate::post::server::count_dropped(&upstream, shared.counter());
                    parts.headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                    let answer = withheld_answer(&mut watched, &upstream);
                    if answer.is_empty() {
                        parts.status = http::StatusCode::ACCEPTED;
                    }
                    Bytes::from(answer)
                }
                Release::Withheld => {
                    tracing::warn!(%upstream, "withheld a malformed answer");
                    parts.headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                    let answer = withheld_answer(&mut watched, &upstream);
                    if answer.is_empty() {
                        parts.status = http::StatusCode::ACCEPTED;
                    }
                    Bytes::from(answer)
                }
            };
            Ok(Resp::from_parts(parts, full(body)))
        }
    }
}

/// JSON-RPC errors for every call whose answer was withheld, as one JSON body.
fn withheld_answer(watched: &mut Watched, upstream: &str) -> Vec<u8> {
    let why = crate::says::Said::MalformedAnswer { upstream }.to_string();
    let errors = crate::gate::post::withheld_answers(watched, &why);
    match errors.len() {
        0 => Vec::new(),
        1 => errors.into_iter().next().unwrap_or_default(),
        _ => {
            let mut out = b"[".to_vec();
            out.extend(errors.join(&b","[..]));
            out.push(b']');
            out
        }
    }
}

/// A plain HTTP tool's answer; `call` is counted as it is dropped here (failed, unless settled).
async fn http_tool(
    resp: Resp,
    mut call: crate::gate::tally::Counted,
    shared: Arc<Shared>,
    guard: Arc<crate::gate::Guard>,
    holds: bool,
) -> Result<Resp, BoxError> {
    // A redirect is a fetch the client makes next: where it points meets egress first.
    if let Some(refused) = redirect_refused(&resp, &call, &guard) {
        call.settle(CallOutcome::Blocked);
        return Ok(refused);
    }
    if !holds {
        call.settle(CallOutcome::Forwarded);
        if guard.limits().holds_places() {
            return Ok(super::held::holding(resp, call));
        }
        return Ok(resp);
    }
    if encoded(&resp) {
        return Err(uninspectable(&call.upstream, "the answer is compressed"));
    }
    let kind = body_kind(&resp);
    let (mut parts, bytes) = read_bounded(resp, shared.limits.max_response, call.upstream.clone()).await?;
    // The result as a value: JSON as is; anything else — text, JSON that does not parse (or
    // has bytes after it), a body whose content type lies, bytes that are not UTF-8 — as the
    // text a client would read, decoded lossily. Nothing covered is released unjudged.
    let mut value = match kind {
        BodyKind::Json => serde_json::from_slice::<serde_json::Value>(&bytes).ok(),
        _ => None,
    }
    .unwrap_or_else(|| serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    // The audit line's latency, as for an MCP result: the time the post gate held the answer.
    let started = std::time::Instant::now();
    let refusal = |reason: &str| serde_json::json!({ "error": { "kind": "blocked", "message": reason } });
    let outcome = guard.result_outcome(&call, &mut value, refusal).await;
    {
        match outcome {
            PostOutcome::Pass | PostOutcome::Rewritten { .. } => {}
            o @ (PostOutcome::Blocked | PostOutcome::Unavailable) => {
                parts.status = http::StatusCode::FORBIDDEN;
                parts.headers.insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
                let decision = if o == PostOutcome::Blocked { "block" } else { "unchecked" };
                parts.headers.insert("x-portcullis-decision", http::HeaderValue::from_static(decision));
            }
        }
    }
    call.settle(outcome.into());
    let label = CallOutcome::from(outcome).into();
    guard.audit().call(crate::audit::Stage::Post, &call, label, None, None, Some(&value), started.elapsed());
    let body = match (outcome, value) {
        (PostOutcome::Pass, _) => bytes,
        (_, serde_json::Value::String(t)) => Bytes::from(t),
        (_, v) => Bytes::from(v.to_string()),
    };
    Ok(Resp::from_parts(parts, full(body)))
}

/// A 3xx answer whose `Location` egress refuses, replaced by a refusal. Egress resolves the
/// Location as the client would (relative, scheme-relative, backslashed, tab-split) and withholds
/// one that does not resolve.
fn redirect_refused(resp: &Resp, call: &crate::call::ToolCall, guard: &crate::gate::Guard) -> Option<Resp> {
    if !resp.status().is_redirection() {
        return None;
    }
    let location =
        String::from_utf8_lossy(resp.headers().get(http::header::LOCATION)?.as_bytes()).into_owned();
    let d = guard.redirect_refusal(call, &location)?;
    let why = format!("it redirects where egress refuses: {} (rule {})", d.reason, d.rule);
    let message = crate::says::Said::AnswerWithheld { why: &why }.to_string();
    let body = serde_json::json!({ "error": { "kind": "blocked", "message": message } }).to_string();
    let mut out = Resp::new(full(Bytes::from(body)));
    *out.status_mut() = http::StatusCode::FORBIDDEN;
    out.headers_mut().insert(CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    out.headers_mut().insert("x-portcullis-decision", http::HeaderValue::from_static("block"));
    Some(out)
}
