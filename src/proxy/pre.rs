//! The pre-call gate for HTTP: parses the (already bounded) body once, checks the MCP routing
//! headers, asks the [`Guard`](crate::gate::Guard), and either answers itself or forwards with a
//! [`PostWatch`] telling the post layer what to inspect.
//!
//! Parsing lives here rather than in a separate codec layer because the parsed message borrows
//! from the body: splitting the two would mean parsing twice or copying every message.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::value::RawValue;
use tower::{Layer, Service};
use tracing::Instrument;

use super::caller::{
    agent_of, mode_of, opened_by_another, principal_of, session_key, session_of, SessionKey,
};
use super::error::{ErrorKind, ProxyError};
use super::route::{Route, RouteKind};
pub use super::watch::{PostWatch, Snapshot};
use super::{json_response, BoxError, Req, Resp};
use crate::call::ToolCall;
use crate::gate::pre::typed::{decide_typed, CallPlan};
use crate::gate::pre::{decide_to_forward, Context as GateContext, Plan};
use crate::gate::CallOutcome;
use crate::mcp::era::{self, check_request, Era};
use crate::mcp::jsonrpc::{self, code, Payload};
use crate::runtime::Shared;
use crate::telemetry::otel;

#[derive(Clone)]
pub struct PreGateLayer {
    shared: Arc<Shared>,
}

impl PreGateLayer {
    pub fn new(shared: Arc<Shared>) -> Self {
        PreGateLayer { shared }
    }
}

impl<S> Layer<S> for PreGateLayer {
    type Service = PreGate<S>;
    fn layer(&self, inner: S) -> Self::Service {
        PreGate { inner, shared: self.shared.clone() }
    }
}

#[derive(Clone)]
pub struct PreGate<S> {
    inner: S,
    shared: Arc<Shared>,
}

type BoxFut = Pin<Box<dyn Future<Output = Result<Resp, BoxError>> + Send>>;

impl<S> Service<Req> for PreGate<S>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = BoxError;
    type Future = BoxFut;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Req) -> BoxFut {
        let Some(route) = req.extensions().get::<Route>().cloned() else {
            return Box::pin(std::future::ready(Err(ProxyError::new(ErrorKind::Internal(
                "request reached the gate without a route".into(),
            ))
            .into())));
        };
        let upstream = route.target.name.clone();
        // Keyed once per request (a bound id is a digest): the gates after this read it back.
        let key = session_key(&req);
        req.extensions_mut().insert(SessionKey(key));
        if matches!(route.kind, RouteKind::Mcp) && opened_by_another(&req, &self.shared) {
            let b = jsonrpc::error_response(None, code::INVALID_REQUEST, "Session not found");
            return Box::pin(std::future::ready(Ok(json_response(StatusCode::NOT_FOUND, b))));
        }
        match (&route.kind, req.method().clone()) {
            (RouteKind::Mcp, Method::POST) => self.mcp_post(req, upstream),
            (RouteKind::Mcp, Method::DELETE) => {
                if let Some(s) = session_of(&req) {
                    self.shared.sessions.forget(&s);
                }
                Box::pin(self.inner.call(req))
            }
            (RouteKind::Mcp, _) => {
                let span = otel::exchange(&mut req, &upstream, otel::ExchangeKind::Stream);
                req.extensions_mut().insert(PostWatch::Resumed { upstream });
                // The session's POSTs wait until the upstream has attached this stream.
                let opening = self.shared.stream_order.opening(session_of(&req).as_deref());
                let response = self.inner.call(req);
                Box::pin(otel::spans::traced(span, async move {
                    let response = response.await;
                    drop(opening);
                    response
                }))
            }
            (RouteKind::Http { path_and_query }, _) => {
                let path = path_and_query.split('?').next().unwrap_or("").to_owned();
                self.http_tool(req, upstream, &path)
            }
        }
    }
}

