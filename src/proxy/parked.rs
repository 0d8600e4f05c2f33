//! A call parked for a human. The agent's POST is answered at once as an SSE stream. When the
//! client can elicit, the stream's first event is the proxy's own `elicitation/create` (its
//! answer comes back as a separate POST that the pre gate takes); otherwise an operator decides
//! at the admin API. While it waits the stream is kept alive — `notifications/progress` when the
//! call carried a progress token, SSE comments otherwise — so neither the client nor an
//! intermediary times it out. Once decided, the call is forwarded and the upstream's answer relayed on the same
//! stream — through the post gate like any other — or the refusal is sent. The agent hanging up
//! drops the wait, which withdraws the ask: nobody approves a call nobody waits for.
//!
//! Bounded: at most `approvals.max_pending` asks wait for an operator, and as many elicitations
//! for their users (each table refuses beyond it: `approval::Parking`, `Elicitations`); the
//! stream holds the request's slot of the proxy's concurrency limit until it ends
//! ([`super::in_flight`]). Its outcome is counted once, when the call is done with
//! ([`crate::gate::tally`]); an upstream failure goes through the same error-to-answer mapping as
//! the rest of the stack ([`super::error`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::StatusCode;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};

use super::error::ProxyError;
use super::watch::PostWatch;
use super::{BoxError, Req, Resp};
use crate::approval::{Resolution, Via};
use crate::gate::pre::Held;
use crate::mcp::era::Era;
use crate::mcp::sse;
use crate::runtime::Shared;

type Tx = mpsc::Sender<Result<Frame<Bytes>, BoxError>>;

/// Answers `req` as a stream and decides it in the background.
pub fn respond<S>(
    inner: S,
    shared: Arc<Shared>,
    req: Req,
    pending: Box<Held>,
    upstream: Arc<str>,
    era: Era,
) -> Resp
where
    S: Service<Req, Response = Resp, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    let (tx, rx) = mpsc::channel(16);
    let exchange = crate::telemetry::otel::spans::exchange_of(req.extensions());
    tokio::spawn(tracing::Instrument::instrument(
        decide(inner, shared, req, pending, upstream, era, tx),
        exchange,
    ));
    let frames = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) });
    let mut resp = Resp::new(StreamBody::new(frames).boxed_unsync());
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(CONTENT_TYPE, http::HeaderValue::from_static("text/event-stream"));
    resp.headers_mut().insert(CACHE_CONTROL, http::HeaderValue::from_static("no-cache"));
    resp
}

async fn send(tx: &Tx, bytes: Bytes) -> bool {
    tx.send(Ok(Frame::data(bytes))).await.is_ok()
}

