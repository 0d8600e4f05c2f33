//! A call parked for a human. The agent's POST is answered at once as an SSE stream. When the
//! client can elicit, the stream's first event is the proxy's own `elicitation/create` (its
//! answer comes back as a separate POST that the pre gate takes); otherwise an operator decides
//! at the admin API. While it waits the stream is kept alive — `notifications/progress` when the
//! call carried a progress token, SSE comments otherwise — so neither the client nor an
//! intermediary times it out. Once decided, the call is forwarded and the upstream's answer relayed on the same
//! stream — through the post gate like any other — or the refusal is sent. The agent hanging up
//! drops the wait, which withdraws the ask: nobody approves a call nobody waits for.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::StatusCode;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};

use super::watch::PostWatch;
use super::{BoxError, Req, Resp, Shared};
use crate::approval::{Resolution, Via};
use crate::gate::pre::Pending;
use crate::mcp::era::Era;
use crate::mcp::jsonrpc::{self, code};
use crate::mcp::sse;

type Tx = mpsc::Sender<Result<Frame<Bytes>, BoxError>>;

/// Answers `req` as a stream and decides it in the background.
pub fn respond<S>(
    inner: S,
    shared: Arc<Shared>,
    req: Req,
    pending: Box<Pending>,
    upstream: Arc<str>,
    era: Era,
) -> Resp
where
    S: Service<Req, Response = Resp, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    let (tx, rx) = mpsc::channel(16);
    tokio::spawn(decide(inner, shared, req, pending, upstream, era, tx));
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
    pending: Box<Pending>,
    upstream: Arc<str>,
    era: Era,
    tx: Tx,
) where
    S: Service<Req, Response = Resp, Error = BoxError>,
{
    let every = shared.approvals.keepalive();
    let resolution = match pending.via {
        Via::Operator => wait(shared.approvals.ask(pending.ask.clone()), &pending, every, &tx).await,
        Via::Client => {
            // `open` stays alive (registered) until the wait ends, then withdraws the id.
            let (open, reply) = shared.approvals.elicitations.open(pending.ask.session.as_deref());
            if !send(&tx, sse::message_event(&open.request(&pending.ask))).await {
                return;
            }
            let r = wait(shared.approvals.ask_client(&pending.ask, reply), &pending, every, &tx).await;
            drop(open);
            r
        }
    };
    let Some(resolution) = resolution else {
        tracing::info!(tool = %pending.ask.tool, "the agent went away; its ask is withdrawn");
        return;
    };
    let why = match resolution {
        Resolution::Allowed(d) => {
            tracing::info!(tool = %pending.ask.tool, decision = d.as_str(), "approved: forwarding");
            let id = pending.id().to_owned();
            let (call_upstream, tool) = (pending.call_upstream(), pending.ask.tool.clone());
            req.extensions_mut().insert(PostWatch::Mcp { watched: pending.allowed(), upstream, era });
            match inner.oneshot(req).await {
                Ok(resp) => relay(resp, &tx, shared.limits.max_response).await,
                Err(e) => {
                    // Counted here, as the pre layer counts a forwarded call's failure: the post
                    // layer, which counts every answer, never saw one.
                    shared.metrics.tool_call(&call_upstream, &tool, crate::gate::CallOutcome::Failed);
                    let body = jsonrpc::error_response(Some(&id), code::UPSTREAM_ERROR, &e.to_string());
                    send(&tx, sse::message_event(&String::from_utf8_lossy(&body))).await;
                }
            }
            return;
        }
        refused => match crate::gate::answer::refusal(&refused, pending.via) {
            Some(why) => why,
            None => unreachable!("only an allowed resolution is not a refusal"),
        },
    };
    let (body, tool, _) = pending.refused(why.0);
    shared.metrics.tool_call(&pending.call_upstream(), tool, why.1);
    send(&tx, sse::message_event(&String::from_utf8_lossy(&body))).await;
}

/// Waits for `decided`, keeping the stream alive; `None` when the agent hung up (which drops,
/// and so withdraws, the ask).
async fn wait(
    decided: impl std::future::Future<Output = Resolution>,
    pending: &Pending,
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