impl<S> PreGate<S>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    fn mcp_post(&mut self, mut req: Req, upstream: Arc<str>) -> BoxFut {
        let span = otel::exchange(&mut req, &upstream, otel::ExchangeKind::Mcp);
        let shared = self.shared.clone();
        // The inner service is cloned into the future, which decides before calling it (a
        // Layer 2 check may take a model round trip); `poll_ready` was called on `self.inner`,
        // so that one is the one used, and the clone is left behind for the next request.
        let inner = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, inner);
        let exchange = mcp_post(inner, shared, req, upstream);
        // Untraced, the exchange is boxed as it is: wrapping it would copy it once more.
        match span.is_untraced() {
            true => Box::pin(exchange),
            false => Box::pin(otel::spans::traced(span, exchange)),
        }
    }

    fn http_tool(&mut self, mut req: Req, upstream: Arc<str>, path: &str) -> BoxFut {
        let span = otel::exchange(&mut req, &upstream, otel::ExchangeKind::Http { path });
        let shared = self.shared.clone();
        let inner = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, inner);
        let exchange = http_tool(inner, shared, req, upstream, path.to_owned());
        match span.is_untraced() {
            true => Box::pin(exchange),
            false => Box::pin(otel::spans::traced(span, exchange)),
        }
    }
}

/// The pre gate for one MCP POST: parse, check the routing headers, decide (awaiting any Layer 2
/// check), then answer or forward.
async fn mcp_post<S>(
    inner: S,
    shared: Arc<Shared>,
    mut req: Req,
    upstream: Arc<str>,
) -> Result<Resp, BoxError>
where
    S: Service<Req, Response = Resp, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    let body = req.body().clone();
    let payload = match jsonrpc::parse(&body) {
        Ok(p) => p,
        Err(e) => {
            let b = jsonrpc::error_response(None, e.code(), &e.to_string());
            return Ok(json_response(StatusCode::BAD_REQUEST, b));
        }
    };
    // A method a lenient server could read as a known one is never forwarded undecided.
    if let Some(b) = crate::mcp::method::refusal(&payload) {
        return Ok(json_response(StatusCode::BAD_REQUEST, b));
    }
    let session = session_of(&req);
    if let Payload::Single(msg) = &payload {
        // The client's answer to the proxy's own elicitation: taken here, never forwarded.
        if shared.approvals.elicitations.is_ours(msg) {
            let answered = shared.approvals.elicitations.answer(msg, session.as_deref());
            tracing::debug!(?answered, "the client answered an approval elicitation");
            let mut resp = Resp::new(super::full(Bytes::new()));
            *resp.status_mut() = StatusCode::ACCEPTED;
            return Ok(resp);
        }
    }
    let era = match &payload {
        Payload::Single(msg) => match check_request(req.headers(), msg) {
            Ok(e) => e.era,
            Err(mismatch) => {
                let b = jsonrpc::error_response(msg.id, code::HEADER_MISMATCH, &mismatch.to_string());
                return Ok(json_response(StatusCode::BAD_REQUEST, b));
            }
        },
        Payload::Batch(_) => {
            // Routing headers name one message; on a batch they cannot be true of all.
            if req.headers().contains_key(era::HEADER_METHOD) || req.headers().contains_key(era::HEADER_NAME)
            {
                let b = jsonrpc::error_response(
                    None,
                    code::HEADER_MISMATCH,
                    "routing headers cannot describe a batch",
                );
                return Ok(json_response(StatusCode::BAD_REQUEST, b));
            }
            Era::Legacy
        }
    };
    let (negotiated, elicits) = session.as_deref().map_or((None, false), |s| shared.sessions.get(s));
    let principal = principal_of(&req, &shared);
    let agent = agent_of(&req);
    let cx = GateContext {
        upstream: &upstream,
        agent: agent.as_ref(),
        era,
        negotiated,
        session: session.as_deref(),
        approvals: &shared.approvals,
        elicits,
        principal: principal.as_deref(),
        counter: shared.counter(),
        explain: false,
        mode: mode_of(&req),
    };
    let guard = shared.guard.load_full();
    let decision = decide_to_forward(&body, &payload, &cx, &guard).await;
    // The post layer inspects the answer under the same snapshot.
    req.extensions_mut().insert(Snapshot(guard.clone()));
    // One span per tool call (session, tool, outcome): whatever is logged while it is forwarded,
    // held or answered carries them, and JSON logs close it with a line of its own.
    let span = call_span(&decision, session.as_deref(), agent.as_deref());
    let _entered = span.enter();
    let watched = match decision {
        Plan::Refuse(r) => {
            // Each refused call is counted as `r` is dropped.
            for call in &r.calls {
                span.record("outcome", call.outcome().as_str());
            }
            let status = if r.invalid { StatusCode::BAD_REQUEST } else { StatusCode::OK };
            return Ok(json_response(status, r.body));
        }
        Plan::Forward(w) => w,
        Plan::Rewrite(w, body) => {
            let id = match &payload {
                Payload::Single(m) => m.id.map(RawValue::to_owned),
                Payload::Batch(_) => None,
            };
            drop(payload);
            // Held secrets go in after every check, as the last step before forwarding.
            *req.body_mut() = Bytes::from(guard.unmask_payload(&upstream, era, &body).unwrap_or(body));
            let len = http::HeaderValue::from(req.body().len());
            req.headers_mut().insert(http::header::CONTENT_LENGTH, len);
            drop(_entered);
            shared.stream_order.settled(session.as_deref()).await;
            return forward(inner, req, upstream, era, w, id).instrument(span).await;
        }
        Plan::Ask(pending) => {
            drop(payload);
            span.record("outcome", crate::outcome::Recorded::Asked.as_str());
            return Ok(super::parked::respond(inner, shared, req, pending, upstream, era));
        }
    };
    // Upstream failures answer the request's own id.
    let id = match &payload {
        Payload::Single(m) => m.id.map(RawValue::to_owned),
        Payload::Batch(_) => None,
    };
    // The client opens its GET stream as soon as this is accepted; see stream_order.
    let initialized =
        matches!(&payload, Payload::Single(m) if m.method() == Some("notifications/initialized"));
    drop(payload);
    // Held secrets go in after every check, as the last step before forwarding.
    if let Some(body) = guard.unmask_payload(&upstream, era, req.body()) {
        let len = http::HeaderValue::from(body.len());
        *req.body_mut() = Bytes::from(body);
        req.headers_mut().insert(http::header::CONTENT_LENGTH, len);
    }
    drop(_entered);
    shared.stream_order.settled(session.as_deref()).await;
    let answer = forward(inner, req, upstream, era, watched, id).instrument(span).await;
    if initialized {
        shared.stream_order.expect_get(session.as_deref());
    }
    answer
}

