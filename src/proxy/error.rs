//! Errors inside the stack, whose fault they are, and the rescue layer that turns every one of
//! them into a protocol-correct response. Denials are not errors: they never come through here.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::StatusCode;
use serde_json::value::RawValue;
use tower::{Layer, Service};

use super::{json_response, BoxError, Resp};
use crate::mcp::jsonrpc::{self, code};

/// Whose fault an error is: decides 4xx vs 5xx and what a breaker counts (after pingora).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Client,
    Upstream,
    Internal,
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    #[error("no route: {0}")]
    NoRoute(String),
    #[error("method {0} is not served on this route")]
    Method(http::Method),
    #[error("request body exceeds the {limit}-byte limit")]
    BodyTooLarge { limit: usize },
    #[error("reading the request body failed")]
    ClientBody(#[source] BoxError),
    #[error("upstream {upstream} is unreachable")]
    Connect {
        upstream: String,
        #[source]
        source: BoxError,
    },
    #[error("upstream {upstream} did not answer within {secs:.1}s")]
    UpstreamTimeout { upstream: String, secs: f64 },
    #[error("upstream {upstream} failed")]
    Upstream {
        upstream: String,
        #[source]
        source: BoxError,
    },
    #[error("upstream {upstream} sent a result larger than {limit} bytes, too large to inspect")]
    ResultTooLarge { upstream: String, limit: usize },
    #[error("upstream {upstream} sent an answer portcullis cannot inspect ({why}); it was not released")]
    Uninspectable { upstream: String, why: String },
    /// The upstream answered 401/403 to a call that carried no credential of the agent's.
    #[error(transparent)]
    Unauthorized(crate::oauth::Refused),
    /// A proxy-held credential (client credentials) could not be obtained; nothing was sent.
    #[error(transparent)]
    Credential(crate::oauth::CredentialError),
    #[error("internal error")]
    Internal(#[source] BoxError),
}

/// An error with the JSON-RPC id it answers, when known.
#[derive(Debug, thiserror::Error)]
#[error("{kind}")]
pub struct ProxyError {
    pub kind: ErrorKind,
    pub id: Option<Box<RawValue>>,
}

impl ProxyError {
    pub fn new(kind: ErrorKind) -> Self {
        ProxyError { kind, id: None }
    }

    pub fn with_id(mut self, id: Option<Box<RawValue>>) -> Self {
        self.id = id;
        self
    }

    pub fn fault(&self) -> Fault {
        match self.kind {
            ErrorKind::NoRoute(_)
            | ErrorKind::Method(_)
            | ErrorKind::BodyTooLarge { .. }
            | ErrorKind::ClientBody(_) => Fault::Client,
            ErrorKind::Connect { .. }
            | ErrorKind::UpstreamTimeout { .. }
            | ErrorKind::Upstream { .. }
            | ErrorKind::ResultTooLarge { .. }
            | ErrorKind::Uninspectable { .. }
            | ErrorKind::Unauthorized(_)
            | ErrorKind::Credential(_) => Fault::Upstream,
            ErrorKind::Internal(_) => Fault::Internal,
        }
    }

    fn status(&self) -> StatusCode {
        match &self.kind {
            ErrorKind::NoRoute(_) => StatusCode::NOT_FOUND,
            ErrorKind::Method(_) => StatusCode::METHOD_NOT_ALLOWED,
            ErrorKind::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::ClientBody(_) => StatusCode::BAD_REQUEST,
            ErrorKind::UpstreamTimeout { .. } => StatusCode::GATEWAY_TIMEOUT,
            ErrorKind::Connect { .. }
            | ErrorKind::Upstream { .. }
            | ErrorKind::ResultTooLarge { .. }
            | ErrorKind::Uninspectable { .. }
            | ErrorKind::Unauthorized(_)
            | ErrorKind::Credential(_) => StatusCode::BAD_GATEWAY,
            ErrorKind::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn rpc_code(&self) -> i64 {
        match self.kind {
            ErrorKind::BodyTooLarge { .. } | ErrorKind::ClientBody(_) => code::INVALID_REQUEST,
            ErrorKind::UpstreamTimeout { .. } => code::UPSTREAM_TIMEOUT,
            ErrorKind::Connect { .. }
            | ErrorKind::Upstream { .. }
            | ErrorKind::ResultTooLarge { .. }
            | ErrorKind::Uninspectable { .. }
            | ErrorKind::Unauthorized(_)
            | ErrorKind::Credential(_) => code::UPSTREAM_ERROR,
            _ => code::INTERNAL_ERROR,
        }
    }

    /// The response for this error.
    ///
    /// An upstream failure answering a JSON-RPC request goes out as a JSON-RPC error over HTTP
    /// 200, so the client fails that one request and keeps its session. Everything else carries
    /// its HTTP status with a JSON-RPC error body (id null where unknown), as MCP asks for input
    /// a server cannot accept.
    /// The upstream and the `upstream_errors_total{kind}` label, for a failure of an upstream.
    pub fn upstream_failure(&self) -> Option<(&str, &'static str)> {
        match &self.kind {
            ErrorKind::Connect { upstream, .. } => Some((upstream, "connect")),
            ErrorKind::UpstreamTimeout { upstream, .. } => Some((upstream, "timeout")),
            ErrorKind::Upstream { upstream, .. } => Some((upstream, "failed")),
            ErrorKind::ResultTooLarge { upstream, .. } => Some((upstream, "too_large")),
            ErrorKind::Uninspectable { upstream, .. } => Some((upstream, "uninspectable")),
            ErrorKind::Unauthorized(r) => Some((r.upstream(), "unauthorized")),
            ErrorKind::Credential(c) => Some((&c.upstream, "credential")),
            _ => None,
        }
    }

    pub fn into_response(self) -> Resp {
        let status = match (self.fault(), &self.id) {
            (Fault::Upstream, Some(_)) => StatusCode::OK,
            _ => self.status(),
        };
        json_response(status, self.answer())
    }

    /// The JSON-RPC error message this error answers its request with (a parked call's stream
    /// carries it as an event, where no HTTP status can be set any more).
    pub fn answer(&self) -> bytes::Bytes {
        let message = error_chain(&self.kind);
        jsonrpc::error_response(self.id.as_deref(), self.rpc_code(), &message).into()
    }
}

/// `outer: inner: innermost`, so the agent learns *why* an upstream failed.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = inner.source();
    }
    s
}

/// Outermost layer: every error becomes a response; the service it makes cannot fail.
/// Answers every error as a response, counting the upstream's failures by kind.
#[derive(Debug, Clone, Default)]
pub struct RescueLayer {
    metrics: Option<std::sync::Arc<crate::telemetry::Metrics>>,
}

impl RescueLayer {
    pub fn new(metrics: std::sync::Arc<crate::telemetry::Metrics>) -> Self {
        RescueLayer { metrics: Some(metrics) }
    }
}

impl<S> Layer<S> for RescueLayer {
    type Service = Rescue<S>;
    fn layer(&self, inner: S) -> Rescue<S> {
        Rescue { inner, metrics: self.metrics.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct Rescue<S> {
    inner: S,
    metrics: Option<std::sync::Arc<crate::telemetry::Metrics>>,
}

impl<S, R> Service<R> for Rescue<S>
where
    S: Service<R, Response = Resp, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = Infallible;
    type Future = Rescued<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A layer below that is not ready is waited for; a failed readiness is answered per
        // request, so report ready and let `call` surface the error.
        match self.inner.poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(_) => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, req: R) -> Self::Future {
        Rescued { fut: self.inner.call(req), metrics: self.metrics.clone() }
    }
}

pin_project_lite::pin_project! {
    /// The call below with its error answered (a future of its own rather than a boxed `async`
    /// block: one allocation fewer per request).
    pub struct Rescued<F> {
        #[pin]
        fut: F,
        metrics: Option<std::sync::Arc<crate::telemetry::Metrics>>,
    }
}

impl<F> Future for Rescued<F>
where
    F: Future<Output = Result<Resp, BoxError>>,
{
    type Output = Result<Resp, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        Poll::Ready(Ok(match std::task::ready!(this.fut.poll(cx)) {
            Ok(resp) => resp,
            Err(e) => {
                if let (Some(m), Some(pe)) = (&*this.metrics, e.downcast_ref::<ProxyError>()) {
                    if let Some((upstream, kind)) = pe.upstream_failure() {
                        m.upstream_error(upstream, kind);
                    }
                }
                rescue(e)
            }
        }))
    }
}

/// Maps any boxed error to a response.
pub fn rescue(e: BoxError) -> Resp {
    match e.downcast::<ProxyError>() {
        Ok(pe) => {
            if pe.fault() != Fault::Client {
                tracing::warn!(error = %error_chain(&pe.kind), fault = ?pe.fault(), "request failed");
            }
            pe.into_response()
        }
        Err(other) => {
            tracing::error!(error = %other, "unexpected error in the proxy stack");
            ProxyError::new(ErrorKind::Internal(other)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn body_json(resp: Resp) -> serde_json::Value {
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn upstream_failures_with_an_id_answer_over_200_with_a_jsonrpc_error() {
        let id = RawValue::from_string("4".into()).unwrap();
        let e = ProxyError::new(ErrorKind::Connect { upstream: "fs".into(), source: "refused".into() })
            .with_id(Some(id));
        let resp = e.into_response();
        assert_eq!(resp.status(), StatusCode::OK);
        let v = body_json(resp).await;
        assert_eq!(v["id"], 4);
        assert_eq!(v["error"]["code"], code::UPSTREAM_ERROR);
        assert!(v["error"]["message"].as_str().unwrap().contains("refused"));
    }

    #[tokio::test]
    async fn client_faults_keep_their_status() {
        let resp = ProxyError::new(ErrorKind::BodyTooLarge { limit: 10 }).into_response();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(body_json(resp).await["id"].is_null());
    }
}