async fn decide<S>(
    inner: S,
    shared: Arc<Shared>,
    mut req: Req,
    mut pending: Box<Held>,
    upstream: Arc<str>,
    era: Era,
    tx: Tx,
) where
    S: Service<Req, Response = Resp, Error = BoxError>,
{
    let every = shared.approvals.keepalive();
    let resolution = match pending.via {
        Via::Operator => wait(shared.approvals.ask(pending.ask.clone()), &pending, every, &tx).await,
        Via::Client => match shared.approvals.open_elicitation(&pending.ask) {
            // `open` stays alive (registered) until the wait ends, then withdraws the id.
            Ok((open, reply)) => {
                if !send(&tx, sse::message_event(&open.request(&pending.ask))).await {
                    return;
                }
                let r = wait(shared.approvals.ask_client(&pending.ask, reply), &pending, every, &tx).await;
                drop(open);
                r
            }
            Err(overloaded) => Some(overloaded),
        },
    };
    let Some(resolution) = resolution else {
        tracing::info!(tool = %pending.ask.tool, "the agent went away; its ask is withdrawn");
        pending.withdraw();
        return;
    };
    let Some((why, outcome)) = crate::gate::answer::refusal(&resolution, pending.via) else {
        tracing::info!(tool = %pending.ask.tool, "approved: forwarding");
        let id = pending.id().to_owned();
        // Without the user's task, when it carried one (it is for the checker).
        if let Some(body) = pending.body.take() {
            let len = http::HeaderValue::from(body.len());
            *req.body_mut() = bytes::Bytes::from(body);
            req.headers_mut().insert(http::header::CONTENT_LENGTH, len);
        }
        // Held secrets go in after every check and the human's yes, the last step before
        // forwarding, under the policy snapshot the call was decided with.
        let guard = req.extensions().get::<super::watch::Snapshot>().map(|s| s.0.clone());
        let unmasked = guard.and_then(|g| g.unmask_payload(&upstream, era, req.body()));
        if let Some(body) = unmasked {
            let len = http::HeaderValue::from(body.len());
            *req.body_mut() = bytes::Bytes::from(body);
            req.headers_mut().insert(http::header::CONTENT_LENGTH, len);
        }
        // Forwarded under the slot the parked stream holds (taking a second one could wait
        // forever once every slot is a parked stream).
        req.extensions_mut().insert(PostWatch::Mcp { watched: pending.allowed(), upstream, era });
        // An upstream failure drops the watch, which counts the call as failed.
        match inner.oneshot(req).await {
            Ok(resp) => relay(resp, &tx, shared.limits.max_response).await,
            Err(e) => {
                let body = answer_error(&shared, e, id);
                send(&tx, sse::message_event(&String::from_utf8_lossy(&body))).await;
            }
        }
        return;
    };
    let (body, _counted) = pending.refused(why, Some(outcome));
    send(&tx, sse::message_event(&String::from_utf8_lossy(&body))).await;
}

/// The JSON-RPC error an upstream failure answers `id` with: the same code and words the rescue
/// layer gives (`-32002` for a timeout), counted in `upstream_errors_total` as it counts them.
fn answer_error(shared: &Shared, e: BoxError, id: Box<serde_json::value::RawValue>) -> Bytes {
    let pe = match e.downcast::<ProxyError>() {
        Ok(pe) => *pe,
        Err(other) => ProxyError::new(super::error::ErrorKind::Internal(other)),
    };
    if let Some((upstream, kind)) = pe.upstream_failure() {
        shared.metrics.upstream_error(upstream, kind);
    }
    pe.with_id(Some(id)).answer()
}

/// Waits for `decided`, keeping the stream alive; `None` when the agent hung up (which drops,
/// and so withdraws, the ask).
async fn wait(
    decided: impl std::future::Future<Output = Resolution>,
    pending: &Held,
    every: Duration,
    tx: &Tx,
) -> Option<Resolution> {
    tokio::pin!(decided);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut beats = 0u64;
    loop {
        tokio::select! {
            r = &mut decided => return Some(r),
            _ = tick.tick() => {
                beats += 1;
                let beat = match &pending.progress {
                    Some(token) => sse::message_event(&format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{},"progress":{beats},"message":"waiting for a human to approve this call"}}}}"#,
                        token.get()
                    )),
                    None => Bytes::from_static(b": waiting for a human to approve this call\n\n"),
                };
                if !send(tx, beat).await {
                    return None;
                }
            }
        }
    }
}

/// Relays the upstream's (already post-gated) answer onto the parked stream: SSE frame by frame,
/// JSON as one message event.
async fn relay(resp: Resp, tx: &Tx, limit: usize) {
    let is_sse = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let mut body = resp.into_body();
    if is_sse {
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(f) => {
                    if let Ok(data) = f.into_data() {
                        if !send(tx, data).await {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
        return;
    }
    // Collected by hand: `Limited` here trips rustc's higher-ranked `From` inference for Send.
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(f) => {
                if let Ok(data) = f.into_data() {
                    if buf.len() + data.len() > limit {
                        let _ =
                            tx.send(Err("the upstream's answer is over limits.max_response".into())).await;
                        return;
                    }
                    buf.extend_from_slice(&data);
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
        }
    }
    send(tx, sse::message_event(String::from_utf8_lossy(&buf).trim())).await;
}