/// The span of a decision about exactly one tool call (none for other requests and batches).
fn call_span(
    decision: &Plan,
    session: Option<&str>,
    agent: Option<&crate::identity::Agent>,
) -> tracing::Span {
    // Logging below info (the benchmarks' `warn`): no span, and no names copied to make one.
    // The global level, not `enabled!`: that asks every per-layer filter and, when no span
    // follows, leaves their answers behind for the next span made on this thread (the trace
    // layer then misses it: an upstream call's span was lost that way).
    if tracing::level_filters::LevelFilter::current() < tracing::Level::INFO {
        return tracing::Span::none();
    }
    let tool = match decision {
        Plan::Forward(w) | Plan::Rewrite(w, _) => {
            let mut calls = w.calls();
            match (calls.next(), calls.next()) {
                (Some((_, call)), None) => Some(call.qualified.clone()),
                _ => None,
            }
        }
        Plan::Refuse(r) if r.calls.len() == 1 => Some(r.calls[0].qualified.clone()),
        Plan::Refuse(_) => None,
        Plan::Ask(p) => Some(p.call().qualified.clone()),
    };
    match tool {
        Some(tool) => tracing::info_span!(
            "tool_call",
            session = session.unwrap_or("-"),
            agent = agent.map_or("-", |a| &*a.id),
            %tool,
            outcome = tracing::field::Empty
        ),
        None => tracing::Span::none(),
    }
}

/// Sends a decided request on, watching `watched`; an upstream failure answers `id` (the watched
/// calls, dropped with the request, are counted as failed).
async fn forward<S>(
    mut inner: S,
    mut req: Req,
    upstream: Arc<str>,
    era: Era,
    watched: crate::gate::post::Watched,
    id: Option<Box<RawValue>>,
) -> Result<Resp, BoxError>
where
    S: Service<Req, Response = Resp, Error = BoxError>,
{
    if !watched.is_empty() {
        req.extensions_mut().insert(PostWatch::Mcp { watched, upstream, era });
    }
    inner.call(req).await.map_err(|e| match e.downcast::<ProxyError>() {
        Ok(pe) => Box::new(pe.with_id(id)) as BoxError,
        Err(other) => other,
    })
}

/// The pre gate for a plain HTTP tool call: the body is the call's arguments.
async fn http_tool<S>(
    mut inner: S,
    shared: Arc<Shared>,
    mut req: Req,
    upstream: Arc<str>,
    path: String,
) -> Result<Resp, BoxError>
where
    S: Service<Req, Response = Resp, Error = BoxError>,
{
    let body = req.body();
    let args = if body.is_empty() {
        None
    } else {
        // JSON as is, anything else as a JSON string.
        serde_json::from_slice::<Box<RawValue>>(body)
            .ok()
            .or_else(|| serde_json::value::to_raw_value(&String::from_utf8_lossy(body)).ok())
    };
    let principal = principal_of(&req, &shared);
    let session = session_of(&req);
    // The user's task is for the checker; the upstream client strips it (upstream.rs).
    let task =
        req.headers().get(crate::call::TASK_HEADER).and_then(|v| std::str::from_utf8(v.as_bytes()).ok());
    let call = ToolCall::http(upstream.clone(), &path, args)
        .with_task(task)
        .with_user_task(shared.approvals.user_tasks.get(session.as_deref()))
        .with_mode(mode_of(&req))
        .with_session(session.clone())
        .with_caller(principal.as_deref())
        .with_agent(agent_of(&req));
    let agent = call.agent.clone();
    let cx = GateContext {
        upstream: &upstream,
        agent: agent.as_ref(),
        era: Era::Legacy,
        negotiated: None,
        session: session.as_deref(),
        approvals: &shared.approvals,
        elicits: false,
        principal: principal.as_deref(),
        counter: shared.counter(),
        explain: false,
        mode: call.mode,
    };
    let guard = shared.guard.load_full();
    let (call, denial) = match decide_typed(call, &cx, &guard).await {
        CallPlan::Forward(call, _) => (call, None),
        CallPlan::Refuse(call, d) => (call, Some(d)),
        // Held (the request stays open) until an operator decides or it times out; an agent
        // that hangs up drops this future, which withdraws the ask.
        CallPlan::Ask(asked) => {
            let resolution = shared.approvals.ask(asked.ask.clone()).await;
            asked.resolve(&resolution)
        }
    };
    match denial {
        // The refused call is counted as it is dropped here.
        Some(d) => {
            let (body, decision) = http_refusal(&d);
            // A rate limit is "not now", not "not this": 429, as HTTP clients expect.
            let status = match d.outcome {
                CallOutcome::RateLimited => StatusCode::TOO_MANY_REQUESTS,
                _ => StatusCode::FORBIDDEN,
            };
            let mut resp = json_response(status, body);
            resp.headers_mut().insert("x-portcullis-decision", http::HeaderValue::from_static(decision));
            Ok(resp)
        }
        // Counted when the post gate is done with the answer, or as failed if none comes.
        None => {
            // Held secrets go in after every check, as the last step before forwarding.
            if let Some(body) = guard.unmask_http(&call, req.body()) {
                let len = http::HeaderValue::from(body.len());
                *req.body_mut() = Bytes::from(body);
                req.headers_mut().insert(http::header::CONTENT_LENGTH, len);
            }
            req.extensions_mut().insert(PostWatch::Http { call });
            req.extensions_mut().insert(Snapshot(guard.clone()));
            inner.call(req).await
        }
    }
}

/// How a plain HTTP tool's refusal reads: a 403 (429 for a rate limit) whose JSON body says why,
/// and the `x-portcullis-decision` header's value.
pub fn http_refusal(d: &crate::gate::Denial) -> (String, &'static str) {
    let (kind, decision) = match d.outcome {
        CallOutcome::Blocked => ("blocked", "block"),
        CallOutcome::CheckerDown => ("unchecked", "unchecked"),
        CallOutcome::RateLimited => ("rate_limited", "rate_limited"),
        _ => ("denied", "deny"),
    };
    let body = serde_json::json!({ "error": { "kind": kind, "message": d.reason } });
    (body.to_string(), decision)
}
